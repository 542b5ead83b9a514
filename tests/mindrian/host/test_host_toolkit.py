"""Host tools under a hostile scripted model: every call confined, checked, bounded, recorded."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mindrian.agents import OperatorAgent
from mindrian.host import (
    Approving,
    HostGrant,
    HostSession,
    ToolLog,
    ToolRecord,
    ToolRequest,
    parse_rules,
)
from mindrian.testing import ScriptedModel, Step, ToolCall

ALL = ("Bash", "Read", "Write", "Edit", "Glob", "Grep", "WebFetch")
SKILL_RULES = ("Bash(git status:*)", "Bash(python3:*)", "Read")


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """tmp/secret.txt beside tmp/W (the workspace) and tmp/pkg/skill (the skill's files)."""
    (tmp_path / "secret.txt").write_text("top secret\n")
    workspace = tmp_path / "W"
    workspace.mkdir()
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "escape").symlink_to(tmp_path / "secret.txt")
    (workspace / "outside").symlink_to(tmp_path)
    skill = tmp_path / "pkg" / "skill"
    (skill / "scripts").mkdir(parents=True)
    (skill / "references").mkdir()
    (skill / "scripts" / "hello.py").write_text("import os\nprint('hello from', os.getcwd())\n")
    (skill / "references" / "guide.md").write_text("# Guide\nBe brief.\n")
    return tmp_path


class Recorder:
    """The approver of a test: answers ``yes`` and remembers what it was asked."""

    def __init__(self, yes: bool = False) -> None:
        self.asked: list[str] = []
        self.yes = yes
        self.denial = "the user said no"

    def approve(self, request: ToolRequest) -> bool:
        self.asked.append(request.label)
        return self.yes


def run_calls(
    place: Path,
    *calls: ToolCall,
    allow: tuple[str, ...] = SKILL_RULES,
    grant: tuple[str, ...] = ALL,
    approver: Any = None,
    approved: tuple[str, ...] = (),
) -> tuple[tuple[ToolRecord, ...], ScriptedModel]:
    """Run an operator whose model makes ``calls`` (one turn each), then answers."""
    agent_cls = type(
        "HostileOperator",
        (OperatorAgent,),
        {
            "agent_id": "hostile",
            "name": "hostile",
            "host_grant": HostGrant(grant, parse_rules(allow)),
            "skill_dir": place / "pkg" / "skill",
        },
    )
    model = ScriptedModel(*(Step(tool_calls=(call,)) for call in calls), {"output": "done"})
    agent = agent_cls(model=model)
    log = ToolLog()
    session = HostSession(
        place / "W", approver=approver or Recorder(), approved=parse_rules(approved), log=log
    )
    agent.use_host(session)
    asyncio.run(agent.run("do it"))
    model.assert_complete()
    return log.records, model


def outcomes(records: tuple[ToolRecord, ...]) -> list[str]:
    return [r.outcome for r in records]


def test_the_model_is_told_where_the_skills_files_and_the_workspace_are(place: Path) -> None:
    _records, model = run_calls(place)
    system = model.calls[0].contents("system")[0]
    assert f"Base directory for this skill's files: {(place / 'pkg' / 'skill').resolve()}" in system
    assert f"Workspace (where commands run and files are written): {place / 'W'}" in system
    assert model.calls[0].tools == ("Bash", "Edit", "Glob", "Grep", "Read", "WebFetch", "Write")


def test_without_a_session_or_a_grant_the_agent_has_no_host_tool(place: Path) -> None:
    class Plain(OperatorAgent):
        agent_id = "plain"
        host_grant = HostGrant(ALL, ())

    model = ScriptedModel({"output": "done"})
    asyncio.run(Plain(model=model).run("x"))
    assert model.calls[0].tools == ()
    assert "Base directory" not in model.calls[0].contents("system")[0]


def test_the_skills_script_runs_in_the_workspace_and_its_files_are_readable(place: Path) -> None:
    script = place / "pkg" / "skill" / "scripts" / "hello.py"
    records, _ = run_calls(
        place,
        ToolCall("Bash", {"command": f"python3 {script}"}),
        ToolCall("Read", {"file_path": str(place / "pkg" / "skill" / "references" / "guide.md")}),
        ToolCall("Read", {"file_path": "a.txt"}),
        ToolCall("Grep", {"pattern": "Be", "path": str(place / "pkg" / "skill")}),
        ToolCall("Glob", {"pattern": "**/*.txt"}),
    )
    assert outcomes(records) == ["ran"] * 5
    assert records[0].output == f"hello from {place / 'W'}"
    assert records[1].output == "     1\t# Guide\n     2\tBe brief."
    assert records[2].output == "     1\talpha"
    assert records[3].output == "references/guide.md:2:Be brief."
    assert records[4].output == "a.txt"  # the link to secret.txt is not listed


