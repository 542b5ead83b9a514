"""RoleAgent: SQLite history across runs and instances, TRANSFER accepted."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from mindrian.agents import STATE_DIR_ENV, RoleAgent
from mindrian.handoff import HandoffManager, HandoffType
from mindrian.testing import ScriptedModel


@pytest.fixture
def larry(agent_class):
    return agent_class(
        RoleAgent, agent_id="larry", instructions="Ask questions; never give answers."
    )


def test_history_persists_across_runs_and_instances(larry, state_dir, run) -> None:
    first = ScriptedModel("What problem do you see?")
    run(larry(model=first, state_dir=state_dir).run("I want an AI chatbot", session_id="chat-1"))

    second = ScriptedModel("Who has that problem?")
    reply = run(
        larry(model=second, state_dir=state_dir).run("Support is slow", session_id="chat-1")
    )

    assert reply.content == "Who has that problem?"
    assert second.calls[0].pairs[1:] == (
        ("user", "I want an AI chatbot"),
        ("assistant", "What problem do you see?"),
        ("user", "Support is slow"),
    )
    assert "never give answers" in second.calls[0].contents("system")[0]
    assert (state_dir / "roles" / "larry.db").is_file()
    first.assert_complete()
    second.assert_complete()


def test_sessions_do_not_share_history(larry, state_dir, run) -> None:
    model = ScriptedModel("one", "two")
    agent = larry(model=model, state_dir=state_dir)
    run(agent.run("in session a", session_id="a"))
    run(agent.run("in session b", session_id="b"))
    assert model.calls[1].contents("user") == ("in session b",)
    assert agent.history("a") == (("user", "in session a"), ("assistant", "one"))


def test_transfer_is_accepted_and_the_session_is_remembered(larry, state_dir, run) -> None:
    model = ScriptedModel("Hi, I am Larry. Tell me about the churn.", "And who churns most?")
    agent = larry(model=model, state_dir=state_dir)
    manager = HandoffManager()
    manager.register_agent("larry", agent)
    context = manager.create_delegation(
        from_agent="orchestrator",
        to_agent="larry",
        task="Take over the user",
        session_id="s-9",
    )

    result = run(manager.transfer(context))
    follow_up = run(agent.run("Mostly new accounts churn", session_id="s-9"))

    assert result.success, result.error
    assert result.output == "Hi, I am Larry. Tell me about the churn."
    assert manager.owner("s-9") == "larry"
    assert follow_up.content == "And who churns most?"
    assert "Take over the user" in model.calls[1].contents("user")[0]
    model.assert_complete()


def test_direct_transfer_context_is_accepted(larry, state_dir, run) -> None:
    agent = larry(model=ScriptedModel("Hello"), state_dir=state_dir)
    context = agent.create_handoff_context(
        "talk to the user", session_id="t", handoff_type=HandoffType.TRANSFER
    )
    assert run(agent.process_handoff(context)).success


def test_state_dir_comes_from_the_environment_when_not_given(larry, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(STATE_DIR_ENV, str(tmp_path / "from-env"))
    assert larry(model=ScriptedModel()).db_file == tmp_path / "from-env" / "roles" / "larry.db"


def test_without_any_state_dir_a_per_process_temp_dir_is_used(larry, monkeypatch) -> None:
    monkeypatch.delenv(STATE_DIR_ENV, raising=False)
    first = larry(model=ScriptedModel()).state_dir
    second = larry(model=ScriptedModel()).state_dir
    assert first == second
    assert first.is_dir() and first.name.startswith("mindrian-state-")
    assert Path(tempfile.gettempdir()) in first.parents
