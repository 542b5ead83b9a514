"""Issue 33's scenario through the command line: a new project's skill with ``allowed-tools`` and
its own files, run with scripted tool calls in a workspace, with no terminal to ask."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from host_project import build_host_project, mindrian

pytestmark = pytest.mark.slow  # mindrian init, build and run processes


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new project with the skill built."""
    return build_host_project(tmp_path_factory.mktemp("project"))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """W, a git repository with a.txt, beside a secret and with a link leading to it."""
    (tmp_path / "secret.txt").write_text("top secret\n")
    work = tmp_path / "W"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / "a.txt").write_text("alpha\n")
    (work / "escape").symlink_to(tmp_path / "secret.txt")
    return work


def script(path: Path, *calls: dict[str, Any]) -> str:
    answers = [{"tool_call": call} for call in calls] + [{"json": {"output": "done"}}]
    path.write_text(yaml.safe_dump({"answers": answers}))
    return f"scripted:{path}"


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


def test_the_skills_files_travel_byte_identical_with_the_package(project: Path) -> None:
    source, copy = project / "skills" / "repo-check", project / "generated" / "repo_check" / "skill"
    for name in ("scripts/count.py", "references/guide.md", "assets/template.txt"):
        assert (copy / name).read_bytes() == (source / name).read_bytes()
    assert os.access(copy / "scripts" / "count.py", os.X_OK)


def test_the_scenario_runs_refuses_and_denies_as_the_rules_say(
    project: Path, workspace: Path, tmp_path: Path
) -> None:
    skill = project / "generated" / "repo_check" / "skill"
    model = script(
        tmp_path / "script.yaml",
        call("Bash", command=f"python3 {skill}/scripts/count.py"),
        call("Read", file_path=f"{skill}/references/guide.md"),
        call("Read", file_path=f"{skill}/assets/template.txt"),
        call("Read", file_path="a.txt"),
        call("Read", file_path="../secret.txt"),
        call("Read", file_path="escape"),
        call("Bash", command="git status --short"),
        call("Bash", command="git status; cat ../secret.txt"),
        call("Bash", command="rm -f a.txt"),
        call("Write", file_path="a.txt", content="overwritten"),
    )
    record = tmp_path / "record.yaml"
    done = mindrian(
        "run", "repo-check", "Report on W", "--model", model, "--workspace", str(workspace),
        "--json", "--record", str(record), cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    calls = json.loads(done.stdout)["tool_calls"]
    assert [(c["tool"], c["outcome"]) for c in calls] == [
        ("Bash", "ran"),
        ("Read", "ran"),
        ("Read", "ran"),
        ("Read", "ran"),
        ("Read", "refused"),
        ("Read", "refused"),
        ("Bash", "ran"),
        ("Bash", "denied"),
        ("Bash", "denied"),
        ("Write", "denied"),
    ]
    assert calls[0]["output"] == f"files in {workspace} 3"  # .git, a.txt, escape
    assert calls[1]["output"].endswith("Report in one line.")
    assert calls[2]["output"] == "     1\tREPORT: {files}"
    assert calls[3]["output"] == "     1\talpha"
    assert "top secret" not in done.stdout
    assert calls[6]["output"] == "?? a.txt\n?? escape"
    assert "no terminal to ask" in calls[9]["output"]
    assert (workspace / "a.txt").read_text() == "alpha\n"
    # Each call is shown on stderr as it ends, and --record keeps them.
    assert "Read(../secret.txt): refused: Refused: ../secret.txt is outside" in done.stderr
    assert yaml.safe_load(record.read_text())["tool_calls"] == calls


def test_approve_write_lets_the_write_run(project: Path, workspace: Path, tmp_path: Path) -> None:
    model = script(tmp_path / "s.yaml", call("Write", file_path="a.txt", content="approved"))
    done = mindrian(
        "run", "repo-check", "x", "--model", model, "--workspace", str(workspace), "--json",
        "--approve", "Write", cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [c["outcome"] for c in json.loads(done.stdout)["tool_calls"]] == ["ran"]
    assert (workspace / "a.txt").read_text() == "approved"


def test_an_approve_value_that_is_no_rule_is_an_error(project: Path) -> None:
    done = mindrian("run", "repo-check", "x", "--approve", "Curl(x)", cwd=project)
    assert done.returncode == 2
    assert done.stderr.startswith("error[X008]: --approve 'Curl(x)': unknown tool 'Curl'")