@pytest.mark.parametrize(
    "path",
    ["../secret.txt", "escape", "outside/secret.txt", "W/../../secret.txt", "/etc/passwd", "~/x"],
)
def test_reads_leading_out_of_the_workspace_are_refused(place: Path, path: str) -> None:
    records, _ = run_calls(place, ToolCall("Read", {"file_path": path}))
    assert outcomes(records) == ["refused"]
    assert records[0].output.startswith(f"Refused: {path} is outside the workspace")


def test_absolute_paths_of_the_secret_are_refused(place: Path) -> None:
    records, _ = run_calls(
        place,
        ToolCall("Read", {"file_path": str(place / "secret.txt")}),
        ToolCall("Grep", {"pattern": "secret", "path": str(place)}),
        ToolCall("Glob", {"pattern": "../*"}),
        approver=Approving(),
    )
    assert outcomes(records) == ["refused", "refused", "refused"]
    assert "top secret" not in "".join(r.output for r in records)


def test_the_skills_files_are_never_writable_even_when_approved(place: Path) -> None:
    guide = place / "pkg" / "skill" / "references" / "guide.md"
    records, _ = run_calls(
        place,
        ToolCall("Write", {"file_path": str(guide), "content": "pwned"}),
        ToolCall("Edit", {"file_path": str(guide), "old_string": "Be", "new_string": "Never"}),
        ToolCall("Write", {"file_path": "../secret.txt", "content": "pwned"}),
        ToolCall("Write", {"file_path": "escape", "content": "pwned"}),
        approver=Approving(),
    )
    assert outcomes(records) == ["refused"] * 4
    assert "read-only" in records[0].output
    assert guide.read_text() == "# Guide\nBe brief.\n"
    assert (place / "secret.txt").read_text() == "top secret\n"


