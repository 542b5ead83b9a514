"""Phase 3: handoff contract, checked against the runtime's real dataclasses."""

from __future__ import annotations

import dataclasses

import pytest
from phase_factories import SEED_RESULT_FIELDS, body_with_sections, contract, run_phases, skill

from builder.phases.handoff_protocol import load_runtime_contract
from builder.pipeline.errors import HandoffConfigError
from builder.pipeline.serial import dump_yaml, from_plain, load_yaml, to_plain
from builder.skill.model import (
    ChainTarget,
    HandoffRequest,
    ScoreDimension,
    StepSpec,
    SubAgentSpec,
)
from builder.skill.spec import AgentSpec

TYPES = {
    "operator": {},
    "role": dict(type="role", behavioral_rules=("Ask first.",)),
    "collaborative": dict(sub_agents=(SubAgentSpec("A", "a"), SubAgentSpec("B", "b"))),
    "pipeline": dict(type="pipeline", steps=(StepSpec("a"), StepSpec("b"))),
    "guided": dict(steps=(StepSpec("a", waits_for_user=True),)),
}

BY_TYPE = [
    # type, return behaviour, supports, min clarity, output format
    ("operator", "synthesize", ("delegate", "return", "escalate"), 0.6, "structured"),
    (
        "collaborative",
        "synthesize",
        ("delegate", "return", "escalate"),
        0.6,
        "structured",
    ),
    (
        "role",
        "passthrough",
        ("delegate", "transfer", "return", "escalate"),
        0.0,
        "markdown",
    ),
    ("pipeline", "iterate", ("delegate", "return", "escalate"), 0.6, "structured"),
    ("guided", "iterate", ("delegate", "return", "escalate"), 0.6, "markdown"),
]


def _handoff(d, runtime=None):  # type: ignore[no-untyped-def]
    return run_phases(d, until=3, runtime=runtime)["handoff_protocol"]


@pytest.mark.parametrize("agent_type,behavior,supports,clarity,fmt", BY_TYPE)
def test_defaults_by_type(
    agent_type: str, behavior: str, supports: tuple, clarity: float, fmt: str
) -> None:
    result = _handoff(skill(**TYPES[agent_type]))
    config = result.output.handoff
    assert result.output.type == agent_type
    assert config.routing.return_behavior == behavior
    assert config.supports == supports
    assert config.receives.min_clarity == clarity
    assert config.returns.output_format == fmt
    assert all(c.passed for c in result.checks)


def test_only_role_accepts_transfer() -> None:
    accepting = [
        t for t in TYPES if "transfer" in _handoff(skill(**TYPES[t])).output.handoff.supports
    ]
    assert accepting == ["role"]


def test_scores_and_chains_become_returns() -> None:
    d = skill(
        scores=(ScoreDimension("problem", 0, 25), ScoreDimension("solution", 0, 25)),
        chains_to=(ChainTarget("minto-pyramid", 0.8), ChainTarget("jtbd")),
    )
    returns = _handoff(d).output.handoff.returns
    assert returns.scores == ("problem", "solution")
    assert returns.suggested_next_agents == ("minto-pyramid", "jtbd")
    assert {
        "scores",
        "suggested_next_agents",
        "key_findings",
        "recommendations",
        "confidence",
        "open_questions",
    } <= set(returns.fields)


def test_runtime_min_clarity_is_used() -> None:
    result = _handoff(skill(), runtime=contract(min_clarity=0.75))
    assert result.output.handoff.receives.min_clarity == 0.75
    explicit = _handoff(
        skill(handoff=HandoffRequest(min_clarity=0.4)),
        runtime=contract(min_clarity=0.75),
    )
    assert explicit.output.handoff.receives.min_clarity == 0.4


def test_returning_a_field_the_runtime_lacks_fails_with_line() -> None:
    d = skill(
        handoff=HandoffRequest(returns=("output", "mood_ring"), line=10),
        field_lines={"handoff.returns.1": 12},
    )
    result = _handoff(d)
    receives, returns = result.checks
    assert receives.passed
    assert not returns.passed
    assert "'mood_ring'" in returns.reason and "HandoffResult" in returns.reason
    assert (returns.location.path, returns.location.line) == (
        "skills/sample/SKILL.md",
        12,
    )


