"""Two ``mindrian serve`` replicas on one PostgreSQL: one is SIGKILLed mid-run, PostgreSQL restarts.

Operator runs and guided answers go to replica A, many in flight, and A is
killed with SIGKILL while they run. Through replica B every session is then
checked: a run A answered is stored exactly once and COMPLETED; a run A was
killed in is either not stored (the client saw the failure and retries it) or
stored once; a guided answer is applied once or not at all (the client reads
the run before answering again). After the retries no run or step is lost or
duplicated. Then PostgreSQL is restarted under B: requests fail cleanly (a
status and a reason, no traceback, no connection string) and B recovers.

In CI (``CI=true``) this test must run: missing PostgreSQL binaries fail it
instead of skipping it.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from http_server import ROOT
from model_scripts import GOOD_PWS, write_script
from postgres_required import require_postgres

from mindrian.testing.postgres import (
    Cluster,
    restartable_cluster,
)
from mindrian.testing.served import server_process

pytestmark = pytest.mark.slow  # mindrian serve processes and a PostgreSQL cluster

#: Operator runs sent to the replica that is killed.
OPERATOR_RUNS = 48
#: Guided sessions; each gets one answer on the replica that is killed.
GUIDED_SESSIONS = 8
#: Operator runs sent to replica B while A is loaded and killed.
B_RUNS = 8
#: Requests in flight at a time.
IN_FLIGHT = 8
#: Answers received from replica A before it is killed.
KILL_AFTER = 12
#: Seconds replica B gets to recover once PostgreSQL is back.
RECOVERY_SECONDS = 60.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A fresh, restartable cluster; skipped without PostgreSQL binaries, except in CI."""
    require_postgres()
    with restartable_cluster() as running:
        yield running


def test_a_killed_replica_loses_and_duplicates_nothing(cluster: Cluster, tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "script.yaml",
        {"pws-validation": [GOOD_PWS], "lean-canvas": ["canvas step"]},
        repeat=True,
    )
    args = ["--db", cluster.url, "--model", f"scripted:{script}"]
    env = {"MINDRIAN_STATE_DIR": str(tmp_path / "state")}
    with (
        server_process(args, cwd=ROOT, log=tmp_path / "a.log", env=env) as (url_a, process_a),
        server_process(args, cwd=ROOT, log=tmp_path / "b.log", env=env) as (url_b, _),
        httpx.Client(base_url=url_a, timeout=120.0) as a,
        httpx.Client(base_url=url_b, timeout=120.0) as b,
    ):
        guided = {
            f"g{n}": _ok(_post_run(a if n % 2 else b, "lean-canvas", f"g{n}", "Office coffee"))
            for n in range(GUIDED_SESSIONS)
        }
        # Operator runs through B too, while A works: B is a replica, not a standby.
        with ThreadPoolExecutor(1) as on_b:
            before = on_b.map(_run_on(b), [f"b{n}" for n in range(B_RUNS)])
            outcomes = _load_and_kill(a, process_a, guided)
            outcomes |= dict(before)
        counts = _check_and_repair(b, outcomes, guided)
        print(f"\nreplica kill: {counts}")  # the figures the issue asks for (pytest -s)
        assert counts["kills"] == 1
        assert counts["interrupted"] > 0, "the kill hit no run in flight"
        assert counts["answered"] >= KILL_AFTER
        assert (counts["lost"], counts["duplicated"]) == (0, 0)

        _restart_postgres_under(b, cluster)


def _post_run(client: httpx.Client, agent: str, session_id: str, message: str) -> httpx.Response:
    form = {"message": message, "session_id": session_id, "stream": "false"}
    return client.post(f"/agents/{agent}/runs", data=form)


def _answer(client: httpx.Client, run: dict[str, Any], text: str) -> httpx.Response:
    form = {"input": text, "session_id": run["session_id"], "stream": "false"}
    return client.post(f"/agents/lean-canvas/runs/{run['run_id']}/continue", data=form)


def _run_on(client: httpx.Client) -> Callable[[str], tuple[str, str]]:
    def run(session_id: str) -> tuple[str, str]:
        body = _ok(_post_run(client, "pws-validation", session_id, f"Validate {session_id}"))
        assert body["status"] == "COMPLETED", body
        return session_id, "ok"

    return run