def test_what_no_rule_allows_is_asked_and_denied_with_nothing_changed(place: Path) -> None:
    no = Recorder()
    records, model = run_calls(
        place,
        ToolCall("Bash", {"command": "git status; cat ../secret.txt"}),
        ToolCall("Bash", {"command": "rm -f a.txt"}),
        ToolCall("Write", {"file_path": "b.txt", "content": "x"}),
        ToolCall("Edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}),
        approver=no,
    )
    assert outcomes(records) == ["denied"] * 4
    assert no.asked == [
        "Bash(git status; cat ../secret.txt)",
        "Bash(rm -f a.txt)",
        "Write(b.txt)",
        "Edit(a.txt)",
    ]
    assert records[1].output == "Denied: Bash(rm -f a.txt): the user said no."
    assert model.calls[2].contents("tool")[-1] == records[1].output  # the model is told why
    assert (place / "W" / "a.txt").read_text() == "alpha\n"
    assert sorted(p.name for p in (place / "W").iterdir()) == ["a.txt", "escape", "outside"]


def test_a_user_rule_approves_what_the_skill_did_not(place: Path) -> None:
    records, _ = run_calls(
        place,
        ToolCall("Write", {"file_path": "sub/b.txt", "content": "beta"}),
        ToolCall("Edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "gamma"}),
        approved=("Write", "Edit(*.txt)"),
    )
    assert outcomes(records) == ["ran", "ran"]
    assert (place / "W" / "sub" / "b.txt").read_text() == "beta"
    assert (place / "W" / "a.txt").read_text() == "gamma\n"


@pytest.mark.parametrize(
    "command",
    [
        "git status --output=../x",
        "git status ..",
        "git status escape",
        "python3 ../secret.txt",
        "git status /etc",
    ],
)
def test_a_pre_approved_program_gets_no_path_leading_out(place: Path, command: str) -> None:
    records, _ = run_calls(place, ToolCall("Bash", {"command": command}))
    assert outcomes(records) == ["refused"]
    assert "names a path outside the workspace" in records[0].output
    assert not (place / "x").exists()


def test_options_before_the_approved_words_are_not_approved(place: Path) -> None:
    no = Recorder()
    records, _ = run_calls(
        place,
        ToolCall("Bash", {"command": "git -c core.fsmonitor=touch status"}),
        ToolCall("Bash", {"command": "git --git-dir=../.git status"}),
        approver=no,
    )
    assert outcomes(records) == ["denied", "denied"]


def test_commands_do_not_see_the_providers_keys(place: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-leak")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-leak")
    monkeypatch.setenv("MINDRIAN_DB_URL", "postgresql://u:pw@db/x")
    code = "import os; print(sorted(os.environ))"
    records, _ = run_calls(place, ToolCall("Bash", {"command": f'python3 -c "{code}"'}))
    assert outcomes(records) == ["ran"]
    assert "leak" not in records[0].output and "pw@" not in records[0].output
    assert "OPENAI_API_KEY" not in records[0].output and "PATH" in records[0].output


def test_a_huge_output_keeps_its_first_and_last_halves(place: Path) -> None:
    code = "import sys; sys.stdout.write('a' * 3_000_000 + 'b' * 2_000_000)"
    records, _ = run_calls(place, ToolCall("Bash", {"command": f'python3 -c "{code}"'}))
    cut = "\n[output cut: 4970000 bytes not shown]\n"
    assert records[0].output == "a" * 15_000 + cut + "b" * 15_000


def test_a_command_that_never_ends_is_killed_with_its_children(place: Path) -> None:
    marker = place / "W" / "child.pid"
    code = (
        "import subprocess, time; "
        f"p = subprocess.Popen(['sleep', '300']); open('{marker}', 'w').write(str(p.pid)); "
        "time.sleep(300)"
    )
    start = time.monotonic()
    # 10 s: a loaded machine may take seconds to start python3, which writes the marker first.
    records, _ = run_calls(
        place, ToolCall("Bash", {"command": f'python3 -c "{code}"', "timeout": 10_000})
    )
    assert time.monotonic() - start < 60  # a bound on a hang
    assert records[0].output.endswith("[killed after 10 s: the command did not finish in time]")
    child = int(marker.read_text())
    deadline = time.monotonic() + 60  # a bound on a hang
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (killed, not yet reaped by init) is no longer running.
    status = Path(f"/proc/{pid}/stat")
    return not status.exists() or status.read_text().split(")")[-1].split()[0] != "Z"


def test_an_approved_compound_command_runs_in_a_shell_in_the_workspace(place: Path) -> None:
    records, _ = run_calls(
        place, ToolCall("Bash", {"command": "echo one > b.txt && cat b.txt | tr o O"}),
        approver=Recorder(yes=True),
    )  # fmt: skip
    assert (outcomes(records), records[0].output) == (["ran"], "One")
    assert (place / "W" / "b.txt").read_text() == "one\n"


def test_only_granted_tools_are_offered(place: Path) -> None:
    _records, model = run_calls(place, grant=("Read",))
    assert model.calls[0].tools == ("Read",)


@pytest.fixture
def local_site() -> Iterator[str]:
    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<html><body><h1>Local</h1><script>x()</script></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def test_webfetch_reaches_a_private_address_only_with_the_users_approval(
    place: Path, local_site: str
) -> None:
    records, _ = run_calls(
        place,
        ToolCall("WebFetch", {"url": local_site}),
        ToolCall("WebFetch", {"url": "file:///etc/passwd"}),
        allow=("WebFetch", "WebFetch(domain:127.0.0.1)"),
    )
    assert outcomes(records) == ["denied", "refused"]  # the skill's rules do not cover it
    records, _ = run_calls(
        place, ToolCall("WebFetch", {"url": local_site}), approver=Recorder(yes=True)
    )
    assert (outcomes(records), records[0].output) == (["ran"], "Local")


def test_glob_and_grep_do_not_walk_out_through_a_link_to_the_root(place: Path) -> None:
    (place / "W" / "disk").symlink_to("/")
    (place / "W" / "guide-link.md").symlink_to(place / "pkg" / "skill" / "references" / "guide.md")
    start = time.monotonic()
    records, _ = run_calls(
        place,
        ToolCall("Glob", {"pattern": "**/passwd"}),
        ToolCall("Grep", {"pattern": "root:", "glob": "passwd"}),
        ToolCall("Grep", {"pattern": "brief", "glob": "*.md"}),
        ToolCall("Glob", {"pattern": "*.md"}),
    )
    assert time.monotonic() - start < 60  # a bound on a walk of the whole disk
    assert [r.output for r in records] == [
        "[no file matches]",
        "[no match]",
        "guide-link.md:2:Be brief.",  # a link to a skill file is shown by its own name
        "guide-link.md",
    ]


def test_an_empty_command_is_refused_without_asking_anyone(place: Path) -> None:
    nobody = Recorder(yes=True)
    records, _ = run_calls(place, ToolCall("Bash", {"command": "  "}), approver=nobody)
    assert (outcomes(records), records[0].output) == (["refused"], "Refused: the command is empty.")
    assert nobody.asked == []
