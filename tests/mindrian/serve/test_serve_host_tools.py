"""``mindrian serve --host-tools`` over HTTP: each user's own folder, and a call no rule allows
paused with AgentOS's human-in-the-loop confirmation until the client confirms or rejects it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from host_project import build_host_project
from http_server import Server, running_server

from mindrian.testing.served import serve_process

pytestmark = pytest.mark.slow  # mindrian init, build and serve processes


def _call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_call": {"name": tool, "arguments": arguments}}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path, Path]]:
    """The project served with host tools on; (server, served root, the package's skill files)."""
    folder = tmp_path_factory.mktemp("serve")
    (folder / "project").mkdir()
    project = build_host_project(folder / "project")
    skill = project / "generated" / "repo_check" / "skill"
    root = folder / "root"
    root.mkdir()
    answers = [
        # A run: a pre-approved read runs at once, the write waits, then the answer.
        _call("Read", file_path=f"{skill}/references/guide.md"),
        _call("Write", file_path="report.md", content="REPORT: 3"),
        {"json": {"output": "written"}},
        # A second run: its write is rejected.
        _call("Write", file_path="other.md", content="no"),
        {"json": {"output": "not written"}},
        # A run from a user whose name is a path.
        _call("Write", file_path="x.md", content="x"),
        {"json": {"output": "written"}},
    ]
    script = folder / "script.yaml"
    script.write_text(yaml.safe_dump({"agents": {"repo-check": answers}}))
    args = [
        "--db", f"sqlite:///{folder / 'sessions.db'}", "--model", f"scripted:{script}",
        "--host-tools", "--workspace", str(root),
    ]  # fmt: skip
    log = folder / "server.log"
    with running_server(args, env={}, log=log, cwd=project) as server:
        yield server, root, skill
    assert "warning: repo-check pre-approves commands that run arbitrary code for every user, " \
        "without asking: Bash(python3:*)" in log.read_text()  # fmt: skip


def _start(server: Server, message: str, **form: str) -> dict[str, Any]:
    return server.run("repo-check", message, session_id=message.replace(" ", "-"), **form)


def _answer(server: Server, run: dict[str, Any], confirmed: bool, **form: str) -> Any:
    tools = [
        {**requirement["tool_execution"], "confirmed": confirmed}
        for requirement in run["requirements"]
    ]
    return server.client.post(
        f"/agents/repo-check/runs/{run['run_id']}/continue",
        data={
            "tools": json.dumps(tools),
            "session_id": run["session_id"],
            "stream": "false",
            **form,
        },
    )


def test_a_call_no_rule_allows_waits_for_the_client_in_each_users_folder(served: Any) -> None:
    # One scenario, in the order the script answers (a module's tests may run on other workers).
    server, root, _skill = served
    # 1. A pre-approved read runs at once; the write pauses the run until it is confirmed.
    run = _start(server, "write the report")
    assert run["status"] == "PAUSED"
    pending = [r["tool_execution"] for r in run["requirements"]]
    assert [(p["tool_name"], p["tool_args"]) for p in pending] == [
        ("Write", {"content": "REPORT: 3", "file_path": "report.md"})
    ]
    assert not (root / "anonymous" / "report.md").exists()  # nothing ran yet
    done = _answer(server, run, confirmed=True)
    assert done.status_code == 200, done.text
    assert (done.json()["status"], done.json()["content"]["output"]) == ("COMPLETED", "written")
    assert (root / "anonymous" / "report.md").read_text() == "REPORT: 3"
    stored = server.client.get(
        f"/agents/repo-check/runs/{run['run_id']}", params={"session_id": run["session_id"]}
    )
    assert stored.json()["status"] == "COMPLETED"
    # 2. A rejected call does not run, and the run goes on.
    run = _start(server, "write another")
    assert run["status"] == "PAUSED"
    done = _answer(server, run, confirmed=False)
    assert (done.json()["status"], done.json()["content"]["output"]) == ("COMPLETED", "not written")
    assert not (root / "anonymous" / "other.md").exists()
    # 3. Each user works in a folder of their own; a user id that is a path is a digest.
    run = _start(server, "as someone", user_id="../../etc")
    done = _answer(server, run, confirmed=True, user_id="../../etc")
    assert done.json()["status"] == "COMPLETED", done.text
    (written,) = list(root.rglob("x.md"))
    assert written.parent.parent == root and written.parent.name.startswith("u-")


def test_a_run_cannot_go_on_with_calls_left_unanswered(served: Any) -> None:
    server, _root, _skill = served
    run = {"run_id": "nope", "session_id": "nope", "requirements": []}
    refused = _answer(server, run, confirmed=True)
    assert refused.status_code == 404


def test_serve_says_at_start_what_the_host_tools_allow_or_that_they_are_off(served: Any) -> None:
    from mindrian.model_choice import ModelChoice
    from mindrian.project import ProjectPaths
    from mindrian.serve import ServeConfig, host_tool_warnings

    project = ProjectPaths(served[2].parents[2])
    off = ServeConfig(project, ModelChoice(None))
    assert host_tool_warnings(off) == [
        "note: host tools are off (--host-tools, or host-tools = true in [tool.mindrian.serve], "
        "turns them on); granted by: repo-check"
    ]
    on = ServeConfig(project, ModelChoice(None), host_tools=True)
    assert host_tool_warnings(on) == [
        "warning: repo-check pre-approves commands that run arbitrary code for every user, "
        "without asking: Bash(python3:*)"
    ]


def test_the_project_turns_host_tools_on_and_the_command_line_overrides_it(
    served: Any, tmp_path: Path
) -> None:
    project = served[2].parents[2]
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.mindrian.serve]\nhost-tools = true\n")
    on = (
        "warning: repo-check pre-approves commands that run arbitrary code for every user, "
        "without asking: Bash(python3:*)"
    )
    off = "note: host tools are off ("
    for switch, says, not_said in (([], on, off), (["--no-host-tools"], off, on)):
        log = tmp_path / f"serve{len(switch)}.log"
        args = ["--db", f"sqlite:///{tmp_path / 'sessions.db'}", "--model", "openai:gpt-4o"]
        with serve_process([*args, *switch], cwd=project, log=log, env={}):
            started = log.read_text()
        assert says in started and not_said not in started, started
