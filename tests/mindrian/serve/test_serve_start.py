"""What ``mindrian serve`` says before it serves: a port in use is a coded error, a model that
cannot be asked is a warning, and a run failing for want of a key is not worth retrying
(issue 38, 2 and 5)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from agno.db.sqlite import SqliteDb
from agno.run.base import RunStatus
from http_server import ROOT

from mindrian.agents import OperatorAgent
from mindrian.agents.served import ServedAgent
from mindrian.providers import ProviderModel
from mindrian.testing.served import serve_process

#: Every provider key the committed agents' models could read, emptied (Agno treats "" as unset).
_NO_KEYS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "MINDRIAN_MODEL": ""}


@pytest.mark.slow  # a mindrian process
def test_a_port_in_use_is_a_coded_error_before_the_serving_line() -> None:
    """Repro: ``serving … on http://127.0.0.1:P``, then uvicorn's ``[Errno 98]``, exit 3."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "builder", "serve", "--port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        f"error[X010]: cannot listen on 127.0.0.1:{port}: Address already in use "
        "(another server holds it? try --port)\n"
    )


@pytest.mark.slow  # a mindrian process
def test_serve_warns_at_start_of_each_agent_whose_model_has_no_key(tmp_path: Path) -> None:
    """Repro: serve started without a word, then answered every run 200 with status ERROR."""
    log = tmp_path / "serve.log"
    args = ["--db", f"sqlite:///{tmp_path / 'sessions.db'}"]
    with serve_process(args, cwd=ROOT, log=log, env=_NO_KEYS):
        lines = log.read_text(encoding="utf-8").splitlines()
    serving = next(i for i, line in enumerate(lines) if line.startswith("serving "))
    assert (
        "warning: agent 'pws-validation' cannot run until then: anthropic: "
        "set ANTHROPIC_API_KEY in the environment"
    ) in lines[:serving]


def test_a_run_without_an_api_key_is_not_retryable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repro: its metadata said ``"retryable": true``, so a client sent the run again."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    class Scorer(OperatorAgent):
        agent_id = "scorer"

    # As serve builds it: the agent's model a provider choice, checked before any request.
    agent = Scorer(model=ProviderModel("openai:gpt-4o"))
    served = ServedAgent.of(agent, db=SqliteDb(db_file=str(tmp_path / "s.db")))
    run = asyncio.run(served.arun("score it", stream=False))
    assert run.status == RunStatus.error
    assert run.metadata is not None and run.metadata["retryable"] is False
