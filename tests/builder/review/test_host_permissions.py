"""Issue 33's build side, end to end in a new project: a skill with ``allowed-tools`` and files
under scripts/, references/ and assets/ builds into a package holding those files byte for byte
(scripts keep their mode), ``mindrian check`` sees a changed mode, and ``mindrian diff`` names
adding ``Write`` to ``allowed-tools`` as a permission change."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.slow  # whole builds

PYPROJECT = '[project]\nname = "demo"\n\n[tool.mindrian]\n'
SKILL = """\
---
name: repo-check
description: Checks a repository's state with the skill's script and reports what it finds.
allowed-tools: Bash(git status:*) Bash(python3:*) Read
---

# Repo check

Run the skill's check, then fill in `assets/report-template.md`:

```bash
python3 scripts/check.py
```
"""
FILES = {
    "scripts/check.py": (b"#!/usr/bin/env python3\nprint('clean')\n", True),
    "scripts/helper.sh": (b"#!/bin/sh\necho helper\n", True),
    "references/checklist.md": (b"# Checklist\n\nLook at untracked files first.\n", False),
    "assets/report-template.md": (b"# Report\n\n- state:\n", False),
    "assets/logo.bin": (bytes(range(256)) * 4, False),
}


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    folder = root / "skills" / "repo-check"
    folder.mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (folder / "SKILL.md").write_text(SKILL, encoding="utf-8")
    for name, (data, executable) in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o755 if executable else 0o644)
    _git(root, "init", "--quiet", "--initial-branch=main")
    return root


Run = Callable[..., Any]


def _build(cli: Run, root: Path) -> None:
    result = cli(["build", "--all", "--quiet"], root)
    assert result.code == 0, result.out + result.err


def test_the_package_holds_the_skill_files_and_diff_names_a_new_permission(
    cli: Run, project: Path
) -> None:
    _build(cli, project)
    package = project / "generated" / "repo_check"
    copied = package / "skill"
    for name, (data, executable) in {**FILES, "SKILL.md": (SKILL.encode(), False)}.items():
        assert (copied / name).read_bytes() == data, name
        assert bool((copied / name).stat().st_mode & stat.S_IXUSR) == executable, name
    host = yaml.safe_load((package / "spec.yaml").read_text(encoding="utf-8"))["tools"]["host"]
    assert host["grant"] == ["Bash", "Read"]
    assert host["allow"] == ["Bash(git status:*)", "Bash(python3:*)", "Read"]
    prompt = (package / "instructions.md").read_text(encoding="utf-8")
    assert "- `assets/report-template.md`\n- `assets/logo.bin`" not in prompt  # sorted, below
    assert "- `assets/logo.bin`\n- `assets/report-template.md`\n" in prompt
    assert "skill/**/*" in (package / "pyproject.toml").read_text(encoding="utf-8")

    # A script that loses its mode in generated/ is drift.
    (copied / "scripts" / "check.py").chmod(0o644)
    result = cli(["check"], project)
    assert result.code == 1
    assert "generated/repo_check/skill/scripts/check.py" in result.out + result.err
    _build(cli, project)
    assert (copied / "scripts" / "check.py").stat().st_mode & stat.S_IXUSR
    assert cli(["check"], project).code == 0

    _git(project, "add", "-A")
    _git(project, "commit", "--quiet", "-m", "repo-check")
    skill = project / "skills" / "repo-check" / "SKILL.md"
    skill.write_text(SKILL.replace(" Read\n", " Read Write\n"), encoding="utf-8")
    _build(cli, project)
    result = cli(["diff", "HEAD", "--format", "json"], project)
    assert result.code == 0, result.err
    report = json.loads(result.out)
    (agent,) = report["agents"]
    permissions = {
        (c["kind"], c["field"], c["name"]) for c in agent["changes"] if c["aspect"] == "permissions"
    }
    assert permissions == {("added", "host tool", "Write"), ("added", "pre-approved", "Write")}
    assert (
        'permission change: repo-check gets `"Write"` and repo-check pre-approves `"Write"`'
        in (report["verdict"])
    )
    markdown = cli(["diff", "HEAD"], project).out
    assert '- permissions: host tool `"Write"` added: `"allowed-tools names Write"`' in markdown


def test_a_file_over_the_copy_limit_is_left_out_with_a_located_warning(
    cli: Run, project: Path
) -> None:
    big = project / "skills" / "repo-check" / "assets" / "huge.bin"
    big.write_bytes(b"\0" * ((1 << 20) + 1))
    result = cli(["build", "--all"], project)
    assert result.code == 0, result.out + result.err
    shown = result.out + result.err
    assert "skills/repo-check/assets/huge.bin: warning[W122]: assets/huge.bin (1048577 bytes)" in (
        shown
    )
    assert not (project / "generated" / "repo_check" / "skill" / "assets" / "huge.bin").exists()
    assert os.path.exists(project / "generated" / "repo_check" / "skill" / "assets" / "logo.bin")
