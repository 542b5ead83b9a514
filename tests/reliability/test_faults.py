"""Repros of the reliability review as tests: each fault is a clean error, or no fault at all."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mindrian.graph import (
    EmbeddedRegistry,
    dump_registry_yaml,
    load_registry_yaml,
    registry_from_yaml,
)
from mindrian.project import ProjectPaths

pytestmark = pytest.mark.slow  # whole builds in subprocesses
REPO = Path(__file__).resolve().parents[2]
SECRET = "hunter2-SECRET"


def mindrian(
    project: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "builder", *args],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with the pws skill and the committed registry.yaml of the repository."""
    root = tmp_path / "project"
    (root / "skills" / "pws").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.mindrian]\n')
    shutil.copy(REPO / "skills" / "pws" / "SKILL.md", root / "skills" / "pws" / "SKILL.md")
    (root / "generated").mkdir()
    shutil.copy(REPO / "generated" / "registry.yaml", root / "generated" / "registry.yaml")
    return root


def test_a_zero_byte_database_is_refused_and_graph_rebuild_fixes_it(project: Path) -> None:
    paths = ProjectPaths(project)
    paths.embedded_registry.parent.mkdir(parents=True)
    paths.embedded_registry.write_bytes(b"")
    committed = paths.registry_yaml.read_text(encoding="utf-8")

    refused = mindrian(project, "select", "--trigger", "validate")
    assert refused.returncode == 1 and refused.stdout == ""
    assert "error[G012]" in refused.stderr and "mindrian graph rebuild" in refused.stderr

    # Phase 7 refuses too (R008), and registry.yaml is not rewritten from the empty database.
    built = mindrian(project, "build", "skills/pws/SKILL.md", "--force", "--json")
    assert built.returncode == 1
    assert "R008" in built.stdout and json.loads(built.stdout)
    assert paths.registry_yaml.read_text(encoding="utf-8") == committed

    rebuilt = mindrian(project, "graph", "rebuild")
    count = len(load_registry_yaml(paths.registry_yaml))
    assert rebuilt.returncode == 0 and f"({count} framework(s))" in rebuilt.stderr
    selected = mindrian(project, "select", "--trigger", "validate")
    assert selected.returncode == 0 and "pws-validation" in selected.stdout


def test_a_database_that_lost_frameworks_never_reaches_registry_yaml(project: Path) -> None:
    paths = ProjectPaths(project)
    records = load_registry_yaml(paths.registry_yaml)
    assert len(records) > 2
    with EmbeddedRegistry(paths.embedded_registry) as registry:  # keeps only pws-validation
        registry.register_many([r for r in records if r.id == "pws-validation"])
    committed = paths.registry_yaml.read_text(encoding="utf-8")

    built = mindrian(project, "build", "skills/pws/SKILL.md", "--force")
    assert built.returncode == 1
    assert "error[R007]" in built.stderr and "lacks" in built.stderr
    assert paths.registry_yaml.read_text(encoding="utf-8") == committed
    assert not (paths.generated / "pws_validation").exists()  # nothing installed either


def test_a_registry_yaml_newer_than_the_database_names_the_command_that_fixes_it(
    project: Path,
) -> None:
    """After a ``git pull`` brings a registry.yaml with another framework, the local database
    is stale: the build says so with the exact command, and that command is the fix."""
    paths = ProjectPaths(project)
    registry_from_yaml(paths.registry_yaml, paths.embedded_registry).close()
    records = load_registry_yaml(paths.registry_yaml)
    other = next(r for r in records if r.id != "pws-validation")
    pulled = dataclasses.replace(other, id="pulled-framework", name="Pulled From Upstream")
    paths.registry_yaml.write_text(dump_registry_yaml([*records, pulled]), encoding="utf-8")

    built = mindrian(project, "build", "skills/pws/SKILL.md", "--force")
    assert built.returncode == 1 and "error[R007]" in built.stderr
    assert "lacks pulled-framework" in built.stderr
    assert built.stderr.rstrip().endswith("rebuild the database from it: `mindrian graph rebuild`")

    assert mindrian(project, "graph", "rebuild").returncode == 0
    again = mindrian(project, "build", "skills/pws/SKILL.md", "--force")
    assert again.returncode == 0, again.stderr
    assert "pulled-framework" in {r.id for r in load_registry_yaml(paths.registry_yaml)}


def test_a_database_with_other_data_for_another_framework_is_refused(project: Path) -> None:
    paths = ProjectPaths(project)
    registry_from_yaml(paths.registry_yaml, paths.embedded_registry).close()
    other = next(r for r in load_registry_yaml(paths.registry_yaml) if r.id != "pws-validation")
    with EmbeddedRegistry(paths.embedded_registry) as registry:
        registry.register(dataclasses.replace(other, name="Corrupted"))
    committed = paths.registry_yaml.read_text(encoding="utf-8")

    built = mindrian(project, "build", "skills/pws/SKILL.md", "--force")
    assert built.returncode == 1 and "error[R007]" in built.stderr
    assert f"differs on {other.id}" in built.stderr
    assert paths.registry_yaml.read_text(encoding="utf-8") == committed


