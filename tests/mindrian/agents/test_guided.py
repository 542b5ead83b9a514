"""GuidedAgent: pauses after each step, back and skip, progress resumed in another process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mindrian.agents import AgentRunError, GuidedAgent, GuidedProgress, Partial
from mindrian.testing import ScriptedModel

REPO_ROOT = Path(__file__).resolve().parents[3]
STEPS = (
    ("Customer", "Ask who the customer is."),
    ("Problem", "Ask what problem they have."),
    ("Value", "Summarise the value proposition."),
)


@pytest.fixture
def canvas(agent_class):
    return agent_class(GuidedAgent, agent_id="value-canvas", steps=STEPS)


def step_models(*per_step: tuple[str, ...]) -> dict[str, ScriptedModel]:
    """Scripted models for the first ``len(per_step)`` steps (a test may stop before the last)."""
    return {
        name: ScriptedModel(*answers, id=name)
        for (name, _), answers in zip(STEPS, per_step, strict=False)
    }


def test_each_step_pauses_for_the_user_and_the_next_sees_the_answer(canvas, state_dir, run) -> None:
    models = step_models(
        ("Who is your customer?",), ("What hurts them?",), ("Value: faster support",)
    )
    agent = canvas(part_models=models, state_dir=state_dir)

    first = run(agent.start("Build my value canvas", session_id="s1"))
    second = run(agent.respond("s1", "Small e-shops"))
    third = run(agent.respond("s1", "Slow replies"))
    final = run(agent.respond("s1", "Looks right"))

    assert (first.content, first.awaiting_input) == ("Who is your customer?", True)
    assert (
        first.prompt_for_user
        == "Step 1 of 3 (Customer): answer to continue, or say 'redo' or 'skip'."
    )
    assert (second.content, third.content) == (
        "What hurts them?",
        "Value: faster support",
    )
    problem_prompt = models["Problem"].calls[0].last_user_message
    assert "# Task\nBuild my value canvas" in problem_prompt
    assert "### Customer\nWho is your customer?\n\n**User:** Small e-shops" in problem_prompt
    assert "Step 2 of 3: Problem." in problem_prompt
    assert not final.awaiting_input
    assert final.content == "Value: faster support"
    assert [(p.name, p.user_input) for p in final.partials] == [
        ("Customer", "Small e-shops"),
        ("Problem", "Slow replies"),
        ("Value", "Looks right"),
    ]
    for model in models.values():
        model.assert_complete()
    with pytest.raises(AgentRunError, match="already finished"):
        run(agent.respond("s1", "more"))


def test_back_reopens_the_previous_step_and_discards_later_ones(canvas, state_dir, run) -> None:
    models = step_models(("Who?",), ("What hurts?", "What hurts now?"))
    agent = canvas(part_models=models, state_dir=state_dir)
    run(agent.start("canvas", session_id="s"))
    run(agent.respond("s", "Dentists"))

    back = run(agent.respond("s", "back"))
    again = run(agent.respond("s", "Vets"))

    assert (back.content, back.awaiting_input) == ("Who?", True)
    assert [p.name for p in back.partials] == ["Customer"]
    assert again.content == "What hurts now?"
    assert "**User:** Vets" in models["Problem"].calls[1].last_user_message
    assert "Dentists" not in models["Problem"].calls[1].last_user_message
    assert (
        len(models["Customer"].calls) == 1
    )  # going back shows the stored output, no new model call


def test_skip_leaves_the_step_out_of_what_later_steps_see(canvas, state_dir, run) -> None:
    models = step_models(("Who?",), ("What hurts?",))
    agent = canvas(part_models=models, state_dir=state_dir)
    run(agent.start("canvas", session_id="s"))

    run(agent.respond("s", "  SKIP "))

    assert "### Customer\n(skipped by the user)" in models["Problem"].calls[0].last_user_message
    progress = agent.load_progress("s")
    assert [(p.name, p.status) for p in progress.partials] == [
        ("Customer", "skipped"),
        ("Problem", "done"),
    ]


def test_back_from_the_first_step_is_refused(canvas, state_dir, run) -> None:
    agent = canvas(part_models=step_models(("Who?",)), state_dir=state_dir)
    run(agent.start("canvas", session_id="s"))
    with pytest.raises(AgentRunError, match="cannot go back from the first step"):
        run(agent.respond("s", "back"))


def test_progress_file_is_deterministic_json(canvas, state_dir, run) -> None:
    agent = canvas(part_models=step_models(("Who?",)), state_dir=state_dir)
    run(agent.start("canvas", session_id="s"))
    text = agent.progress_file("s").read_text(encoding="utf-8")
    expected = GuidedProgress("value-canvas", "s", "canvas", 0, (Partial("Customer", "Who?"),))
    assert text == expected.to_json()
    assert GuidedProgress.from_json(text) == expected
    assert not list(agent.progress_file("s").parent.glob("*.tmp"))


@pytest.mark.parametrize("session_id", ["../escape", "a/b", "", ".hidden"])
def test_unsafe_session_ids_are_rejected(canvas, state_dir, session_id) -> None:
    with pytest.raises(ValueError, match="unusable session id"):
        canvas(state_dir=state_dir).progress_file(session_id)


def test_handoff_pauses_with_needs_human_input_then_continues(canvas, state_dir, run) -> None:
    models = step_models(("Who?",), ("What hurts?",))
    agent = canvas(part_models=models, state_dir=state_dir)

    opened = run(
        agent.process_handoff(agent.create_handoff_context("Fill the canvas", session_id="h1"))
    )
    answered = run(agent.process_handoff(agent.create_handoff_context("Clinics", session_id="h1")))

    assert opened.success and opened.needs_human_input
    assert opened.human_input_reason.startswith("Step 1 of 3 (Customer)")
    assert answered.needs_human_input and answered.output.startswith("What hurts?")
    assert "**User:** Clinics" in models["Problem"].calls[0].last_user_message


RESUME_SCRIPT = textwrap.dedent("""
    import asyncio, json, sys
    from mindrian.agents import GuidedAgent
    from mindrian.testing import ScriptedModel
    from mindrian.testing.pytest_plugin import OfflineGuard

    OfflineGuard().install()  # the child process must stay offline too

    class Canvas(GuidedAgent):
        agent_id = "value-canvas"
        steps = (("Customer", "Ask who."), ("Problem", "Ask what."), ("Value", "Sum up."))

    problem = ScriptedModel("What hurts them?")
    agent = Canvas(part_models={"Problem": problem}, state_dir=sys.argv[1])
    reply = asyncio.run(agent.respond("s1", "Small e-shops"))
    problem.assert_complete()
    print(json.dumps({"content": reply.content, "seen": problem.calls[0].last_user_message}))
    """)


def test_a_new_process_resumes_the_saved_session(canvas, state_dir, run, tmp_path) -> None:
    customer = ScriptedModel("Who is your customer?")
    run(
        canvas(part_models={"Customer": customer}, state_dir=state_dir).start(
            "Build my canvas", session_id="s1"
        )
    )
    script = tmp_path / "resume.py"
    script.write_text(RESUME_SCRIPT, encoding="utf-8")

    completed = subprocess.run(
        [sys.executable, str(script), str(state_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO_ROOT), "AGNO_TELEMETRY": "false", "PATH": ""},
    )

    assert completed.returncode == 0, completed.stderr
    resumed = json.loads(completed.stdout.strip().splitlines()[-1])
    assert resumed["content"] == "What hurts them?"
    assert "# Task\nBuild my canvas" in resumed["seen"]
    assert "**User:** Small e-shops" in resumed["seen"]
    progress = canvas(state_dir=state_dir).load_progress("s1")
    assert progress.position == 1
    assert [p.output for p in progress.partials] == [
        "Who is your customer?",
        "What hurts them?",
    ]


def test_a_step_with_a_question_pauses_with_that_question(agent_class, state_dir, run) -> None:
    gated = agent_class(
        GuidedAgent,
        agent_id="comment-fixer",
        steps=(("Ask", "List the comments."), ("Fix", "Apply the fixes.")),
        questions=("Ask the user which numbered comments should be addressed", ""),
    )
    models = {
        "Ask": ScriptedModel("1. typo\n2. naming", id="Ask"),
        "Fix": ScriptedModel("Done", id="Fix"),
    }
    agent = gated(part_models=models, state_dir=state_dir)

    first = run(agent.start("Fix my PR", session_id="s1"))
    second = run(agent.respond("s1", "only 2"))

    assert first.prompt_for_user == (
        "Ask the user which numbered comments should be addressed\n"
        "Step 1 of 2 (Ask): answer to continue, or say 'redo' or 'skip'."
    )
    # A step the skill words no question for keeps the generic prompt.
    assert second.prompt_for_user.startswith("Step 2 of 2 (Fix): answer to continue")
    # The step's model is told where its step ends: at the skill's own question.
    assert (
        models["Ask"]
        .calls[0]
        .last_user_message.endswith(
            "Stop there and wait for the user's answer to: "
            "Ask the user which numbered comments should be addressed"
        )
    )
    assert "wait for the user's answer" not in models["Fix"].calls[0].last_user_message
