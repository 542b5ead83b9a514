"""A project built from the real skills of the orchestration flow, once per test session."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The skills of Larry's flow: the orchestrator and the two frameworks it delegates to.
FLOW_SKILLS = ("larry", "pws", "devil-advocate")


@pytest.fixture(scope="session")
def built_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project holding the flow's skills, built through all seven phases by ``mindrian build``.

    The result is what a fresh clone builds: ``generated/`` packages, ``generated/registry.yaml``
    and the embedded registry ``.mindrian/registry.lbug``.
    """
    project = tmp_path_factory.mktemp("flow")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "flow"\nversion = "0"\n\n[tool.mindrian]\n', encoding="utf-8"
    )
    for name in FLOW_SKILLS:
        shutil.copytree(ROOT / "skills" / name, project / "skills" / name)
    done = subprocess.run(
        [sys.executable, "-m", "builder", "build", "--all", "--jobs", "2"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return project
