"""A registry rebuilt from registry.yaml ranks as the one the build registered into.

registry.yaml leaves out each framework's routing body; every way of rebuilding from it
(``mindrian graph rebuild``, the automatic restore, ``--registry registry.yaml``, the
project default) recomputes the body from the packages' spec.yaml. The reference is what
phase 7 registers: phase 5's record of each of the project's own skills, body included.
"""

from __future__ import annotations

import shutil
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from phase_factories import analyse, run_phases

from builder.graph.commands import open_project_registry, rebuild_registry, restore_registry_once
from builder.phases.neo4j_schema import build_graph_config
from mindrian.graph import (
    EmbeddedRegistry,
    FrameworkRecord,
    Registry,
    RoutingBodyWarning,
    with_routing_bodies,
)
from mindrian.project import ProjectPaths

ROOT = Path(__file__).resolve().parents[3]

#: Requests worded like the skills' bodies rather than their triggers or descriptions.
SENTENCES = (
    "prefer primary sources over summaries and label a conclusion without a source",
    "check the estimates by a second independent method",
    "state the uncertainty instead of hiding it in hedged language",
    "what would change this conclusion",
)

Ranking = list[tuple[str, float]]


@pytest.fixture(scope="module")
def registered() -> tuple[FrameworkRecord, ...]:
    """Phase 5's record of every package's skill: what phase 7 registers, body included."""
    from builder.phases.handoff_protocol import load_runtime_contract

    records = []
    for spec_file in sorted((ROOT / "generated").glob("*/spec.yaml")):
        source = yaml.safe_load(spec_file.read_text(encoding="utf-8"))["source_path"]
        definition = analyse(source, root=str(ROOT))
        results = run_phases(definition, runtime=load_runtime_contract(), root=str(ROOT))
        spec = results["tool_assembly"].output
        records.append(build_graph_config(spec).to_framework_record())
    return tuple(records)


@pytest.fixture
def project(tmp_path: Path) -> ProjectPaths:
    """A clone's view of the project: registry.yaml and the packages' spec.yaml, no database."""
    generated = tmp_path / "generated"
    generated.mkdir()
    shutil.copyfile(ROOT / "generated" / "registry.yaml", generated / "registry.yaml")
    for spec_file in (ROOT / "generated").glob("*/spec.yaml"):
        (generated / spec_file.parent.name).mkdir()
        shutil.copyfile(spec_file, generated / spec_file.parent.name / "spec.yaml")
    (tmp_path / "pyproject.toml").write_text("[tool.mindrian]\n", encoding="utf-8")
    return ProjectPaths(tmp_path)


def rankings(registry: Registry) -> list[Ranking]:
    return [[(s.id, s.score) for s in registry.select_text(text)] for text in SENTENCES]


@pytest.fixture
def built(registered: tuple[FrameworkRecord, ...], project: ProjectPaths) -> list[Ranking]:
    """The rankings of the database the build registered into, which is then deleted."""
    with EmbeddedRegistry(project.embedded_registry) as registry:
        registry.register_many(registered)
        found = rankings(registry)
    shutil.rmtree(project.embedded_registry.parent)
    return found


def test_the_sentences_rank_by_body_terms(registered: tuple[FrameworkRecord, ...]) -> None:
    """Otherwise the comparisons below would pass with bodies left out."""
    with EmbeddedRegistry(None) as bodied, EmbeddedRegistry(None) as bare:
        bodied.register_many(registered)
        bare.register_many(tuple(replace(r, body="") for r in registered))
        differ = [a != b for a, b in zip(rankings(bodied), rankings(bare), strict=True)]
    assert all(differ), list(zip(SENTENCES, differ, strict=True))


def test_graph_rebuild_ranks_as_the_build(built: list[Ranking], project: ProjectPaths) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RoutingBodyWarning)
        rebuild_registry(project)
    with EmbeddedRegistry(project.embedded_registry, read_only=True) as registry:
        assert rankings(registry) == built


def test_automatic_restore_ranks_as_the_build(built: list[Ranking], project: ProjectPaths) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RoutingBodyWarning)
        restore_registry_once(project.registry_yaml, project.embedded_registry)
    with EmbeddedRegistry(project.embedded_registry, read_only=True) as registry:
        assert rankings(registry) == built


@pytest.mark.parametrize("explicit", [True, False], ids=["--registry registry.yaml", "default"])
def test_a_registry_opened_from_yaml_ranks_as_the_build(
    built: list[Ranking], project: ProjectPaths, explicit: bool
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RoutingBodyWarning)
        path = project.registry_yaml if explicit else None
        opened = open_project_registry(project.root, path, env={})
    with opened.registry as registry:
        assert rankings(registry) == built


def test_phase_5_and_the_packages_give_the_same_bodies(
    registered: tuple[FrameworkRecord, ...],
) -> None:
    bare = tuple(replace(r, body="") for r in registered)
    recomputed = with_routing_bodies(bare, ROOT / "generated" / "registry.yaml")
    assert {r.id: r.body for r in recomputed} == {r.id: r.body for r in registered}
    assert all(r.body for r in registered)


def test_a_missing_or_stale_package_ranks_without_body_and_says_where(
    project: ProjectPaths,
) -> None:
    records = tuple(
        replace(r, body="")
        for r in yaml_records(project.registry_yaml)
        if r.id in ("deep-research", "jtbd", "lean-canvas")
    )
    shutil.rmtree(project.generated / "jtbd")
    stale = project.generated / "lean_canvas" / "spec.yaml"
    spec = yaml.safe_load(stale.read_text(encoding="utf-8"))
    stale.write_text(yaml.safe_dump({**spec, "triggers": ["edited"]}), encoding="utf-8")
    with pytest.warns(RoutingBodyWarning) as caught:
        found = {r.id: r.body for r in with_routing_bodies(records, project.registry_yaml)}
    assert found["deep-research"] and not found["jtbd"] and not found["lean-canvas"]
    (message,) = [str(w.message) for w in caught]
    assert message.startswith(f"{project.registry_yaml.as_posix()}: ranked without the body")
    assert "jtbd: no package beside it" in message
    assert (
        "lean-canvas: its spec.yaml differs from registry.yaml in triggers "
        f"({stale.as_posix()})" in message
    )
    assert "deep-research" not in message


def yaml_records(path: Path) -> tuple[FrameworkRecord, ...]:
    from mindrian.graph import load_registry_yaml

    return load_registry_yaml(path)