@pytest.mark.parametrize("command", ["build", "register"])
def test_credentials_in_a_neo4j_uri_are_refused_and_never_printed(
    project: Path, command: str
) -> None:
    uri = f"bolt://neo4j:{SECRET}@db.invalid:1"
    for extra, env in ((["--neo4j-uri", uri], {}), ([], {"NEO4J_URI": uri})):
        for output in ("--json", "--frames"):
            done = mindrian(project, command, "skills/pws/SKILL.md", output, *extra, env=env)
            assert done.returncode == 2
            assert SECRET not in done.stdout + done.stderr
            assert "error[U009]" in done.stderr and "carries credentials" in done.stderr
            assert "bolt://neo4j:***@db.invalid:1" in done.stderr
    assert not ProjectPaths(project).checkpoints.exists()  # refused before anything ran


def test_out_isolates_a_build_from_the_project(project: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text(".mindrian/\n")
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"],
        cwd=project,
        check=True,
    )
    other = tmp_path / "elsewhere"
    built = mindrian(
        project, "build", "skills/pws/SKILL.md", "--out", str(other), "--checkpoints",
        str(tmp_path / "ck"),
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored"], cwd=project, capture_output=True, text=True
    )
    assert status.stdout == ""  # not even an ignored .mindrian/ was created in the project
    assert (other / "pws_validation" / "agent.py").is_file()
    assert [r.id for r in load_registry_yaml(other / "registry.yaml")] == ["pws-validation"]
    assert ProjectPaths(project, other).embedded_registry == other / ".mindrian" / "registry.lbug"
    assert (other / ".mindrian" / "registry.lbug").is_file()
    assert list((other / ".mindrian" / "staging").iterdir()) == []


def test_out_that_is_a_file_is_a_clean_error(project: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    done = mindrian(project, "build", "skills/pws/SKILL.md", "--out", str(blocker), "--json")
    assert done.returncode == 2 and "error[U016]" in done.stderr and "not a folder" in done.stderr


def _overwrite_middle(database: Path) -> None:
    with database.open("r+b") as handle:
        handle.seek(database.stat().st_size // 2)
        handle.write(b"\xa5" * 16384)


def _truncate(database: Path) -> None:
    with database.open("r+b") as handle:
        handle.truncate(database.stat().st_size // 2)


def _garbage_wal(database: Path) -> None:
    database.with_name(database.name + ".wal").write_bytes(b"\xa5" * 65536)


@pytest.mark.parametrize(
    "damage", [_overwrite_middle, _truncate, _garbage_wal], ids=["overwritten", "truncated", "wal"]
)
def test_a_damaged_database_is_a_prompt_clean_error_never_a_hang(
    project: Path, damage: Callable[[Path], None]
) -> None:
    paths = ProjectPaths(project)
    registry = registry_from_yaml(paths.registry_yaml, paths.embedded_registry)
    registry.checkpoint()  # the registry in the file the damage hits, not only in its log
    registry.close()
    damage(paths.embedded_registry)
    committed = paths.registry_yaml.read_text(encoding="utf-8")
    commands = [("select", "--trigger", "validate"), ("graph", "export")]
    if damage is _overwrite_middle:  # a whole build once: phase 7 meets the damage
        commands.append(("build", "skills/pws/SKILL.md", "--json"))
    for command in commands:
        started = time.monotonic()
        done = mindrian(project, *command)  # a hang would end in the subprocess timeout
        assert time.monotonic() - started < 300
        assert done.returncode == 1, (command, done.stderr)
        assert re.search(r"error\[(G01\d|R00\d)\]", done.stderr), done.stderr
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert paths.registry_yaml.read_text(encoding="utf-8") == committed
    assert not paths.generated.joinpath("pws_validation").exists()


def test_two_builds_of_different_skills_against_one_registry_both_succeed(project: Path) -> None:
    """Repro: concurrent writers failed at once with R004 instead of waiting for the lock."""
    shutil.copytree(REPO / "skills" / "jtbd", project / "skills" / "jtbd")
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "builder", "build", f"skills/{name}/SKILL.md"],
            cwd=project,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("pws", "jtbd")
    ]
    outputs = [run.communicate(timeout=900) for run in runs]
    for run, (_, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
    paths = ProjectPaths(project)
    ids = {r.id for r in load_registry_yaml(paths.registry_yaml)}
    assert {"pws-validation", "jtbd"} <= ids
    with EmbeddedRegistry(paths.embedded_registry, read_only=True) as registry:
        stored = {r.id for r in registry.export()}
    assert stored == ids


def test_two_builds_of_the_same_skill_at_once_both_succeed(project: Path) -> None:
    """Repro: each build swept the other's phase 6 workspace and ready package as a killed
    build's leftovers, so one of them failed (P003 "tests failed: FileNotFoundError", or F001
    at phase 7) and recorded that failure; now the second waits for the first."""
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "builder", "build", "skills/pws/SKILL.md", "--force"],
            cwd=project,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=900) for run in runs]
    for run, (_, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
    assert any("waiting for another build" in err for _, err in outputs)
    paths = ProjectPaths(project)
    assert [p.name for p in paths.staging.iterdir()] == []
    assert (paths.generated / "pws_validation" / "spec.yaml").is_file()
    assert "pws-validation" in {r.id for r in load_registry_yaml(paths.registry_yaml)}


def test_a_line_break_escape_in_a_description_does_not_block_the_next_build(
    project: Path,
) -> None:
    """Repro: ``description: "…\\N…"`` (a NEL) was written to registry.yaml as a space, so the
    file no longer matched the registry and building any other skill failed with R007."""
    skill = project / "skills" / "pws" / "SKILL.md"
    lines = skill.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("description:"))
    lines[at] = 'description: "Problem Worth Solving validation, and\\Nmore"'
    skill.write_text("\n".join(lines), encoding="utf-8")
    shutil.copytree(REPO / "skills" / "jtbd", project / "skills" / "jtbd")
    for name in ("pws", "jtbd"):
        done = mindrian(project, "build", f"skills/{name}/SKILL.md")
        assert done.returncode == 0, done.stderr
    (pws,) = [
        r
        for r in load_registry_yaml(ProjectPaths(project).registry_yaml)
        if r.id == "pws-validation"
    ]
    assert pws.description == "Problem Worth Solving validation, and\x85more"


