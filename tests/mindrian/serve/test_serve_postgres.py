"""Two ``mindrian serve`` replicas sharing sessions in a throw-away PostgreSQL cluster.

In CI (``CI=true``) this test must run: missing PostgreSQL binaries fail it
instead of skipping it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from http_server import Server, running_server
from model_scripts import write_script
from postgres_required import require_postgres

from mindrian.testing.postgres import (
    throwaway_cluster,
)

pytestmark = pytest.mark.slow  # mindrian serve / run processes


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    """A fresh cluster's URL; skipped without PostgreSQL binaries, except in CI."""
    require_postgres()
    with throwaway_cluster() as url:
        yield url


def test_two_replicas_share_guided_progress_and_role_history(
    database_url: str, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "script.yaml",
        {
            "lean-canvas": [f"canvas step {n}" for n in range(1, 9)],
            "larry": ["Tell me who has the problem.", "Then let us test that first."],
        },
    )
    args = ["--db", database_url, "--model", f"scripted:{script}"]

    with (
        running_server(args, env={}, log=tmp_path / "a.log") as first,
        running_server(args, env={}, log=tmp_path / "b.log") as second,
    ):
        run = first.run("lean-canvas", "Coffee subscriptions for offices", session_id="shared")
        assert run["status"] == "PAUSED" and "Step 1 of 7" in run["content"]
        moved = second.continue_run("lean-canvas", run, "Offices run out of good coffee")
        assert moved["status"] == "PAUSED" and "Step 2 of 7" in moved["content"]
        # The first replica sees the progress the second one made.
        skipped = first.continue_run("lean-canvas", run, "skip")
        assert "Step 3 of 7" in skipped["content"]

        said = first.run("larry", "I want to sell coffee to offices", session_id="chat")
        answered = second.run("larry", "Who should I talk to first?", session_id="chat")
        assert (said["status"], answered["status"]) == ("COMPLETED", "COMPLETED")
        for replica in (first, second):
            history = _session_messages(replica, "chat")
            assert history == [
                ("user", "I want to sell coffee to offices"),
                ("assistant", "Tell me who has the problem."),
                ("user", "Who should I talk to first?"),
                # Each replica replays its own copy of the script from the start.
                ("assistant", "Tell me who has the problem."),
            ]


def _session_messages(server: Server, session_id: str) -> list[tuple[str, str]]:
    response = server.client.get(f"/sessions/{session_id}/runs", params={"type": "agent"})
    assert response.status_code == 200, response.text
    pairs = []
    for run in response.json():
        pairs.append(("user", run["run_input"]))
        pairs.append(("assistant", run["content"]))
    return pairs
