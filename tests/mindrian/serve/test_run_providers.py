"""``mindrian run`` and ``serve`` on real providers, offline: a missing key, a server that is down.

Nothing here reaches a model: the key is missing, or the base URL is a closed port of
127.0.0.1 (9, discard), so each run must end in one clean line, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from http_server import ROOT, running_server

pytestmark = pytest.mark.slow  # mindrian run / serve processes

#: A base URL nothing listens on.
_DOWN = "http://127.0.0.1:9/v1"


#: Credentials, and model choices, the runs below must not find.
_UNSET = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "MINDRIAN_MODEL",
    "MINDRIAN_BASE_URL",
)


def _run(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _UNSET}
    return subprocess.run(
        [sys.executable, "-m", "builder", "run", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "PYTHONPATH": str(ROOT), "MINDRIAN_STATE_DIR": str(state)},
    )


def test_a_missing_key_is_one_line_naming_the_variable(tmp_path: Path) -> None:
    done = _run(
        "pws-validation", "Lab equipment resale", "--model", "openai:gpt-4o-mini", state=tmp_path
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "error: pws-validation: openai: set OPENAI_API_KEY in the environment "
        "(or --base-url URL for an OpenAI-compatible server)\n"
    )


def test_a_missing_anthropic_key_is_one_line_too(tmp_path: Path) -> None:
    """Repro: Claude's client was built without a key, so the run printed three ERROR lines
    of Agno's and the SDK's "Could not resolve authentication method" instead."""
    chosen = _run(
        "pws-validation",
        "Lab equipment resale",
        "--model",
        "anthropic:claude-sonnet-4-5",
        state=tmp_path,
    )
    own = _run("pws-validation", "Lab equipment resale", state=tmp_path)  # the skill's own model
    for done in (chosen, own):
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == (
            "error: pws-validation: anthropic: set ANTHROPIC_API_KEY in the environment\n"
        )


@pytest.mark.parametrize(
    ("agent_id", "budget", "failure"),
    [
        (
            "deep-research",
            4000,
            "pipeline 'deep-research': phase 'clarify' failed: Connection error.",
        ),
        (
            "de-bono-hats",
            8000,
            "team 'de-bono-hats' run ended with status ERROR: Connection error.",
        ),
    ],
)
def test_a_thinking_agent_on_a_server_that_is_down_ends_in_a_connection_error(
    tmp_path: Path, agent_id: str, budget: int, failure: str
) -> None:
    done = _run(
        agent_id, "EV charging", "--model", "openai-chat:x", "--base-url", _DOWN, state=tmp_path
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "cannot take" not in done.stderr  # adapted, not refused
    lines = done.stderr.splitlines()
    assert lines[0] == (
        f"warning: {agent_id}: openai-chat:x (OpenAIChat) takes no thinking_budget: "
        f"thinking_budget={budget} dropped"
    )
    assert lines[-1] == f"error: {agent_id}: {failure}"


def test_no_thinking_drops_the_budget_without_a_warning(tmp_path: Path) -> None:
    done = _run(
        "deep-research",
        "EV",
        "--model",
        "openai-chat:x",
        "--base-url",
        _DOWN,
        "--no-thinking",
        "--max-tokens",
        "16",
        state=tmp_path,
    )
    assert done.returncode == 1
    assert "warning" not in done.stderr
    assert done.stderr.splitlines()[-1].endswith("phase 'clarify' failed: Connection error.")


def test_serve_reports_a_server_that_is_down_as_a_failed_run(tmp_path: Path) -> None:
    args = ["--db", f"sqlite:///{tmp_path / 'sessions.db'}", "--model", "openai-chat:x"]
    env = {"MINDRIAN_STATE_DIR": str(tmp_path / "state"), "MINDRIAN_BASE_URL": _DOWN}
    with running_server(args, env=env, log=tmp_path / "server.log") as server:
        pipeline = server.run("deep-research", "EV charging")
        team = server.run("de-bono-hats", "EV charging")
    assert (pipeline["status"], team["status"]) == ("ERROR", "ERROR")
    assert (
        pipeline["content"] == "pipeline 'deep-research': phase 'clarify' failed: Connection error."
    )
    assert team["content"].endswith("Connection error.")
    # Agno logs the failed run with its stack in the server's log; the answer over HTTP is clean.
    assert "Traceback" not in json.dumps([pipeline, team])


def test_a_recorded_run_replays_byte_for_byte(tmp_path: Path) -> None:
    # The scripted example stands in for a real model here; make e2e-model records real ones.
    record = tmp_path / "recorded.yaml"
    first = _run(
        "deep-research",
        "EV",
        "--model",
        "scripted:examples/pws.yaml",
        "--record",
        str(record),
        state=tmp_path / "a",
    )
    replay = _run("deep-research", "EV", "--model", f"scripted:{record}", state=tmp_path / "b")
    assert record.read_text(encoding="utf-8").startswith("# Recorded by mindrian --record")
    assert (replay.returncode, replay.stdout, replay.stderr) == (
        first.returncode,
        first.stdout,
        first.stderr,
    )
