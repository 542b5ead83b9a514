"""``build --all`` forgets the skills that are gone: their framework and their package.

Repro: deleting a skill left its package in ``generated/`` and its entry in
``registry.yaml``, so ``mindrian check`` failed and the fix it advised
(``mindrian build --all``) changed nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mindrian.graph import EmbeddedRegistry, load_registry_yaml
from mindrian.project import ProjectPaths

pytestmark = pytest.mark.slow  # whole builds in subprocesses

REPO = Path(__file__).resolve().parents[3]


def mindrian(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "builder", *args],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=900,
    )


def registered(project: Path) -> tuple[list[str], list[str]]:
    """The framework ids of registry.yaml and of the database."""
    paths = ProjectPaths(project)
    with EmbeddedRegistry(paths.embedded_registry, read_only=True) as registry:
        stored = sorted(r.id for r in registry.export())
    return sorted(r.id for r in load_registry_yaml(paths.registry_yaml)), stored


def test_a_deleted_skill_is_unregistered_and_uninstalled_by_build_all(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "skills").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.mindrian]\n')
    for name in ("pws", "jtbd"):
        shutil.copytree(REPO / "skills" / name, project / "skills" / name)
    assert mindrian(project, "build", "--all", "-q").returncode == 0
    mine = project / "generated" / "notes"  # a folder a person made: never touched
    mine.mkdir()
    (mine / "spec.yaml").write_text("id: jtbd\n")
    assert registered(project) == (["jtbd", "pws-validation"],) * 2

    # While a skill fails phase 1 it might be the one that owns jtbd: nothing is removed.
    shutil.rmtree(project / "skills" / "jtbd")
    (project / "skills" / "broken").mkdir()
    (project / "skills" / "broken" / "SKILL.md").write_text("no front matter\n")
    blocked = mindrian(project, "build", "--all", "--json")
    assert blocked.returncode == 1
    assert "removed" not in json.loads(blocked.stdout)
    assert "note: packages of skills no longer here stay installed until every skill" in (
        blocked.stderr
    )  # issue 38, 5: the postponement was silent
    assert (project / "generated" / "jtbd" / "agent.py").is_file()
    assert registered(project) == (["jtbd", "pws-validation"],) * 2

    shutil.rmtree(project / "skills" / "broken")
    done = mindrian(project, "build", "--all", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["removed"] == ["jtbd"]
    assert "removed jtbd: its skill is gone" in done.stderr
    assert not (project / "generated" / "jtbd").exists()
    assert (mine / "spec.yaml").read_text() == "id: jtbd\n"
    assert registered(project) == (["pws-validation"],) * 2
    assert list(ProjectPaths(project).staging.iterdir()) == []
    shutil.rmtree(mine)
    checked = mindrian(project, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
