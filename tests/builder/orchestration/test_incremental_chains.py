"""Changing one skill of a chained project re-registers that skill only, and the registry ends
as a cold build leaves it.

A registration writes the framework's own node, its outgoing CHAINS_TO and
GOOD_FOR (a target not registered yet is MERGEd as a placeholder, by id) and
the sorted export ``registry.yaml``; none of it reads a neighbour's content, so
the skills chaining to the changed one, and those it chains to, keep their
phase 7 checkpoints.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from build_factories import make_project, skill_text

from builder.orchestration.batch import BatchOptions, Target, build_many, discover
from builder.phases import PHASE_NAMES
from builder.pipeline.build_results import BuildReport
from builder.pipeline.config import BuildConfig
from mindrian.graph import EmbeddedRegistry
from mindrian.project import ProjectPaths

# Slow: real builds of four skills through phase 7, three times.
pytestmark = pytest.mark.slow


def skill(name: str, trigger: str, chains: str = "") -> str:
    fields = {"triggers": f"[{trigger}]"}
    if chains:
        fields["chains_to"] = chains
    return skill_text(f"{name}-skill", f"Looks at {name} questions.", **fields)


#: a -> b -> c, and d on its own.
SKILLS = {
    "a": skill("a", "first", "[{target: b-skill, weight: 0.5}]"),
    "b": skill("b", "second", "[{target: c-skill, weight: 0.7}]"),
    "c": skill("c", "third"),
    "d": skill("d", "fourth"),
}
#: b with new triggers and its chain moved from c to d.
CHANGED_B = skill("b", "revised", "[{target: d-skill, weight: 0.9}]")


def build(root: Path) -> tuple[BuildReport, ...]:
    paths = discover(root)
    return build_many(
        [Target(p, p.relative_to(root).as_posix()) for p in paths],
        BuildConfig(root=str(root)),
        BatchOptions(
            checkpoints_dir=root / ".mindrian" / "checkpoints", out_dir=root / "generated"
        ),
    )


def registered(reports: tuple[BuildReport, ...]) -> list[str]:
    """Skills whose phase 7 ran (not cached) in this build."""
    last = PHASE_NAMES[-1]
    return [
        r.agent_id or r.path
        for r in reports
        if any(p.name == last and p.status == "ok" for p in r.phases)
    ]


def registry(root: Path) -> tuple[bytes, object]:
    """registry.yaml's bytes and the embedded database's export."""
    paths = ProjectPaths(root, Path("generated"))
    with EmbeddedRegistry(paths.embedded_registry) as db:
        exported = db.export()
    return paths.registry_yaml.read_bytes(), exported


def test_a_changed_skill_is_registered_again_alone_and_the_registry_matches_a_cold_build(
    tmp_path: Path,
) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "cold").mkdir()
    project = make_project(tmp_path / "project", SKILLS)
    first = build(project)
    assert [r.problem for r in first] == [None] * 4
    assert registered(first) == ["a-skill", "b-skill", "c-skill", "d-skill"]

    (project / "skills" / "b" / "SKILL.md").write_text(CHANGED_B, encoding="utf-8")
    again = build(project)
    assert [r.problem for r in again] == [None] * 4
    assert registered(again) == ["b-skill"]  # neither a (chains to b) nor c, d (b's targets)
    assert [p.status for p in again[0].phases] == ["cached"] * len(PHASE_NAMES)

    cold = make_project(tmp_path / "cold", {**SKILLS, "b": CHANGED_B})
    assert [r.problem for r in build(cold)] == [None] * 4
    assert registry(project) == registry(cold)
    yaml_text = registry(project)[0].decode("utf-8")
    assert "revised" in yaml_text and "second" not in yaml_text
    shutil.rmtree(cold)
