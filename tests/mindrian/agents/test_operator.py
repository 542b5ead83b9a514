"""OperatorAgent: structured output through the real Agno loop, schema mismatches fail loudly."""

from __future__ import annotations

import pytest

from mindrian.agents import HandoffOutput, OperatorAgent, SchemaMismatchError
from mindrian.handoff import HandoffType
from mindrian.testing import ScriptedModel, Step

SCORECARD = {
    "output": "# PWS Scorecard\nPIVOT",
    "key_findings": ["Strong problem", "Weak team"],
    "recommendations": ["Hire CTO"],
    "confidence": 0.75,
    "scores": {"problem": 22, "people": 12},
    "suggested_next_agents": ["devil-advocate"],
    "open_questions": ["Market size?"],
    "needs_human_input": False,
    "human_input_reason": "",
}


class Market:
    """A tool recording what it was asked."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def market_size(self, segment: str) -> str:
        """Size of a market segment."""
        self.queries.append(segment)
        return f"{segment}: 1.2M buyers"


@pytest.fixture
def pws(agent_class):
    return agent_class(
        OperatorAgent,
        agent_id="pws-validation",
        instructions="Score the opportunity with the PWS pillars.",
    )


def test_structured_answer_becomes_a_full_handoff_result(pws, run) -> None:
    model = ScriptedModel(SCORECARD)
    agent = pws(model=model)
    context = agent.create_handoff_context(
        "AI-powered pet translator",
        problem_clarity={"what": "Pet translation", "who": "Pet owners"},
    )

    result = run(agent.process_handoff(context))

    assert result.success, result.error
    assert (result.from_agent, result.to_agent, result.handoff_id) == (
        "pws-validation",
        "user",
        context.handoff_id,
    )
    assert result.output == "# PWS Scorecard\nPIVOT"
    assert result.output_format == "structured"
    assert result.key_findings == ("Strong problem", "Weak team")
    assert result.scores == {"problem": 22.0, "people": 12.0}
    assert result.confidence == 0.75
    assert result.suggested_next_agents == ("devil-advocate",)
    assert result.duration_seconds > 0
    prompt = model.calls[0].last_user_message
    assert "AI-powered pet translator" in prompt and "Pet translation" in prompt
    assert "PWS pillars" in model.calls[0].contents("system")[0]
    model.assert_complete()


def test_tool_call_runs_before_the_structured_answer(agent_class, run) -> None:
    market = Market()
    cls = agent_class(OperatorAgent, tools=(market.market_size,))
    model = ScriptedModel(Step.tool_call("market_size", segment="pet owners"), SCORECARD)

    agent = cls(model=model)

    result = run(agent.process_handoff(agent.create_handoff_context("size it")))

    assert result.success, result.error
    assert market.queries == ["pet owners"]
    assert ("tool", "pet owners: 1.2M buyers") in model.calls[1].pairs
    assert model.calls[0].tools == ("market_size",)
    model.assert_complete()


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            "Here is my analysis in prose.",
            "output did not match schema: HandoffOutput: <root>: Invalid JSON",
        ),
        (
            {"key_findings": ["x"]},
            "output did not match schema: HandoffOutput: output: Field required",
        ),
        (
            {"output": "x", "confidence": 1.5},
            "output did not match schema: HandoffOutput: confidence: Input should be less than or "
            "equal to 1",
        ),
    ],
    ids=["prose", "missing-field", "out-of-range"],
)
def test_answer_not_matching_the_schema_is_a_failed_result(pws, run, answer, reason) -> None:
    model = ScriptedModel(answer)
    agent = pws(model=model)

    result = run(agent.process_handoff(agent.create_handoff_context("task")))

    assert not result.success
    assert result.error is not None and result.error.startswith(reason)
    assert result.duration_seconds > 0
    model.assert_complete()


def test_run_raises_on_schema_mismatch(pws, run) -> None:
    with pytest.raises(SchemaMismatchError, match="output did not match schema"):
        run(pws(model=ScriptedModel("prose")).run("task"))


def test_run_returns_the_structured_fields(pws, run) -> None:
    reply = run(pws(model=ScriptedModel(SCORECARD)).run("Evaluate this opportunity"))
    assert reply.content == SCORECARD["output"]
    assert reply.structured == {
        **SCORECARD,
        "scores": {"problem": 22.0, "people": 12.0},
    }


def test_extended_schema_keeps_extra_fields_out_of_the_result(agent_class, run) -> None:
    class Pyramid(HandoffOutput):
        governing_thought: str

    answer = {"output": "pyramid", "governing_thought": "Cut churn first"}
    agent = agent_class(OperatorAgent, output_schema=Pyramid)(model=ScriptedModel(answer, answer))

    reply = run(agent.run("structure it"))
    result = run(agent.process_handoff(agent.create_handoff_context("structure it")))

    assert reply.structured["governing_thought"] == "Cut churn first"
    assert result.success and result.output == "pyramid"
    assert "governing_thought" not in result.to_dict()


def test_transfer_is_rejected(pws, run) -> None:
    model = ScriptedModel()
    agent = pws(model=model)
    context = agent.create_handoff_context(
        "take over", session_id="s1", handoff_type=HandoffType.TRANSFER
    )

    result = run(agent.process_handoff(context))

    assert not result.success
    assert (
        result.error
        == "operator agent 'pws-validation' does not accept transfer handoffs (accepts: delegate)"
    )
    assert model.calls == ()
