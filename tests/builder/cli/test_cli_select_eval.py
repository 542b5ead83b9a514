"""``mindrian select --eval`` and ``--explain`` on the fixture registry (issue 23)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from build_factories import make_project

FIXTURE = Path(__file__).parent.parent / "fixtures" / "registry.yaml"


@pytest.fixture(autouse=True)
def no_neo4j_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose generated/registry.yaml is the fixture."""
    (tmp_path / "project").mkdir()
    root = make_project(tmp_path / "project", {})
    (root / "generated").mkdir()
    shutil.copyfile(FIXTURE, root / "generated" / "registry.yaml")
    return root


def test_cli_eval_and_explain(cli, project: Path, tmp_path: Path) -> None:
    path = tmp_path / "jtbd.json"
    cases = [{"query": "what job is the customer hiring us for", "should_trigger": True}]
    path.write_text(json.dumps({"skill_name": "jtbd", "cases": cases}), encoding="utf-8")
    result = cli(["select", "--eval", str(path), "--format", "json"], project)
    assert result.code == 0, result.err
    assert json.loads(result.out)["overall"]["positives"] == 1
    explained = cli(["select", "How risky is this customer market?", "--explain"], project)
    assert explained.code == 0, explained.err
    assert "1. jtbd" in explained.out and "lost to jtbd" in explained.out
    wrong = cli(["select", "--eval", str(path), "--explain"], project)
    assert wrong.code == 2 and "U026" in wrong.err


def test_an_evals_folder_scores_the_id_its_skill_builds_to(cli, project: Path) -> None:
    """skills/pws/evals/*.json belongs to pws-validation (metadata.mindrian.id), not to 'pws'."""
    folder = project / "skills" / "pws"
    folder.mkdir(parents=True)
    own = Path(__file__).parents[3] / "skills" / "pws" / "SKILL.md"
    shutil.copyfile(own, folder / "SKILL.md")
    (folder / "evals").mkdir()
    cases = [{"query": "is my startup idea worth building", "should_trigger": True}]
    (folder / "evals" / "trigger-eval.json").write_text(json.dumps(cases), encoding="utf-8")
    result = cli(["select", "--eval", str(project / "skills"), "--format", "json"], project)
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert list(report["skills"]) == ["pws-validation"]
    assert report["skills"]["pws-validation"]["positives"] == 1