def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _load_and_kill(
    a: httpx.Client, process: subprocess.Popen[bytes], guided: dict[str, dict[str, Any]]
) -> dict[str, str]:
    """Send every operator run and one answer per guided session to A; SIGKILL A midway.

    Returns each request's outcome by session id: ``ok`` (A answered 200 with a
    finished run) or ``failed`` (the connection broke).
    """
    answered = 0
    lock = threading.Lock()

    def send(session_id: str) -> tuple[str, str]:
        nonlocal answered
        try:
            if session_id in guided:
                response = _answer(a, guided[session_id], f"answer of {session_id}")
            else:
                response = _post_run(a, "pws-validation", session_id, f"Validate {session_id}")
        except httpx.TransportError:
            return session_id, "failed"
        body = _ok(response)
        assert body["status"] in ("COMPLETED", "PAUSED"), body
        with lock:
            answered += 1
            if answered == KILL_AFTER:  # the other requests in flight are cut mid-run
                process.send_signal(signal.SIGKILL)
        return session_id, "ok"

    work = [f"op{n}" for n in range(OPERATOR_RUNS)]
    work[::6] = list(guided)[: len(work[::6])]  # guided answers spread among the runs
    work += [g for g in guided if g not in work]
    with ThreadPoolExecutor(IN_FLIGHT) as pool:
        outcomes = dict(pool.map(send, work))
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    return outcomes


def _stored_runs(b: httpx.Client, session_id: str) -> list[dict[str, Any]]:
    response = b.get(f"/sessions/{session_id}/runs", params={"type": "agent"})
    if response.status_code == 404:
        return []
    runs: list[dict[str, Any]] = _ok(response)  # type: ignore[assignment]
    return runs


def _check_and_repair(
    b: httpx.Client, outcomes: dict[str, str], guided: dict[str, dict[str, Any]]
) -> dict[str, int]:
    """Check every session through B, retry what the kill interrupted, then count."""
    interrupted = sum(1 for outcome in outcomes.values() if outcome == "failed")
    for session_id, outcome in outcomes.items():
        stored = _stored_runs(b, session_id)
        if session_id in guided:
            _check_guided(b, session_id, stored, guided[session_id], outcome)
            continue
        # Never half-done: a stored run is a whole, finished one; a killed one left no row.
        assert all(run["status"] == "COMPLETED" for run in stored), stored
        if outcome == "ok":
            assert len(stored) == 1, (session_id, stored)
        elif not stored:  # interrupted before it was stored: the client runs it again
            _ok(_post_run(b, "pws-validation", session_id, f"Validate {session_id}"))
    lost = duplicated = 0
    for session_id in outcomes:
        stored = _stored_runs(b, session_id)
        if session_id in guided:
            said = _user_messages(stored)
            lost += said.count(f"answer of {session_id}") == 0
            duplicated += said.count(f"answer of {session_id}") > 1
            continue
        completed = [run for run in stored if run["status"] == "COMPLETED"]
        lost += not completed
        duplicated += len(stored) > 1
    return {
        "runs": len(outcomes),
        "kills": 1,
        "answered": sum(1 for o in outcomes.values() if o == "ok"),
        "interrupted": interrupted,
        "lost": lost,
        "duplicated": duplicated,
    }


def _check_guided(
    b: httpx.Client,
    session_id: str,
    stored: list[dict[str, Any]],
    run: dict[str, Any],
    outcome: str,
) -> None:
    """The answer is applied once (step 2 shown) or not at all; B finishes the session."""
    assert len(stored) == 1, stored  # one guided session is one run
    said = _user_messages(stored).count(f"answer of {session_id}")
    assert said <= 1
    if outcome == "ok":
        assert said == 1
    if said == 0:  # the kill came first: the client answers again, on B
        moved = _ok(_answer(b, run, f"answer of {session_id}"))
        assert "Step 2 of 7" in moved["content"], moved["content"]
    for step in range(3, 8):
        moved = _ok(_answer(b, run, f"step {step - 1} of {session_id}"))
        assert f"Step {step} of 7" in moved["content"], moved["content"]
    done = _ok(_answer(b, run, f"last answer of {session_id}"))
    assert done["status"] == "COMPLETED"


def _user_messages(stored: list[dict[str, Any]]) -> list[str]:
    return [
        str(message.get("content"))
        for run in stored
        for message in run.get("messages") or []
        if message.get("role") == "user"
    ]


def _restart_postgres_under(b: httpx.Client, cluster: Cluster) -> None:
    """With PostgreSQL down B answers with a clean error; once it is back, B serves again."""
    cluster.stop()
    try:
        for _ in range(3):
            down = _post_run(b, "pws-validation", "while-down", "Validate it")
            listed = b.get("/sessions", params={"type": "agent"})
            for response in (down, listed):
                assert response.status_code == 503, response.text
                assert response.json()["detail"] == (
                    "the session database is unavailable; retry shortly"
                )
    finally:
        cluster.start()
    deadline = time.monotonic() + RECOVERY_SECONDS
    while True:
        back = _post_run(b, "pws-validation", "after-restart", "Validate it")
        if back.status_code == 200 and back.json()["status"] == "COMPLETED":
            break
        assert time.monotonic() < deadline, f"no recovery: {back.status_code} {back.text}"
        time.sleep(1.0)
    assert [r["status"] for r in _stored_runs(b, "after-restart")][-1] == "COMPLETED"
