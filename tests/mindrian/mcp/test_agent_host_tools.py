"""``mindrian mcp --agents`` on a new project whose skill grants host tools: calls no rule allows
are denied over MCP (nobody can be asked) and the result says so; ``--approve`` allows them.
The skill's files are served from the package's copy, byte-identical."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp_clients import ROOT, raw, stdio_client_of, stdio_params

pytestmark = pytest.mark.slow  # mindrian init and build, then a server per test

SKILL = """\
---
name: note-taker
description: Keeps notes on a working tree. Use when someone asks to note what is in it.
allowed-tools: Read
---

# Note taker

Read the file the user names. Write a summary of it to `notes.md`.
Follow `references/style.md` for the tone.
"""


def _mindrian(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "builder", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "PYTHONPATH": str(ROOT)},
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    assert _mindrian("init", cwd=root).returncode == 0
    skill = root / "skills" / "note-taker"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    (skill / "references" / "style.md").write_bytes(b"# Style\r\nShort lines.\n\xe2\x9c\x93\n")
    built = _mindrian("build", "--all", cwd=root)
    assert built.returncode == 0, built.stderr
    spec = yaml.safe_load((root / "generated" / "note_taker" / "spec.yaml").read_text())
    assert "Write" in spec["tools"]["host"]["grant"]
    assert spec["tools"]["host"]["allow"] == ["Read"]
    return root


def _script(path: Path) -> str:
    calls = [
        {"name": "Read", "arguments": {"file_path": "a.txt"}},
        {"name": "Write", "arguments": {"file_path": "notes.md", "content": "alpha\n"}},
    ]
    answers = [{"tool_call": c} for c in calls] + [{"json": {"output": "noted"}}]
    path.write_text(yaml.safe_dump({"answers": answers}))
    return f"scripted:{path}"


async def _ask(project: Path, args: list[str], errlog: Path) -> tuple[Any, dict[str, Any]]:
    with errlog.open("w") as log:
        async with stdio_client_of(stdio_params(*args, cwd=project), log) as client:
            run = await client.call_tool("note-taker", {"message": "Note what a.txt says"})
            listing = await raw(client, "skills/list", {})
    return run, listing


def _workspace(tmp_path: Path) -> Path:
    work = tmp_path / "W"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    return work


def test_a_call_no_rule_allows_is_denied_and_the_result_says_so(
    project: Path, tmp_path: Path
) -> None:
    work = _workspace(tmp_path)
    args = ["--agents", "--model", _script(tmp_path / "s.yaml"), "--workspace", str(work)]
    run, listing = anyio.run(_ask, project, args, tmp_path / "err.log")
    calls = {c["tool"]: c for c in run.structured_content["tool_calls"]}
    assert calls["Read"]["outcome"] == "ran"
    assert calls["Write"]["outcome"] == "denied"
    assert "cannot be asked over MCP" in calls["Write"]["output"]
    assert not (work / "notes.md").exists()
    (skill,) = listing["skills"]
    assert [r["uri"] for r in skill["resources"]] == [
        "skill://note-taker/SKILL.md",
        "skill://note-taker/references/style.md",
    ]
    style = (project / "skills" / "note-taker" / "references" / "style.md").read_bytes()
    assert skill["resources"][1]["digest"] == "sha256:" + hashlib.sha256(style).hexdigest()


def test_approve_allows_the_call_in_advance(project: Path, tmp_path: Path) -> None:
    work = _workspace(tmp_path)
    args = ["--agents", "--model", _script(tmp_path / "s.yaml"), "--workspace", str(work)]
    run, _ = anyio.run(_ask, project, [*args, "--approve", "Write"], tmp_path / "err.log")
    calls = {c["tool"]: c for c in run.structured_content["tool_calls"]}
    assert calls["Write"]["outcome"] == "ran"
    assert (work / "notes.md").read_text() == "alpha\n"
