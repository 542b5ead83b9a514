"""The handoff dataclasses: validation, JSON round trips and the prompt rendering."""

import dataclasses
import json
import math
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from golden_files import Golden
from hypothesis import given
from hypothesis import strategies as st

from mindrian.handoff import (
    MIN_CLARITY,
    ConversationSummary,
    HandoffContext,
    HandoffMode,
    HandoffRecord,
    HandoffResult,
    HandoffType,
    PreviousAnalysis,
    ProblemClarity,
    ReturnBehavior,
)

GOLDEN = Path(__file__).parent / "golden"
FIXED_TIME = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)

SEED_CLARITY = {
    "what": "Customer churn is killing our SaaS business - we lose 15% of customers in first 90 "
    "days",
    "who": "B2B SaaS companies with <$1M ARR, self-serve onboarding",
    "success": "Reduce churn from 15% to 8%, increase trial-to-paid conversion by 20%",
    "what_clarity": 0.85,
    "who_clarity": 0.80,
    "success_clarity": 0.75,
}
SEED_CONVERSATION = {
    "user_goals": [
        "Validate anti-churn solution before building",
        "Get GO/NO-GO recommendation",
    ],
    "key_points": [
        "User has 3 years SaaS experience",
        "Budget is $50K for MVP",
        "Timeline is 6 months",
    ],
}


def make_context(**overrides) -> HandoffContext:
    """The seed 001 churn handoff, with fixed identity, overridable per test."""
    fields = {
        "handoff_id": "h-churn",
        "timestamp": FIXED_TIME,
        "from_agent": "larry",
        "to_agent": "pws-validation",
        "task_description": "Validate this opportunity using PWS methodology.",
        "problem_clarity": SEED_CLARITY,
        "conversation": SEED_CONVERSATION,
    }
    return HandoffContext(**{**fields, **overrides})


def json_round_trip(obj):
    return type(obj).from_dict(json.loads(json.dumps(obj.to_dict(), allow_nan=False)))


# --- seed field lists -----------------------------------------------------------

SEED_CONTEXT_FIELDS = """
    handoff_id timestamp problem_clarity conversation session_id previous_analyses
    task_description expected_output focus_areas ignore_areas from_agent to_agent return_to
    return_behavior handoff_type handoff_mode priority timeout_seconds
""".split()
SEED_RESULT_FIELDS = [
    *"""
    handoff_id from_agent to_agent success output output_format key_findings recommendations
    confidence scores suggested_next_agents open_questions needs_human_input human_input_reason
    duration_seconds error
    """.split(),
    "error_code",  # beyond the seed: what kind of failure, for callers to act on
    "data",  # beyond the seed: the answer shaped as the skill's output example
]


@pytest.mark.parametrize(
    ("cls", "names"),
    [(HandoffContext, SEED_CONTEXT_FIELDS), (HandoffResult, SEED_RESULT_FIELDS)],
)
def test_fields_are_those_of_seed_000(cls, names):
    assert [f.name for f in dataclasses.fields(cls)] == names


# --- ProblemClarity -------------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "overall", "ready"),
    [
        ((0.85, 0.80, 0.75), 0.8, True),
        ((MIN_CLARITY,) * 3, MIN_CLARITY, True),
        ((0.6, 0.6, 0.59), 0.5966666666666667, False),
        ((0.0, 0.0, 0.0), 0.0, False),
        ((1.0, 1.0, 0.0), 2 / 3, True),
        ((1, 0, 1), 2 / 3, True),
    ],
)
def test_overall_clarity_and_readiness(scores, overall, ready):
    clarity = ProblemClarity(
        what_clarity=scores[0], who_clarity=scores[1], success_clarity=scores[2]
    )
    assert clarity.overall_clarity == pytest.approx(overall)
    assert clarity.is_ready_for_analysis is ready


def test_min_clarity_is_the_seed_threshold():
    assert MIN_CLARITY == 0.6


