"""``ServedAgent`` in process: AgentOS keeps the guarantees (HTTP: tests/mindrian/serve)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agno.db.sqlite import SqliteDb
from agno.exceptions import RunNotContinuableError
from agno.run.base import RunStatus
from agno.run.requirement import RunRequirement

from mindrian.agents import GuidedAgent, OperatorAgent, RoleAgent
from mindrian.agents.served import GUIDED_STATE_KEY, ServedAgent
from mindrian.host import Approving, Denying, HostGrant, HostSession, parse_rules
from mindrian.testing import ScriptedModel, Step, ToolCall


class _Persona(RoleAgent):
    agent_id = "persona"
    instructions = "Talk with the user."


class _Scorer(OperatorAgent):
    agent_id = "scorer"


def _fail(messages: Any) -> str:
    raise RuntimeError("provider down")


def test_role_history_comes_from_the_session_without_failed_runs(tmp_path: Path) -> None:
    model = ScriptedModel(_fail, "First answer.", "Second answer.")
    served = ServedAgent.of(
        _Persona(model=model, state_dir=tmp_path), db=SqliteDb(db_file=str(tmp_path / "s.db"))
    )

    async def talk() -> list[Any]:
        return [
            await served.arun(text, session_id="chat", stream=False)
            for text in ("Lost message", "Hello", "And then?")
        ]

    failed, first, second = asyncio.run(talk())
    assert failed.status == RunStatus.error
    assert (first.content, second.content) == ("First answer.", "Second answer.")
    seen = [pair for pair in model.calls[-1].pairs if pair[0] != "system"]
    assert seen == [
        ("user", "Hello"),
        ("assistant", "First answer."),
        ("user", "And then?"),
    ]


def test_an_answer_breaking_the_schema_is_a_failed_run(tmp_path: Path) -> None:
    model = ScriptedModel({"output": "fine", "confidence": 0.5}, {"output": "bad", "confidence": 7})
    served = ServedAgent.of(_Scorer(model=model), db=SqliteDb(db_file=str(tmp_path / "s.db")))

    async def both() -> list[Any]:
        return [await served.arun("score it", stream=False) for _ in range(2)]

    good, bad = asyncio.run(both())
    assert (good.status, good.content_type) == (RunStatus.completed, "HandoffOutput")
    assert good.content.output == "fine"
    assert bad.status == RunStatus.error
    assert bad.content.startswith("output did not match schema: HandoffOutput: confidence:")


def test_a_served_role_agents_host_tools_work_in_the_users_own_folder(tmp_path: Path) -> None:
    class Writer(RoleAgent):
        agent_id = "writer"
        host_grant = HostGrant(("Write", "Edit"), parse_rules(["Write"]))

    model = ScriptedModel(
        Step(tool_calls=(ToolCall("Write", {"file_path": "note.md", "content": "hi"}),)),
        Step(
            tool_calls=(
                ToolCall("Edit", {"file_path": "note.md", "old_string": "hi", "new_string": "ho"}),
            )
        ),
        "Done.",
    )
    agent = Writer(model=model, state_dir=tmp_path / "state")
    root = tmp_path / "root"
    root.mkdir()
    agent.use_host(HostSession(root, approver=Denying("no client to ask"), per_user=True))
    served = ServedAgent.of(agent, db=SqliteDb(db_file=str(tmp_path / "s.db")))
    run = asyncio.run(served.arun("write", session_id="s", user_id="alice", stream=False))
    assert (run.status, run.content) == (RunStatus.completed, "Done.")
    assert (root / "alice" / "note.md").read_text() == "hi"  # the Edit was denied
    assert not (root / "note.md").exists()
    assert model.calls[2].contents("tool")[-1] == "Denied: Edit(note.md): no client to ask."


def test_a_served_role_agents_call_waits_for_the_clients_confirmation(tmp_path: Path) -> None:
    class Writer(RoleAgent):
        agent_id = "writer"
        host_grant = HostGrant(("Write",), ())

    model = ScriptedModel(
        Step(tool_calls=(ToolCall("Write", {"file_path": "note.md", "content": "hi"}),)),
        "Written.",
    )
    agent = Writer(model=model, state_dir=tmp_path / "state")
    root = tmp_path / "root"
    root.mkdir()
    agent.use_host(HostSession(root, approver=Approving(), confirm_in_run=True, per_user=True))
    served = ServedAgent.of(agent, db=SqliteDb(db_file=str(tmp_path / "s.db")))

    async def ask_then_confirm() -> tuple[Any, Any]:
        paused = await served.arun("write", session_id="s", user_id="bob", stream=False)
        assert not (root / "bob" / "note.md").exists()
        call = paused.requirements[0].tool_execution
        call.confirmed = True
        done = await served.acontinue_run(
            paused.run_id, requirements=[RunRequirement(tool_execution=call)],
            session_id="s", user_id="bob",
        )  # fmt: skip
        return paused, done

    paused, done = asyncio.run(ask_then_confirm())
    assert (paused.status, paused.requirements[0].tool_execution.tool_name) == (
        RunStatus.paused,
        "Write",
    )
    assert (done.status, done.content) == (RunStatus.completed, "Written.")
    assert (root / "bob" / "note.md").read_text() == "hi"


def test_damaged_guided_progress_in_a_session_is_an_error_naming_it(tmp_path: Path) -> None:
    """Issue 38, 10: served, a guided session's progress lives in the session's session_data;
    damaged (keys missing), continuing it raised a TypeError and a new run's error text was
    Python's message about ``GuidedProgress.__init__``."""

    class Canvas(GuidedAgent):
        agent_id = "value-canvas"
        steps = (("Customer", "Ask who."), ("Problem", "Ask what."))

    db = SqliteDb(db_file=str(tmp_path / "s.db"))
    served = ServedAgent.of(Canvas(model=ScriptedModel("Who?", "What?")), db=db)
    paused = asyncio.run(served.arun("a canvas", session_id="c1", stream=False))
    assert paused.status == RunStatus.paused
    session = served.get_session("c1")
    assert session is not None and session.session_data is not None
    session.session_data[GUIDED_STATE_KEY] = {"agent_id": "value-canvas"}
    served.upsert_session(session)
    named = "session 'c1': damaged guided progress in its session_data ['mindrian_guided'] ("
    with pytest.raises(RunNotContinuableError) as refused:
        asyncio.run(served.acontinue_run(paused.run_id, input="Shops", session_id="c1"))
    assert str(refused.value).startswith(named), refused.value
    failed = asyncio.run(served.arun("Shops", session_id="c1", stream=False))
    assert failed.status == RunStatus.error
    assert str(failed.content).startswith(named), failed.content
