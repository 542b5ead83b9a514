"""The README's first run as written (issue 38, 7): ``mindrian new`` writes a model script
beside the skill, so ``run`` and ``serve`` with ``--model scripted:…`` work with no API key,
a second served run included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from http_server import ROOT, running_server

pytestmark = pytest.mark.slow  # a build and a server in subprocesses


def _mindrian(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "builder", *args],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_the_readme_first_run_works_with_the_script_new_writes(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    _mindrian(project, "init")
    _mindrian(project, "new", "pricing-check", "--type", "operator")
    script = "skills/pricing-check/model-script.yaml"
    assert (project / script).is_file()
    _mindrian(project, "build", "--all", "--quiet")
    ran = _mindrian(project, "run", "pricing-check", "Per seat?", "--model", f"scripted:{script}")
    assert ran.stdout.startswith("A scripted answer")
    args = ["--model", f"scripted:{script}", "--db", f"sqlite:///{tmp_path / 'sessions.db'}"]
    with running_server(args, env={}, log=tmp_path / "serve.log", cwd=project) as server:
        runs = [server.run("pricing-check", "Per seat?") for _ in range(2)]
    assert [r["status"] for r in runs] == ["COMPLETED", "COMPLETED"]