@pytest.mark.parametrize(
    ("field", "value", "error", "message"),
    [
        ("what_clarity", 1.01, ValueError, "what_clarity must be between 0.0 and 1.0"),
        ("who_clarity", -0.1, ValueError, "who_clarity must be between 0.0 and 1.0"),
        (
            "success_clarity",
            85,
            ValueError,
            "success_clarity must be between 0.0 and 1.0",
        ),
        ("what_clarity", math.nan, ValueError, "what_clarity must be finite"),
        ("what_clarity", math.inf, ValueError, "what_clarity must be finite"),
        ("who_clarity", True, TypeError, "who_clarity must be a number"),
        ("who_clarity", "0.5", TypeError, "who_clarity must be a number"),
        ("what", 3, TypeError, "what must be a string"),
        (
            "assumptions",
            "one assumption",
            TypeError,
            "assumptions must be a sequence of strings",
        ),
        ("open_questions", [1], TypeError, "open_questions must contain only strings"),
    ],
)
def test_problem_clarity_validation(field, value, error, message):
    with pytest.raises(error, match=message):
        ProblemClarity(**{field: value})


def test_problem_clarity_turns_lists_into_tuples_and_ints_into_floats():
    clarity = ProblemClarity(what_clarity=1, assumptions=["a", "b"])
    assert clarity.assumptions == ("a", "b")
    assert type(clarity.what_clarity) is float


def test_from_dict_accepts_partial_data_and_rejects_unknown_keys():
    assert ProblemClarity.from_dict(
        {"what": "Pet translation", "who": "Pet owners"}
    ) == ProblemClarity(what="Pet translation", who="Pet owners")
    with pytest.raises(ValueError, match=r"ProblemClarity has no field.*: clarity, where"):
        ProblemClarity.from_dict({"where": "x", "clarity": 1.0})


# --- other validation -------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "error", "message"),
    [
        ({"timestamp": datetime(2025, 1, 1)}, ValueError, "timezone-aware"),
        ({"timestamp": "2025-01-01T00:00:00"}, ValueError, "timezone-aware"),
        ({"timestamp": 0}, TypeError, "timestamp must be a datetime"),
        ({"handoff_id": ""}, ValueError, "handoff_id must not be empty"),
        ({"to_agent": ""}, ValueError, "to_agent must not be empty"),
        ({"timeout_seconds": 0}, ValueError, "timeout_seconds must be positive"),
        ({"priority": 1.5}, TypeError, "priority must be an int"),
        (
            {"focus_areas": "pricing"},
            TypeError,
            "focus_areas must be a sequence of strings",
        ),
        ({"return_behavior": "shout"}, ValueError, "shout"),
        ({"previous_analyses": [{"summary": "no agent id"}]}, TypeError, "agent_id"),
        (
            {"problem_clarity": "clear"},
            TypeError,
            "problem_clarity must be a ProblemClarity or a mapping",
        ),
    ],
)
def test_context_validation(overrides, error, message):
    with pytest.raises(error, match=message):
        make_context(**overrides)


@pytest.mark.parametrize(
    ("overrides", "error", "message"),
    [
        ({"confidence": 1.5}, ValueError, "confidence must be between 0.0 and 1.0"),
        (
            {"output_format": "html"},
            ValueError,
            "output_format must be one of markdown, json, structured",
        ),
        (
            {"scores": {"problem": math.inf}},
            ValueError,
            r"scores\['problem'\] must be finite",
        ),
        ({"scores": {1: 2.0}}, TypeError, "scores keys must be strings"),
        (
            {"duration_seconds": -1.0},
            ValueError,
            "duration_seconds must not be negative",
        ),
        ({"success": "yes"}, TypeError, "success must be a bool"),
        ({"from_agent": ""}, ValueError, "from_agent must not be empty"),
    ],
)
def test_result_validation(overrides, error, message):
    fields = {
        "handoff_id": "h",
        "from_agent": "pws",
        "to_agent": "larry",
        "success": True,
    }
    with pytest.raises(error, match=message):
        HandoffResult(**{**fields, **overrides})


def test_return_to_defaults_to_the_sender():
    assert make_context().return_to == "larry"
    assert make_context(return_to="orchestrator").return_to == "orchestrator"


