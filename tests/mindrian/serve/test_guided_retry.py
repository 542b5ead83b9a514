"""A blind retry of a guided answer records it once (issue 38, 10), across two processes.

Agno stores a continued run in two writes: the session's row (with the guided progress), then
the run's row. A client whose answer timed out sends the same request again; behind a load
balancer it may reach another replica while the first one is between the two writes. That
replica read progress already past the step and took the answer to the next step as well, so
the answer was recorded twice. With an ``Idempotency-Key`` the retry is answered with where the
session stands, and the answer is taken once.

Two ``mindrian serve`` processes share one SQLite database; the first is held between the two
writes by a hook injected on its ``PYTHONPATH`` (``pause_between_writes/sitecustomize.py``), so
the retry lands there every time.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from http_server import ROOT
from model_scripts import write_script

from mindrian.testing.served import serve_process

pytestmark = pytest.mark.slow  # two mindrian serve processes

HOOK = Path(__file__).resolve().parent / "pause_between_writes"
ANSWER = "Offices run out of good coffee"
#: Seconds the first replica may take to reach the pause.
REACH_SECONDS = 60.0


def _continue(client: httpx.Client, run: dict[str, Any], answer: str, key: str) -> httpx.Response:
    return client.post(
        f"/agents/lean-canvas/runs/{run['run_id']}/continue",
        data={"input": answer, "session_id": run["session_id"], "stream": "false"},
        headers={"Idempotency-Key": key},
    )


def test_a_retry_between_the_two_writes_records_the_answer_once(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.yaml", {"lean-canvas": ["canvas step"]}, repeat=True)
    args = ["--db", f"sqlite:///{tmp_path / 'sessions.db'}", "--model", f"scripted:{script}"]
    env = {"MINDRIAN_STATE_DIR": str(tmp_path / "state")}
    paused = {
        **env,
        "PAUSE_BETWEEN_WRITES": str(tmp_path),
        "PYTHONPATH": f"{HOOK}{os.pathsep}{ROOT}",
    }
    with (
        serve_process(args, cwd=ROOT, log=tmp_path / "a.log", env=paused) as url_a,
        serve_process(args, cwd=ROOT, log=tmp_path / "b.log", env=env) as url_b,
        httpx.Client(base_url=url_a, timeout=120.0) as a,
        httpx.Client(base_url=url_b, timeout=120.0) as b,
    ):
        started = b.post(
            "/agents/lean-canvas/runs",
            data={"message": "Coffee for offices", "session_id": "canvas", "stream": "false"},
        )
        assert started.status_code == 200, started.text
        run = started.json()
        assert "Step 1 of 7" in run["content"]

        (tmp_path / "arm").touch()
        first: dict[str, httpx.Response] = {}
        answering = threading.Thread(
            target=lambda: first.update(answer=_continue(a, run, ANSWER, "answer-1"))
        )
        answering.start()
        deadline = time.monotonic() + REACH_SECONDS
        while not (tmp_path / "reached").exists():
            assert answering.is_alive() and time.monotonic() < deadline, (
                tmp_path / "a.log"
            ).read_text()
            time.sleep(0.02)
        # A has stored the session's row, not yet the run's: the client's blind retry, to B.
        retried = _continue(b, run, ANSWER, "answer-1")
        (tmp_path / "release").touch()
        answering.join(timeout=120.0)

        assert retried.status_code == 200, retried.text
        assert "Step 2 of 7" in retried.json()["content"], retried.json()["content"]
        assert first["answer"].status_code == 200, first["answer"].text
        assert "Step 2 of 7" in first["answer"].json()["content"]
        # The answer is taken once: the next one moves to step 3, not 4.
        nxt = _continue(b, run, "Offices of 20-200 people", "answer-2")
        assert nxt.status_code == 200, nxt.text
        assert "Step 3 of 7" in nxt.json()["content"], nxt.json()["content"]
        (stored,) = b.get("/sessions/canvas/runs", params={"type": "agent"}).json()
        said = [m["content"] for m in stored["messages"] if m["role"] == "user"]
        assert said.count(ANSWER) == 1, said
        # The same key with another answer is not a retry: refused, nothing applied.
        reused = _continue(b, run, "something else", "answer-2")
        assert reused.status_code == 409, reused.text
        assert (
            "Step 3 of 7"
            in _continue(b, run, "Offices of 20-200 people", "answer-2").json()["content"]
        )
