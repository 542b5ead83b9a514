"""PipelineAgent: an Agno workflow, phases in order, each building on the previous output."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from mindrian.agents import STATE_DIR_ENV, AgentRunError, PipelineAgent
from mindrian.agents.pipeline import PipelineCheckpoint
from mindrian.testing import ScriptedModel

REPO_ROOT = Path(__file__).resolve().parents[3]

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
    """Scripted models for the first ``len(outputs)`` phases (a test may stop before the last)."""
    return {
        name: ScriptedModel(output, id=name)
        for (name, _), output in zip(PHASES, outputs, strict=False)
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
        "Why do trials not convert?" in calls[0].last_user_message for calls in (analyze, validate)
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
        research(model=ScriptedModel(id="empty"), part_models=phase_models("c")).process_handoff(
            agent.create_handoff_context("t")
        )
    )
    assert not result.success and "ran out of scripted steps" in result.error


# -- per-phase checkpoints --------------------------------------------------------------

TASK = "Why do trials not convert?"


def provider_down(messages: object) -> str:
    raise RuntimeError("provider down")


def idle_models() -> dict[str, ScriptedModel]:
    """A model per phase with an empty script: any call is recorded and fails the phase."""
    return {name: ScriptedModel(id=name) for name, _ in PHASES}


def failing_at_analyze() -> dict[str, ScriptedModel]:
    """Clarify answers, Analyze's model raises, Validate has nothing to say."""
    return {
        "Clarify": ScriptedModel("question restated", id="Clarify"),
        "Analyze": ScriptedModel(provider_down, id="Analyze"),
        "Validate": ScriptedModel(id="Validate"),
    }


def fail_once(agent: PipelineAgent, run, session_id: str = "s1") -> None:
    with pytest.raises(AgentRunError, match=r"phase 'Analyze' failed: .*provider down"):
        run(agent.run(TASK, session_id=session_id))


def test_a_rerun_resumes_at_the_failed_phase_without_calling_earlier_models(
    research, state_dir, run
) -> None:
    first = failing_at_analyze()
    fail_once(research(part_models=first, state_dir=state_dir), run)
    assert not first["Validate"].calls  # nothing runs after a failed phase
    saved = research(state_dir=state_dir).load_checkpoint("s1")
    assert [(p.name, p.output) for p in saved.partials] == [("Clarify", "question restated")]

    second = {
        **phase_models("unused", "three drivers found", "analysis holds"),
        "Clarify": first["Clarify"],
    }
    reply = run(research(part_models=second, state_dir=state_dir).run(TASK, session_id="s1"))

    assert len(first["Clarify"].calls) == 1  # the saved output stood in for it
    analyze = second["Analyze"].calls[0].last_user_message
    assert analyze.startswith("question restated")
    assert TASK in analyze
    assert second["Validate"].calls[0].last_user_message.startswith("three drivers found")
    assert reply.content == "analysis holds"
    assert [(p.name, p.output) for p in reply.partials] == [
        ("Clarify", "question restated"),
        ("Analyze", "three drivers found"),
        ("Validate", "analysis holds"),
    ]
    finished = research(state_dir=state_dir).load_checkpoint("s1")
    assert finished.partials == reply.partials and finished.finished(len(PHASES))


def test_a_finished_session_is_kept_and_answers_again_without_model_calls(
    research, state_dir, run
) -> None:
    run(
        research(part_models=phase_models("c", "a", "v"), state_dir=state_dir).run(
            TASK, session_id="s1"
        )
    )
    idle = idle_models()

    again = run(research(part_models=idle, state_dir=state_dir).run(TASK, session_id="s1"))

    assert (again.content, [p.output for p in again.partials]) == ("v", ["c", "a", "v"])
    assert all(not model.calls for model in idle.values())


EDITED_PHASES = (PHASES[0], ("Analyze", "Break it down further."), PHASES[2])


@pytest.mark.parametrize(
    ("task", "attributes"),
    [
        ("Why do users churn?", {}),
        (TASK, {"phases": EDITED_PHASES}),
        (TASK, {"phases": (("Scope", "Set the scope."), *PHASES)}),
        (TASK, {"instructions": "Be brief."}),
    ],
    ids=[
        "another task",
        "a phase's instructions",
        "an added phase",
        "the agent's instructions",
    ],
)
def test_a_changed_run_starts_from_the_first_phase(
    research, agent_class, state_dir, run, task, attributes
) -> None:
    fail_once(research(part_models=failing_at_analyze(), state_dir=state_dir), run)
    changed = agent_class(
        PipelineAgent,
        agent_id="deep-research",
        **{"phases": PHASES, "instructions": "Be rigorous.", **attributes},
    )
    models = {name: ScriptedModel(f"{name} again", id=name) for name, _ in changed.phases}

    reply = run(changed(part_models=models, state_dir=state_dir).run(task, session_id="s1"))

    for model in models.values():
        model.assert_complete()  # every phase ran, the first included
    assert [p.output for p in reply.partials] == [f"{name} again" for name, _ in changed.phases]
    saved = changed(state_dir=state_dir).load_checkpoint("s1")
    assert (saved.task, saved.partials) == (task, reply.partials)


def test_sessions_are_independent(research, state_dir, run) -> None:
    fail_once(research(part_models=failing_at_analyze(), state_dir=state_dir), run, "s1")
    before = research(state_dir=state_dir).checkpoint_file("s1").read_bytes()
    models = phase_models("fresh c", "fresh a", "fresh v")

    reply = run(research(part_models=models, state_dir=state_dir).run(TASK, session_id="s2"))

    assert len(models["Clarify"].calls) == 1  # s2 did not borrow s1's phase
    assert reply.partials[0].output == "fresh c"
    assert research(state_dir=state_dir).checkpoint_file("s1").read_bytes() == before


