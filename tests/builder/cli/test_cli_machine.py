"""Generated output is the same on every machine: PATH, HOME and the working folder do not show."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Slow: two whole builds through the command line.
pytestmark = pytest.mark.slow

_PYPROJECT = """\
[project]
name = "demo"

[tool.mindrian]

[tool.mindrian.mcp.localsrv]
command = "local-mcp-server"
tools = ["ping"]
"""

_SKILL = """\
---
name: probe-skill
description: Checks a plan for gaps.
type: operator
metadata:
  mindrian:
    tools:
      mcp_servers:
        - server: localsrv
          tools:
            - ping
          required: false
---
# Probe

## Methodology

Ask what is missing.
"""


def _project(root: Path) -> Path:
    (root / "skills" / "probe").mkdir(parents=True)
    (root / "pyproject.toml").write_text(_PYPROJECT, encoding="utf-8")
    (root / "skills" / "probe" / "SKILL.md").write_text(_SKILL, encoding="utf-8")
    return root


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_generated_output_does_not_depend_on_path_home_or_cwd(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    server = tools / "local-mcp-server"
    server.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    server.chmod(0o755)
    (tmp_path / "empty").mkdir()

    here = _project(tmp_path / "here")
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(tmp_path / "home-a"))
    first = cli(["build", "--all"], here)
    assert first.code == 0, first.out + first.err
    assert "W401" not in first.out + first.err

    # Another checkout on a machine whose PATH lacks the server, built from a subfolder.
    there = _project(tmp_path / "elsewhere" / "there")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("HOME", str(tmp_path / "home-b"))
    second = cli(["build", "--all"], there / "skills")
    assert second.code == 0, second.out + second.err
    # The machine's answer is still reported, as a build warning rather than a spec field.
    assert (
        "skills/probe/SKILL.md:9: warning[W401]: optional MCP server 'localsrv' is unavailable "
        "on this machine: command 'local-mcp-server' is not on PATH"
    ) in second.out + second.err

    built, rebuilt = _files(here / "generated"), _files(there / "generated")
    assert "probe_skill/spec.yaml" in built
    assert sorted(built) == sorted(rebuilt)
    for name, data in built.items():
        assert data == rebuilt[name], f"generated/{name} differs between the two machines"