def test_default_identity_is_generated_and_aware():
    first, second = (
        HandoffContext(from_agent="a", to_agent="b", task_description="t"),
        HandoffContext(from_agent="a", to_agent="b", task_description="t"),
    )
    assert first.handoff_id != second.handoff_id
    assert first.timestamp.utcoffset() == timedelta(0)


def test_failure_helper_answers_the_context():
    result = HandoffResult.failure(make_context(return_to="boss"), "boom", 2.5)
    assert (result.handoff_id, result.from_agent, result.to_agent) == (
        "h-churn",
        "pws-validation",
        "boss",
    )
    assert (result.success, result.error, result.duration_seconds) == (
        False,
        "boom",
        2.5,
    )


def test_previous_analysis_from_result_keeps_the_findings():
    result = HandoffResult(
        handoff_id="h",
        from_agent="pws",
        to_agent="larry",
        success=True,
        output="# PWS Scorecard",
        key_findings=["Strong problem"],
        recommendations=["Hire CTO"],
        scores={"problem": 22},
        confidence=0.75,
    )
    assert PreviousAnalysis.from_result(result) == PreviousAnalysis(
        agent_id="pws",
        summary="# PWS Scorecard",
        key_findings=("Strong problem",),
        recommendations=("Hire CTO",),
        scores={"problem": 22.0},
        confidence=0.75,
    )


# --- JSON round trips -------------------------------------------------------------

texts = st.text(max_size=20)
names = st.text(min_size=1, max_size=12)
text_tuples = st.lists(texts, max_size=3).map(tuple)
fractions = st.floats(min_value=0.0, max_value=1.0)
score_maps = st.dictionaries(names, st.floats(allow_nan=False, allow_infinity=False), max_size=3)
aware_times = st.datetimes(
    timezones=st.builds(
        timezone,
        st.timedeltas(min_value=timedelta(hours=-23), max_value=timedelta(hours=23)),
    )
)

clarities = st.builds(
    ProblemClarity,
    what=st.none() | texts,
    who=st.none() | texts,
    success=st.none() | texts,
    what_clarity=fractions,
    who_clarity=fractions,
    success_clarity=fractions,
    assumptions=text_tuples,
    open_questions=text_tuples,
)
conversations = st.builds(
    ConversationSummary,
    user_goals=text_tuples,
    key_points=text_tuples,
    constraints=text_tuples,
    decisions=text_tuples,
)
analyses = st.builds(
    PreviousAnalysis,
    agent_id=names,
    summary=texts,
    key_findings=text_tuples,
    recommendations=text_tuples,
    scores=score_maps,
    confidence=fractions,
)
contexts = st.builds(
    HandoffContext,
    handoff_id=names,
    timestamp=aware_times,
    problem_clarity=clarities,
    conversation=conversations,
    session_id=st.none() | names,
    previous_analyses=st.lists(analyses, max_size=2).map(tuple),
    task_description=texts,
    expected_output=texts,
    focus_areas=text_tuples,
    ignore_areas=text_tuples,
    from_agent=names,
    to_agent=names,
    return_to=st.just("") | names,
    return_behavior=st.sampled_from(ReturnBehavior),
    handoff_type=st.sampled_from(HandoffType),
    handoff_mode=st.sampled_from(HandoffMode),
    priority=st.integers(-10, 10),
    timeout_seconds=st.floats(min_value=0.001, max_value=1e6),
)
results = st.builds(
    HandoffResult,
    handoff_id=names,
    from_agent=names,
    to_agent=names,
    success=st.booleans(),
    output=texts,
    output_format=st.sampled_from(["markdown", "json", "structured"]),
    key_findings=text_tuples,
    recommendations=text_tuples,
    confidence=fractions,
    scores=score_maps,
    suggested_next_agents=text_tuples,
    open_questions=text_tuples,
    needs_human_input=st.booleans(),
    human_input_reason=texts,
    duration_seconds=st.floats(min_value=0.0, max_value=1e6),
    error=st.none() | texts,
)
records = st.builds(HandoffRecord, context=contexts, result=results)