def test_checkpoint_is_deterministic_json_written_atomically(research, tmp_path, run) -> None:
    texts = []
    for directory in ("one", "two"):
        agent = research(part_models=phase_models("c", "a", "v"), state_dir=tmp_path / directory)
        run(agent.run(TASK, session_id="s1"))
        path = agent.checkpoint_file("s1")
        assert path == tmp_path / directory / "pipeline" / "deep-research" / "s1.json"
        assert sorted(p.name for p in path.parent.iterdir()) == ["s1.json"]  # no temp left
        texts.append(path.read_text(encoding="utf-8"))

    assert texts[0] == texts[1]
    data = json.loads(texts[0])
    assert list(data) == sorted(data)
    assert set(data) == {"agent_id", "digest", "partials", "session_id", "task"}
    assert data["digest"] == research().run_digest(TASK)
    checkpoint = PipelineCheckpoint.from_json(texts[0])
    assert checkpoint.to_json() == texts[0]
    assert [p.output for p in checkpoint.partials] == ["c", "a", "v"]


def test_the_state_dir_can_come_from_the_environment(research, tmp_path, monkeypatch, run) -> None:
    monkeypatch.setenv(STATE_DIR_ENV, str(tmp_path / "from-env"))
    fail_once(research(part_models=failing_at_analyze()), run)

    assert (tmp_path / "from-env" / "pipeline" / "deep-research" / "s1.json").is_file()


@pytest.mark.parametrize(
    ("configured", "session_id"),
    [(False, "s1"), (True, None)],
    ids=["no state dir", "no session id"],
)
def test_nothing_is_written_without_a_state_dir_and_a_session(
    research, tmp_path, monkeypatch, run, configured, session_id
) -> None:
    monkeypatch.delenv(STATE_DIR_ENV, raising=False)
    watched = {name: tmp_path / name for name in ("cwd", "tmp", "state")}
    for directory in watched.values():
        directory.mkdir()
    monkeypatch.chdir(watched["cwd"])
    monkeypatch.setattr(tempfile, "tempdir", str(watched["tmp"]))
    agent = research(
        part_models=phase_models("c", "a", "v"),
        state_dir=watched["state"] if configured else None,
    )

    reply = run(agent.run(TASK, session_id=session_id))

    assert reply.content == "v"
    assert (agent.state_dir is not None) is configured
    assert {name: list(d.iterdir()) for name, d in watched.items()} == {
        name: [] for name in watched
    }


def test_unsafe_session_ids_are_refused_when_checkpointing(research, state_dir, run) -> None:
    agent = research(part_models=phase_models("c"), state_dir=state_dir)
    with pytest.raises(ValueError, match="unusable session id"):
        run(agent.run(TASK, session_id="../elsewhere"))


INTERRUPTED_SCRIPT = textwrap.dedent("""
    import asyncio, os, sys
    from mindrian.agents import PipelineAgent
    from mindrian.testing import ScriptedModel
    from mindrian.testing.pytest_plugin import OfflineGuard

    OfflineGuard().install()  # the child process must stay offline too

    class Research(PipelineAgent):
        agent_id = "deep-research"
        instructions = "Be rigorous."
        phases = (
            ("Clarify", "Restate the question."),
            ("Analyze", "Break it down."),
            ("Validate", "Check the analysis."),
        )

    def killed(messages):
        os._exit(17)  # the process dies in the middle of the second phase

    models = {"Clarify": ScriptedModel("question restated"), "Analyze": ScriptedModel(killed)}
    agent = Research(part_models=models, state_dir=sys.argv[1])
    asyncio.run(agent.run(sys.argv[2], session_id="s1"))
    """)


def test_a_process_killed_mid_phase_resumes_in_a_new_process(
    research, state_dir, run, tmp_path
) -> None:
    script = tmp_path / "interrupted.py"
    script.write_text(INTERRUPTED_SCRIPT, encoding="utf-8")

    killed = subprocess.run(
        [sys.executable, str(script), str(state_dir), TASK],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO_ROOT), "AGNO_TELEMETRY": "false", "PATH": ""},
    )
    assert killed.returncode == 17, killed.stderr
    models = {
        **phase_models("unused", "three drivers found", "analysis holds"),
        "Clarify": ScriptedModel(id="Clarify"),
    }
    reply = run(research(part_models=models, state_dir=state_dir).run(TASK, session_id="s1"))

    assert not models["Clarify"].calls
    assert models["Analyze"].calls[0].last_user_message.startswith("question restated")
    assert [p.output for p in reply.partials] == [
        "question restated",
        "three drivers found",
        "analysis holds",
    ]


def test_a_retried_handoff_of_the_same_session_resumes(research, state_dir, run) -> None:
    first = failing_at_analyze()
    agent = research(part_models=first, state_dir=state_dir)
    failed = run(agent.process_handoff(agent.create_handoff_context(TASK, session_id="h1")))
    retry = research(
        part_models={**phase_models("unused", "a", "v"), "Clarify": first["Clarify"]},
        state_dir=state_dir,
    )

    result = run(retry.process_handoff(retry.create_handoff_context(TASK, session_id="h1")))

    assert not failed.success and "provider down" in failed.error
    assert result.success, result.error
    assert result.output.startswith("v\n\n## Partial results\n\n### Clarify\n\nquestion restated")
    assert len(first["Clarify"].calls) == 1
