"""What every agent type shares: handoff contexts, never-raising process_handoff, manager wiring."""

from __future__ import annotations

import asyncio

import pytest
from agno.models.anthropic import Claude

from mindrian.agents import (
    CollaborativeAgent,
    GuidedAgent,
    MindrianAgent,
    OperatorAgent,
    PipelineAgent,
    RoleAgent,
)
from mindrian.handoff import (
    HandoffManager,
    HandoffResult,
    PreviousAnalysis,
    ProblemClarity,
)
from mindrian.testing import ScriptedModel, Step

TWO = (("One", "first"), ("Two", "second"))

#: (base, extra class attributes) of every agent type.
TYPES = {
    "operator": (OperatorAgent, {}),
    "role": (RoleAgent, {}),
    "collaborative": (CollaborativeAgent, {"perspectives": TWO}),
    "pipeline": (PipelineAgent, {"phases": TWO}),
    "guided": (GuidedAgent, {"steps": TWO}),
}


def build(agent_class, kind: str, model, state_dir) -> MindrianAgent:
    base, attributes = TYPES[kind]
    cls = agent_class(base, **attributes)
    options = {"state_dir": state_dir} if base in (RoleAgent, GuidedAgent) else {}
    return cls(model=model, **options)


def test_create_handoff_context_follows_seed_000_section_7_2(agent_class) -> None:
    pws = agent_class(OperatorAgent, agent_id="pws-validation")(model=ScriptedModel())
    earlier = PreviousAnalysis(agent_id="minto", summary="Pyramid done", confidence=0.5)

    context = pws.create_handoff_context(
        challenge="AI-powered pet translator",
        problem_clarity={"what": "Pet translation", "who": "Pet owners"},
        previous_analyses=[earlier, {"agent_id": "jtbd", "summary": "Jobs mapped"}],
    )

    assert context.task_description == "AI-powered pet translator"
    assert context.problem_clarity == ProblemClarity(what="Pet translation", who="Pet owners")
    assert [a.agent_id for a in context.previous_analyses] == ["minto", "jtbd"]
    assert (context.from_agent, context.to_agent, context.return_to) == (
        "user",
        "pws-validation",
        "user",
    )


@pytest.mark.parametrize("kind", sorted(TYPES))
def test_process_handoff_never_raises_when_the_model_fails(
    agent_class, state_dir, run, kind
) -> None:
    model = ScriptedModel(id="empty")  # every model call fails: the script is empty
    agent = build(agent_class, kind, model, state_dir)

    result = run(agent.process_handoff(agent.create_handoff_context("task", session_id="s")))

    assert isinstance(result, HandoffResult)
    assert not result.success
    assert "ran out of scripted steps" in result.error
    assert result.duration_seconds > 0
    assert (result.from_agent, result.to_agent) == ("test-agent", "user")


@pytest.mark.parametrize("kind", sorted(TYPES))
def test_agent_type_is_declared_by_each_base(kind) -> None:
    assert TYPES[kind][0].agent_type == kind


def test_a_slow_agent_times_out_into_a_failed_result(agent_class, run) -> None:
    async def wait_for_data() -> str:
        """Wait for data that never comes."""
        await asyncio.sleep(30)
        return "late"

    cls = agent_class(OperatorAgent, tools=(wait_for_data,))
    agent = cls(model=ScriptedModel(Step.tool_call("wait_for_data"), {"output": "never"}))

    result = run(agent.process_handoff(agent.create_handoff_context("task", timeout_seconds=0.2)))

    assert not result.success
    assert result.error == "agent 'test-agent' timed out after 0.2s"
    assert 0.2 <= result.duration_seconds < 20  # the tool sleeps 30 s: a bound, not a speed


def test_missing_agent_id_is_a_type_error() -> None:
    class Nameless(OperatorAgent):
        pass

    with pytest.raises(TypeError, match="must set the class attribute agent_id"):
        Nameless(model=ScriptedModel())


def test_the_agno_agent_is_built_lazily_with_the_class_model_string(
    agent_class,
) -> None:
    cls = agent_class(OperatorAgent, model="anthropic:claude-sonnet-4-5")
    agent = cls()
    assert "agent" not in vars(agent)
    assert isinstance(agent.agent.model, Claude)
    assert agent.agent.model.id == "claude-sonnet-4-5"
    assert agent.agent is agent.agent


def test_model_argument_overrides_the_class_model(agent_class) -> None:
    model = ScriptedModel()
    assert agent_class(OperatorAgent)(model=model).agent.model is model


def test_manager_runs_agents_through_process_handoff(agent_class, run) -> None:
    pws = agent_class(OperatorAgent, agent_id="pws")(
        model=ScriptedModel({"output": "scored", "confidence": 0.7})
    )
    minto = agent_class(OperatorAgent, agent_id="minto")(
        model=ScriptedModel({"output": "structured", "confidence": 0.9})
    )
    manager = HandoffManager()
    manager.register_agent("pws", pws)
    manager.register_agent("minto", minto)
    contexts = [
        manager.create_delegation(from_agent="larry", to_agent=name, task="Validate")
        for name in ("pws", "minto")
    ]

    results = run(manager.execute_parallel(contexts))

    assert [(r.from_agent, r.to_agent, r.success, r.output) for r in results] == [
        ("pws", "larry", True, "scored"),
        ("minto", "larry", True, "structured"),
    ]