@pytest.mark.parametrize(
    "strategy",
    [clarities, conversations, analyses, contexts, results, records],
    ids=lambda s: repr(s)[:40],
)
def test_json_round_trip_is_exact(strategy):
    @given(strategy)
    def check(obj):
        again = json_round_trip(obj)
        assert again == obj
        assert again.to_dict() == obj.to_dict()

    check()


def test_to_dict_is_plain_json_in_field_order():
    data = make_context(session_id="s1").to_dict()
    assert list(data) == SEED_CONTEXT_FIELDS
    assert data["timestamp"] == "2025-03-01T09:30:00+00:00"
    assert data["handoff_type"] == "delegate"
    assert data["problem_clarity"]["what_clarity"] == 0.85
    assert json.loads(json.dumps(data)) == data


# --- prompt rendering -------------------------------------------------------------

SEED_HEADINGS = (
    "# Handoff from larry",
    "## Your Task",
    "## Problem Clarity Assessment",
    "## Conversation Context",
    "**User's Goals:**",
    "**Key Points Discussed:**",
    "## Return Instructions",
)


def test_prompt_of_the_seed_example_matches_the_golden_file(golden: Golden) -> None:
    prompt = make_context().to_prompt()
    for heading in SEED_HEADINGS:
        assert heading in prompt.splitlines()
    for line in (
        "Clarity: 85%",
        "Clarity: 80%",
        "Clarity: 75%",
        "Return behavior: **synthesize**",
    ):
        assert line in prompt.splitlines()
    golden.check(GOLDEN / "handoff_prompt.md", prompt)


def full_context() -> HandoffContext:
    return make_context(
        problem_clarity={
            **SEED_CLARITY,
            "success": None,
            "success_clarity": 0.0,
            "assumptions": ["Churn is measured per account"],
            "open_questions": ["What is the current onboarding flow?"],
        },
        conversation={
            **SEED_CONVERSATION,
            "constraints": ["No new hires"],
            "decisions": ["Target SMB first"],
        },
        previous_analyses=[
            {
                "agent_id": "minto",
                "summary": "Situation: churn.\nComplication: onboarding.",
                "key_findings": ["Onboarding is the bottleneck"],
                "recommendations": ["Interview churned users"],
                "scores": {"clarity": 7.5, "rigor": 8},
                "confidence": 0.7,
            }
        ],
        expected_output="PWS Scorecard with GO/PIVOT/NO-GO",
        focus_areas=["Problem severity", "Multi-line item\nwith detail"],
        ignore_areas=["Pricing"],
        return_to="orchestrator",
        return_behavior=ReturnBehavior.ITERATE,
    )


def test_prompt_with_every_section_matches_the_golden_file(golden: Golden) -> None:
    golden.check(GOLDEN / "handoff_prompt_full.md", full_context().to_prompt())


def test_prompt_omits_empty_sections():
    context = HandoffContext(
        handoff_id="h",
        timestamp=FIXED_TIME,
        from_agent="larry",
        to_agent="minto",
        task_description="Structure it.",
    )
    assert context.to_prompt() == (
        "# Handoff from larry\n\n"
        "## Your Task\nStructure it.\n\n"
        "## Return Instructions\nReturn your results to: **larry**\nReturn behavior: "
        "**synthesize**\n"
    )


def test_prompt_is_deterministic_and_does_not_show_identity():
    prompt = make_context().to_prompt()
    assert (
        prompt
        == make_context(handoff_id="other", timestamp=FIXED_TIME + timedelta(days=1)).to_prompt()
    )
    assert "h-churn" not in prompt


def test_result_data_is_an_object_with_text_keys_and_round_trips() -> None:
    result = HandoffResult(
        handoff_id="h", from_agent="a", to_agent="b", success=True, data={"x": [1, {"y": None}]}
    )
    assert json_round_trip(result) == result
    with pytest.raises(TypeError, match="data must be a mapping"):
        HandoffResult(handoff_id="h", from_agent="a", to_agent="b", success=True, data=[1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="data keys must be strings"):
        HandoffResult(handoff_id="h", from_agent="a", to_agent="b", success=True, data={1: "x"})  # type: ignore[dict-item]