#: registry.yaml texts of every wrong shape, with where and what the error must name.
MISSHAPEN_REGISTRIES = {
    "a list": (b"- a\n- b\n", "1:1", "the file is a list, not a mapping"),
    "a scalar": (b"hello\n", "1:1", "the file is a string ('hello')"),
    "null": (b"null\n", "1:1", "the file is empty (null)"),
    "empty": (b"", "", "the file is empty (null)"),
    "frameworks a mapping": (b"format: 1\nframeworks: {a: b}\n", "2:13", "frameworks is a mapping"),
    "an entry a number": (b"format: 1\nframeworks: [1]\n", "2:14", "frameworks[0] is a number"),
    "an entry without a name": (
        b"format: 1\nframeworks:\n- id: x\n  type: role\n",
        "3:3",
        "frameworks[0] has no name",
    ),
    "triggers a string": (
        b"format: 1\nframeworks:\n- id: x\n  name: X\n  type: role\n  triggers: abc\n",
        "6:13",
        "frameworks[0].triggers is a string ('abc'), not a list",
    ),
    "a weight a string": (
        b"format: 1\nframeworks:\n- id: x\n  name: X\n  type: role\n"
        b"  chains_to:\n  - target: y\n    weight: heavy\n",
        "8:13",
        "frameworks[0].chains_to[0].weight is a string ('heavy'), not a number",
    ),
    "binary": (b"format: 1\n\xff\xfe\x00garbage\n", "2:1", "not UTF-8 text: byte 0xff"),
    "not YAML": (b"format: 1\nframeworks: [\n", "3:1", "not YAML"),
}


def tree_of(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def database_files(paths: ProjectPaths) -> dict[str, bytes]:
    """The embedded database's files (its write-ahead log and seal too)."""
    found = sorted(paths.output_state.glob(f"{paths.embedded_registry.name}*"))
    return {p.name: p.read_bytes() for p in found if p.is_file()}


@pytest.mark.parametrize("built", [False, True], ids=["fresh", "built"])
def test_a_registry_yaml_of_any_wrong_shape_is_a_placed_r005_and_nothing_is_written(
    project: Path, built: bool
) -> None:
    """Repro: a registry.yaml that was a YAML list or a scalar crashed phase 7 and the retire
    of ``build --all`` (``'list' object has no attribute 'get'``, I001, exit 3); then both
    printed the same R005 line."""
    paths = ProjectPaths(project)
    if built:  # the database and the packages exist: phase 7 compares them with the file
        done = mindrian(project, "build", "--all")
        assert done.returncode == 0, done.stderr
    else:
        paths.registry_yaml.unlink()
    for name, (data, place, problem) in MISSHAPEN_REGISTRIES.items():
        paths.registry_yaml.write_bytes(data)
        generated, database = tree_of(paths.generated), database_files(paths)
        run = mindrian(project, "build", "--all")
        where = f"generated/registry.yaml:{place}:" if place else "generated/registry.yaml:"
        lines = [line for line in run.stderr.splitlines() if "error[" in line]
        assert run.returncode == 1, (name, run.stderr)
        assert len(lines) == 1, (name, run.stderr)  # phase 7's, not repeated by the retire
        assert lines[0].startswith(
            f"{where} error[R005]: cannot be read as a registry: {problem}"
        ), (name, run.stderr)
        assert "Traceback" not in run.stderr and "I001" not in run.stderr, (name, run.stderr)
        assert tree_of(paths.generated) == generated, (
            name
        )  # registry.yaml and packages as they were
        assert database_files(paths) == database, name  # no database built or changed
