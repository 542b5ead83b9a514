"""A new project whose skill is written for a host: ``allowed-tools``, scripts, references, assets
(issue 33's scenario), built with ``mindrian init`` and ``build``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

__all__ = ["SKILL", "build_host_project", "mindrian"]

SKILL = """\
---
name: repo-check
description: Reports on the state of a working tree. Use when someone asks what changed in it.
allowed-tools: Bash(git status:*) Bash(python3:*) Read
---

# Repo check

Run `scripts/count.py` to count the files of the workspace, read `references/guide.md` for how
to report, and shape the report as `assets/template.txt` shows. Write the report to `report.md`.
"""


def mindrian(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``mindrian ARGS`` with no terminal (stdin is empty) and no provider key."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "builder", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )


def build_host_project(root: Path) -> Path:
    """``root`` made a project holding the skill ``repo-check``, built; returns ``root``."""
    assert mindrian("init", cwd=root).returncode == 0
    skill = root / "skills" / "repo-check"
    for folder in ("scripts", "references", "assets"):
        (skill / folder).mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    (skill / "scripts" / "count.py").write_text(
        "import os\nprint('files in', os.getcwd(), len(os.listdir('.')))\n"
    )
    (skill / "scripts" / "count.py").chmod(0o755)
    (skill / "references" / "guide.md").write_text("# Guide\nReport in one line.\n")
    (skill / "assets" / "template.txt").write_text("REPORT: {files}\n")
    built = mindrian("build", "--all", cwd=root)
    assert built.returncode == 0, built.stderr
    spec = yaml.safe_load((root / "generated" / "repo_check" / "spec.yaml").read_text())
    assert spec["tools"]["host"]["grant"] == ["Bash", "Read", "Write"]
    assert spec["tools"]["host"]["allow"] == ["Bash(git status:*)", "Bash(python3:*)", "Read"]
    return root
