"""Over HTTP against ``mindrian serve``: every guarantee of the wrapper holds behind AgentOS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from http_server import Server, running_server
from model_scripts import GOOD_PWS, SCHEMA_BREAKING_PWS, write_script

pytestmark = pytest.mark.slow  # mindrian serve / run processes

#: Deep research's three phases, in order.
_PHASES = ("clarify", "analyse", "validate")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the module: SQLite sessions, scripted answers, Larry's registry missing."""
    folder = tmp_path_factory.mktemp("serve")
    script = write_script(
        folder / "script.yaml",
        {
            "pws-validation": [GOOD_PWS, SCHEMA_BREAKING_PWS],
            # The first run's analyse phase answers nothing; the second run has all three.
            "deep-research": ["clarified 1", "", "clarified 2", "analysed 2", "validated 2"],
            "larry": ["never sent: Larry must refuse before asking the model"],
            "lean-canvas": ["streamed step 1"],
        },
    )
    args = ["--db", f"sqlite:///{folder / 'sessions.db'}", "--model", f"scripted:{script}"]
    env = {
        "MINDRIAN_STATE_DIR": str(folder / "state"),
        # Larry's required MCP server cannot open this registry, so it exits at start.
        "MINDRIAN_REGISTRY": str(folder / "missing" / "registry.lbug"),
    }
    with running_server(args, env=env, log=folder / "server.log") as running:
        yield running


def test_every_registered_agent_is_served(server: Server) -> None:
    ids = [agent["id"] for agent in server.client.get("/agents").json()]
    assert ids == [
        "de-bono-hats",
        "deep-research",
        "devil-advocate",
        "jtbd",
        "larry",
        "lean-canvas",
        "minto-pyramid",
        "pws-validation",
    ]


def test_an_anonymous_local_server_describes_its_api(server: Server) -> None:
    described = server.client.get("/openapi.json")
    assert described.status_code == 200, described.text
    assert "/agents/{agent_id}/runs" in described.json()["paths"]
    for page in ("/docs", "/redoc"):
        assert server.client.get(page).status_code == 200, page


def test_an_operator_answers_with_its_output_schema_and_a_breaking_answer_fails(
    server: Server,
) -> None:
    good = server.run("pws-validation", "Validate: a marketplace for used lab equipment")
    bad = server.run("pws-validation", "Validate it again")

    assert good["status"] == "COMPLETED"
    assert good["content_type"] == "PwsValidationOutput"
    pillars = GOOD_PWS["json"]["scores"]
    assert {name: good["content"]["scores"][name] for name in pillars} == pillars
    assert good["content"]["output"] == GOOD_PWS["json"]["output"]
    assert bad["status"] == "ERROR"
    assert bad["content"] == (
        "output did not match schema: PwsValidationOutput: "
        "scores.problem: Input should be less than or equal to 25; scores.people: Field required"
    )


def test_larry_is_refused_when_its_required_mcp_server_is_unavailable(server: Server) -> None:
    refused = server.run("larry", "Help me think about my startup", session_id="larry-down")

    assert refused["status"] == "ERROR"
    assert refused["content"].startswith("MCP server 'mindrian' is unavailable: ")
    # The scripted answer was never taken: no assistant message came from the model.
    assert [m["role"] for m in refused["messages"]] == ["user", "assistant"]
    assert refused["messages"][1]["content"] == refused["content"]


def test_a_failing_pipeline_phase_stops_the_run_there(server: Server) -> None:
    failed = server.run("deep-research", "How big is the market for lab equipment resale?")
    after = server.run("deep-research", "And in Germany?")

    assert failed["status"] == "ERROR"
    assert failed["content"] == "pipeline 'deep-research': phase 'analyse' produced no output"
    # validate never ran: the next run's three phases take the next three answers in order.
    assert after["status"] == "COMPLETED"
    assert after["content"].startswith("validated 2\n\n## Partial results")
    for phase, answer in zip(_PHASES, ("clarified 2", "analysed 2", "validated 2"), strict=True):
        assert f"### {phase}\n\n{answer}" in after["content"]


def test_a_streamed_guided_run_ends_with_run_paused(server: Server) -> None:
    response = server.client.post(
        "/agents/lean-canvas/runs", data={"message": "Office coffee", "session_id": "streamed"}
    )
    lines = response.text.splitlines()
    events = [line.removeprefix("event: ") for line in lines if line.startswith("event: ")]
    assert events == ["RunStarted", "RunContent", "RunPaused"]
    stored = server.client.get("/sessions/streamed/runs", params={"type": "agent"}).json()
    assert [run["status"] for run in stored] == ["PAUSED"]


def test_a_guided_run_pauses_at_each_step_and_resumes_after_a_restart(tmp_path: Path) -> None:
    steps = [f"canvas step {n}" for n in range(1, 9)]
    script = write_script(tmp_path / "script.yaml", {"lean-canvas": steps})
    args = ["--db", f"sqlite:///{tmp_path / 'sessions.db'}", "--model", f"scripted:{script}"]
    env = {"MINDRIAN_STATE_DIR": str(tmp_path / "state")}

    with running_server(args, env=env, log=tmp_path / "first.log") as first:
        run = first.run("lean-canvas", "Coffee subscriptions for offices", session_id="canvas")
        assert run["status"] == "PAUSED"
        assert run["content"].startswith("canvas step 1\n\nStep 1 of 7 (problem):")
        second = first.continue_run("lean-canvas", run, "Offices run out of good coffee")
        assert (second["status"], second["run_id"]) == ("PAUSED", run["run_id"])
        assert "Step 2 of 7 (customer segments)" in second["content"]
        back = first.continue_run("lean-canvas", run, "back")
        assert "Step 1 of 7 (problem)" in back["content"]
        assert back["content"].startswith("canvas step 1\n\n")  # shown again, not re-asked
        again = first.continue_run("lean-canvas", run, "Offices of 20-200 people")
        # Step 2 runs again on the new answer: the model's third answer.
        assert again["content"].startswith("canvas step 3\n\nStep 2 of 7")

    with running_server(args, env=env, log=tmp_path / "second.log") as restarted:
        skipped = restarted.continue_run("lean-canvas", run, "skip")
        # A new process with a fresh script: the step number comes from the stored progress.
        assert skipped["status"] == "PAUSED"
        assert skipped["content"].startswith("canvas step 1\n\nStep 3 of 7")
        for answer in ("a", "b", "c", "d"):
            last = restarted.continue_run("lean-canvas", run, answer)
        assert "Step 7 of 7" in last["content"] and last["status"] == "PAUSED"
        done = restarted.continue_run("lean-canvas", run, "final answer")
        assert done["status"] == "COMPLETED"
        assert "### customer segments (skipped)" in done["content"]
        finished = restarted.client.post(
            f"/agents/lean-canvas/runs/{run['run_id']}/continue",
            data={"input": "more", "session_id": "canvas", "stream": "false"},
        )
        assert finished.status_code == 409
