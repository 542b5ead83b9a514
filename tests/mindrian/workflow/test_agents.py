"""Agents follow their thought graph: a guided agent's moves are the edges of its review gates."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

from mindrian.agents import AgentRunError, GuidedAgent
from mindrian.testing import ScriptedModel
from mindrian.workflow import agent_workflow, linear_workflow, render, step_ids

STEPS = (
    ("Customer", "Ask who the customer is."),
    ("Problem", "Ask what problem they have."),
    ("Value", "Summarise the value proposition."),
)


def models(*per_step):
    return {
        name: ScriptedModel(*answers, id=name)
        for (name, _), answers in zip(STEPS, per_step, strict=False)
    }


@pytest.fixture
def canvas(agent_class):
    return agent_class(GuidedAgent, agent_id="value-canvas", steps=STEPS)


def test_redo_runs_the_current_step_again(canvas, state_dir, run) -> None:
    scripted = models(("Who?", "Who, really?"), ("What hurts?",))
    agent = canvas(part_models=scripted, state_dir=state_dir)
    run(agent.start("canvas", session_id="s"))

    again = run(agent.respond("s", " Redo "))
    nxt = run(agent.respond("s", "Dentists"))

    assert (again.content, again.awaiting_input) == ("Who, really?", True)
    assert [p.output for p in again.partials] == ["Who, really?"]
    assert nxt.content == "What hurts?"
    assert "### Customer\nWho, really?\n\n**User:** Dentists" in (
        scripted["Problem"].calls[0].last_user_message
    )
    assert nxt.prompt_for_user == (
        "Step 2 of 3 (Problem): answer to continue, or say 'back', 'redo' or 'skip'."
    )


def test_without_a_package_the_agent_follows_the_guided_drawing_of_its_steps(canvas) -> None:
    ids = step_ids(tuple(name for name, _ in STEPS))
    expected = linear_workflow(
        "generatedguidedagent", tuple(zip(ids, (t for _, t in STEPS), strict=True)), "guided"
    )
    assert render(agent_workflow(canvas, "guided", STEPS)) == render(expected)


def _package(tmp_path: Path, drawing: str, monkeypatch, base: str = "GuidedAgent") -> type:
    """A generated-like package: agent.py declaring the agent, workflow.dot beside it."""
    folder = tmp_path / "canvas_pkg"
    folder.mkdir()
    (folder / "workflow.dot").write_text(drawing, encoding="utf-8")
    (folder / "agent.py").write_text(
        textwrap.dedent(
            f"""
            from mindrian.agents import {base}

            class CanvasAgent({base}):
                agent_id = "drawn-canvas"
                name = "Drawn canvas"
                steps = {STEPS!r}
                phases = {STEPS!r}
            """
        ),
        encoding="utf-8",
    )
    spec = importlib.util.spec_from_file_location("canvas_pkg_agent", folder / "agent.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # as an import would
    spec.loader.exec_module(module)
    return module.CanvasAgent


def test_a_packages_workflow_dot_decides_the_moves(tmp_path, state_dir, run, monkeypatch) -> None:
    ids = step_ids(tuple(name for name, _ in STEPS))
    drawn = render(
        linear_workflow("canvas", tuple(zip(ids, ("a", "b", "c"), strict=True)), "guided")
    )
    # Edit the drawing: after the second step, "continue" ends the session.
    drawn = drawn.replace(
        'problem_review -> value [label="continue"]', 'problem_review -> exit [label="continue"]'
    )
    assert 'problem_review -> exit [label="continue"]' in drawn
    agent = _package(tmp_path, drawn, monkeypatch)(
        part_models=models(("Who?",), ("Hurts?",)), state_dir=state_dir
    )

    run(agent.start("canvas", session_id="s"))
    run(agent.respond("s", "Dentists"))
    final = run(agent.respond("s", "Slow replies"))

    assert not final.awaiting_input
    assert [p.name for p in final.partials] == ["Customer", "Problem"]


def test_a_move_the_gate_does_not_offer_is_refused(tmp_path, state_dir, run, monkeypatch) -> None:
    ids = step_ids(tuple(name for name, _ in STEPS))
    drawn = render(
        linear_workflow("canvas", tuple(zip(ids, ("a", "b", "c"), strict=True)), "guided")
    )
    drawn = drawn.replace('  customer_review -> customer [label="redo"];\n', "")
    agent = _package(tmp_path, drawn, monkeypatch)(
        part_models=models(("Who?",)), state_dir=state_dir
    )
    first = run(agent.start("canvas", session_id="s"))
    assert first.prompt_for_user.endswith("answer to continue, or say 'skip'.")
    with pytest.raises(AgentRunError, match="step 1 of 'drawn-canvas' offers no 'redo'"):
        run(agent.respond("s", "redo"))


def test_a_drawing_without_a_node_for_a_step_is_refused(
    tmp_path, state_dir, run, monkeypatch
) -> None:
    drawn = render(linear_workflow("canvas", (("customer", "a"),), "guided"))
    agent = _package(tmp_path, drawn, monkeypatch)(
        part_models=models(("Who?",)), state_dir=state_dir
    )
    with pytest.raises(AgentRunError, match=r"has no node for step\(s\): problem, value"):
        run(agent.start("canvas", session_id="s"))


def test_a_pipeline_runs_its_phases_in_the_order_drawn(tmp_path, run, monkeypatch) -> None:
    ids = step_ids(tuple(name for name, _ in STEPS))
    drawn = render(linear_workflow("research", tuple(zip(ids, "abc", strict=True)), "pipeline"))
    reordered = (
        drawn.replace("start -> customer;", "start -> value;")
        .replace("value -> exit;", "value -> customer;")
        .replace("problem -> value;", "problem -> exit;")
    )
    agent_type = _package(tmp_path, reordered, monkeypatch, base="PipelineAgent")
    scripted = models(("customers",), ("problems",), ("value",))
    reply = run(agent_type(part_models=scripted).run("the task"))
    assert [p.name for p in reply.partials] == ["Value", "Customer", "Problem"]
    assert scripted["Value"].calls[0].last_user_message.startswith("the task\n")
    assert scripted["Customer"].calls[0].last_user_message.startswith("value\n")
    assert reply.content == "problems"


def test_a_pipeline_drawing_without_its_phases_is_refused(tmp_path, run, monkeypatch) -> None:
    drawn = render(linear_workflow("research", (("customer", "a"),), "pipeline"))
    agent_type = _package(tmp_path, drawn, monkeypatch, base="PipelineAgent")
    with pytest.raises(AgentRunError, match=r"has no node for step\(s\): problem, value"):
        run(agent_type(part_models=models(("x",))).run("the task"))
