"""PipelineAgent: an Agno workflow, phases in order, each building on the previous output."""

from __future__ import annotations

import pytest

from mindrian.agents import AgentRunError, PipelineAgent
from mindrian.testing import ScriptedModel

PHASES = (
    ("Clarify", "Restate the question."),
    ("Analyze", "Break it down."),
    ("Validate", "Check the analysis."),
)


@pytest.fixture
def research(agent_class):
    return agent_class(
        PipelineAgent,
        agent_id="deep-research",
        phases=PHASES,
        instructions="Be rigorous.",
    )


def phase_models(*outputs: str) -> dict[str, ScriptedModel]:
    return {
        name: ScriptedModel(output, id=name)
        for (name, _), output in zip(PHASES, outputs)
    }


def test_phases_run_in_order_and_each_sees_the_previous_output(research, run) -> None:
    models = phase_models("question restated", "three drivers found", "analysis holds")
    agent = research(part_models=models)

    reply = run(agent.run("Why do trials not convert?"))

    clarify, analyze, validate = (models[name].calls for name, _ in PHASES)
    assert clarify[0].last_user_message.startswith("Why do trials not convert?")
    assert analyze[0].last_user_message.startswith("question restated")
    assert validate[0].last_user_message.startswith("three drivers found")
    # The original task travels with every phase.
    assert all(
        "Why do trials not convert?" in calls[0].last_user_message
        for calls in (analyze, validate)
    )
    assert "Be rigorous.\n\nBreak it down." in analyze[0].contents("system")[0]
    assert reply.content == "analysis holds"
    assert [(p.name, p.output) for p in reply.partials] == [
        ("Clarify", "question restated"),
        ("Analyze", "three drivers found"),
        ("Validate", "analysis holds"),
    ]
    for model in models.values():
        model.assert_complete()


def test_handoff_result_carries_every_partial(research, run) -> None:
    agent = research(part_models=phase_models("c", "a", "v"))

    result = run(agent.process_handoff(agent.create_handoff_context("task")))

    assert result.success, result.error
    assert (
        result.output
        == "v\n\n## Partial results\n\n### Clarify\n\nc\n\n### Analyze\n\na\n\n### Validate\n\nv"
    )


def test_a_failing_phase_fails_the_pipeline(research, run) -> None:
    models = phase_models(
        "c"
    )  # Analyze and Validate fall back to the main model, which has no steps
    agent = research(model=ScriptedModel(id="empty"), part_models=models)

    with pytest.raises(AgentRunError, match="Analyze"):
        run(agent.run("task"))
    result = run(
        research(
            model=ScriptedModel(id="empty"), part_models=phase_models("c")
        ).process_handoff(agent.create_handoff_context("t"))
    )
    assert not result.success and "ran out of scripted steps" in result.error