def test_receiving_a_field_the_runtime_lacks_fails() -> None:
    d = skill(handoff=HandoffRequest(receives=("problem_clarity", "horoscope"), line=9))
    check = _handoff(d).checks[0]
    assert (check.name, check.passed, check.location.line) == (
        "receives_defined",
        False,
        9,
    )
    assert "'horoscope'" in check.reason


def test_runtime_without_a_field_fails_the_default_contract() -> None:
    slim = contract(result_fields=tuple(f for f in SEED_RESULT_FIELDS if f != "confidence"))
    d = skill(handoff=HandoffRequest(returns=("output", "confidence")))
    check = _handoff(d, runtime=slim).checks[1]
    assert not check.passed and "'confidence'" in check.reason


def test_unknown_return_behavior_is_an_error() -> None:
    d = skill(
        handoff=HandoffRequest(return_behavior="teleport"),
        field_lines={"handoff.return_behavior": 14},
    )
    with pytest.raises(HandoffConfigError) as err:
        _handoff(d)
    assert err.value.location.line == 14 and "teleport" in err.value.message


def test_output_is_a_new_object_and_round_trips() -> None:
    results = run_phases(skill(**TYPES["role"]), until=3)
    before, after = results["architecture"].output, results["handoff_protocol"].output
    assert before.handoff is None and after.handoff is not None
    assert dataclasses.replace(after, handoff=None) == before
    text = dump_yaml(to_plain(after))
    assert from_plain(AgentSpec, load_yaml(text)) == after


def test_contract_is_read_from_the_real_runtime() -> None:
    context = pytest.importorskip(
        "mindrian.handoff.context", reason="runtime handoff module not written yet"
    )
    real = load_runtime_contract()
    assert real.context_fields == tuple(f.name for f in dataclasses.fields(context.HandoffContext))
    assert real.result_fields == tuple(f.name for f in dataclasses.fields(context.HandoffResult))
    result = run_phases(skill(), until=3, runtime=real)["handoff_protocol"]
    assert all(c.passed for c in result.checks), [c.reason for c in result.checks]


def test_missing_runtime_module_is_a_clear_error() -> None:
    with pytest.raises(HandoffConfigError) as err:
        load_runtime_contract("mindrian.no_such_module")
    assert "cannot import the runtime handoff module" in err.value.message


def _with_output(body: str, **changes):  # type: ignore[no-untyped-def]
    sections = body_with_sections(body, 5, {"Output Format": "output_template"})
    return skill(body=body, sections=sections, **changes)


OUTPUT_BODY = """Answer with the result.

## Output Format

```json
{"status": "created", "id": 7, "ok": true}
```

or, when it fails:

```json
{"status": "failed", "error": "why", // a comment
 "id": 7, ... }
{"status": oops}
```
"""


def test_the_output_example_is_the_data_schema_when_no_scores_are_declared() -> None:
    result = _handoff(_with_output(OUTPUT_BODY), runtime=load_runtime_contract())
    returns = result.output.handoff.returns
    assert returns.data_schema == {
        "type": "object",
        "properties": {
            "status": {"type": "string"},
            "id": {"type": "integer"},
            "ok": {"type": "boolean"},
            "error": {"type": "string"},
        },
        "required": ["status", "id"],
    }
    assert "data" in returns.fields
    assert (
        "data: the output template's 2 JSON examples (lines 10, 16) are merged into the output "
        "schema; a key in every example is required, ok, error may be left out"
        in result.output.handoff.decisions
    )
    (warning,) = result.warnings
    assert warning.startswith("skills/sample/SKILL.md:18: warning[W301]: ")
    assert "Expecting value at line 18" in warning


def test_declared_scores_keep_examples_as_the_scores_object() -> None:
    d = _with_output(OUTPUT_BODY, scores=(ScoreDimension("depth", 0, 5),))
    result = _handoff(d)
    assert result.output.handoff.returns.data_schema == {}
    assert "data" not in result.output.handoff.returns.fields
    assert result.warnings == ()


@pytest.mark.parametrize("agent_type", ["pipeline", "guided"])
def test_types_without_an_output_model_infer_no_data(agent_type: str) -> None:
    result = _handoff(_with_output(OUTPUT_BODY, **TYPES[agent_type]))
    assert result.output.handoff.returns.data_schema == {}
