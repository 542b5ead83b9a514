"""Builds that register into a real Neo4j (the test server): what issue 16 promised of the
embedded registry holds there too.

- ``build --all`` into an empty database (a fresh clone's first build) registers every skill
  as a Framework node with its relationships, equal to registry.yaml; a forced rebuild leaves
  node and relationship counts as they were; a removed skill is unregistered.
- Four ``build --all --shard I/4`` jobs in four clones (a CI matrix), then two whole builds,
  registering into one database at once, all succeed and leave every skill registered once.
- A wrong password, a missing database and a server that does not answer stop the build
  with one coded line naming the fix, and change nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from mindrian.graph import GraphCounts, Neo4jRegistry, load_registry_yaml
from mindrian.testing.neo4j_server import Neo4jServer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
#: One skill per shard of four (``shard_of``), chained to each other and to absent ones.
SKILLS = ("pws", "de-bono-hats", "deep-research", "jtbd")
_NEO4J = ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE")


def make_project(root: Path, skills: tuple[str, ...] = SKILLS) -> Path:
    (root / "skills").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "n"\n\n[tool.mindrian]\n')
    for name in skills:
        shutil.copytree(REPO / "skills" / name, root / "skills" / name)
    return root


def clone(reference: Path, to: Path) -> Path:
    """What a checkout of the committed project holds: skills and generated/, no build state."""
    shutil.copytree(reference, to, ignore=shutil.ignore_patterns(".mindrian", "__pycache__"))
    return to


def build(
    project: Path, *args: str, neo4j: Mapping[str, str] | None = None
) -> subprocess.Popen[str]:
    """``mindrian build ARGS`` in ``project``, registering into ``neo4j`` (else embedded)."""
    env = {k: v for k, v in os.environ.items() if k not in _NEO4J}
    env.update({"PYTHONPATH": str(REPO), **(neo4j or {})})
    return subprocess.Popen(
        [sys.executable, "-m", "builder", "build", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(*builds: subprocess.Popen[str]) -> list[tuple[int, str]]:
    """Each build's exit status and stderr, once all have ended."""
    errors = [b.communicate(timeout=900)[1] for b in builds]
    return [(b.returncode, err) for b, err in zip(builds, errors, strict=True)]


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def registry(server: Neo4jServer) -> Neo4jRegistry:
    return Neo4jRegistry(server.uri, server.user, server.password, read_only=True)


def held(server: Neo4jServer) -> list[dict[str, object]]:
    """Every registered framework as registry.yaml would list it."""
    with registry(server) as graph:
        return [r.to_plain() for r in graph.export()]


def listed(project: Path) -> list[dict[str, object]]:
    return [r.to_plain() for r in load_registry_yaml(project / "generated" / "registry.yaml")]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project built into the embedded registry: what every Neo4j build must write too."""
    project = make_project(tmp_path_factory.mktemp("reference") / "project")
    ((status, err),) = finished(build(project, "--all"))
    assert status == 0, err
    return project


def test_build_all_registers_every_skill_and_a_forced_rebuild_changes_no_count(
    reference: Path, neo4j_server: Neo4jServer, tmp_path: Path
) -> None:
    project = clone(reference, tmp_path / "project")
    env = neo4j_server.env()
    ((status, err),) = finished(build(project, "--all", neo4j=env))
    assert status == 0, err
    assert tree(project / "generated") == tree(reference / "generated")
    assert held(neo4j_server) == listed(project)
    with registry(neo4j_server) as graph:
        counts = graph.counts()
        assert graph.select_text("is my startup idea worth building")[0].id == "pws-validation"
    assert counts.frameworks == len(SKILLS) and counts.chains and counts.good_for

    ((status, err),) = finished(build(project, "--all", "--force", neo4j=env))
    assert status == 0, err
    with registry(neo4j_server) as graph:
        assert graph.counts() == counts

    shutil.rmtree(project / "skills" / "deep-research")
    ((status, err),) = finished(build(project, "--all", neo4j=env))
    assert status == 0 and "removed deep-research: its skill is gone" in err, err
    with registry(neo4j_server) as graph:
        assert graph.get("deep-research") is None
        assert graph.counts().frameworks == len(SKILLS) - 1
    assert held(neo4j_server) == listed(project)


def test_four_shards_then_two_builds_at_once_register_every_skill_once(
    reference: Path, neo4j_server: Neo4jServer, tmp_path: Path
) -> None:
    env = neo4j_server.env()
    shards = [clone(reference, tmp_path / f"shard-{i}") for i in range(1, 5)]
    jobs = [build(p, "--all", "--shard", f"{i}/4", neo4j=env) for i, p in enumerate(shards, 1)]
    for status, err in finished(*jobs):
        assert status == 0, err
    assert held(neo4j_server) == listed(reference)
    with registry(neo4j_server) as graph:
        after_shards = graph.counts()
    assert after_shards.frameworks == len(SKILLS)

    wholes = [clone(reference, tmp_path / f"whole-{i}") for i in (1, 2)]
    for status, err in finished(*(build(p, "--all", neo4j=env) for p in wholes)):
        assert status == 0, err
    for project in wholes:
        assert tree(project / "generated") == tree(reference / "generated")
    assert held(neo4j_server) == listed(reference)
    with registry(neo4j_server) as graph:
        assert graph.counts() == after_shards
        ids = graph.read_cypher("MATCH (f:Framework) RETURN f.id AS id ORDER BY id")
    assert len(ids) == len({row["id"] for row in ids})  # one node per framework id


@pytest.mark.parametrize(
    ("change", "fix"),
    [
        ({"NEO4J_PASSWORD": "wrong"}, "check NEO4J_USERNAME and NEO4J_PASSWORD"),
        ({"NEO4J_DATABASE": "elsewhere"}, "unset NEO4J_DATABASE"),
        ({"NEO4J_URI": "bolt://127.0.0.1:1"}, "is the server running and NEO4J_URI right?"),
    ],
    ids=["wrong-password", "missing-database", "server-down"],
)
def test_a_neo4j_that_cannot_be_used_is_one_coded_line_and_changes_nothing(
    reference: Path,
    neo4j_server: Neo4jServer,
    tmp_path: Path,
    change: dict[str, str],
    fix: str,
) -> None:
    project = clone(reference, tmp_path / "project")
    before = tree(project / "generated")
    ((status, err),) = finished(
        build(project, "skills/pws/SKILL.md", neo4j={**neo4j_server.env(), **change})
    )
    assert status == 1
    (line,) = [line for line in err.splitlines() if "error[" in line]
    assert "error[R004]" in line and fix in line, err
    assert neo4j_server.password not in err
    assert tree(project / "generated") == before
    assert held(neo4j_server) == []
    with registry(neo4j_server) as graph:
        assert graph.counts() == GraphCounts(0, 0, 0, 0, 0)
