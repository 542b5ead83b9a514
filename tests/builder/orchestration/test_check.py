"""``mindrian check``: regenerate in a scratch folder, diff against generated/, exit 1 on drift."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from build_factories import make_project, skill_text, tree

from builder.orchestration.batch import BatchOptions, Target
from builder.orchestration.check import diff_trees, read_tree
from builder.pipeline.build_results import BuildReport
from builder.pipeline.config import BuildConfig
from builder.pipeline.results import Problem

#: What the fake regeneration writes: a small package and a registry export.
FRESH: dict[str, bytes] = {
    "demo_skill/__init__.py": b'"""Demo."""\n\nVALUE = 1\n',
    "demo_skill/instructions.md": b"# Demo\n\nAsk what is missing.\n",
    "registry.yaml": b"format: 1\nframeworks: []\n",
}


def write_tree(root: Path, files: Mapping[str, bytes]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    root = make_project(tmp_path / "project", {"demo": skill_text("demo-skill")})
    write_tree(root / "generated", FRESH)
    return root


class FakeRegeneration:
    """Replaces ``build_many`` inside ``check``: writes ``FRESH`` and notes where and how it was
    asked to build."""

    def __init__(self, problem: Problem | None = None) -> None:
        self.problem = problem
        self.seen: list[tuple[BuildConfig, BatchOptions, Any]] = []

    def __call__(
        self,
        skills: list[Target],
        config: BuildConfig,
        options: BatchOptions,
        *,
        listener: Any = None,
        registration: Any = None,
        phases: Any = None,
    ) -> tuple[BuildReport, ...]:
        self.seen.append((config, options, registration))
        write_tree(options.out_dir, FRESH)
        return tuple(BuildReport(t.display, "demo-skill", (), self.problem) for t in skills)


@pytest.fixture
def regeneration(monkeypatch: pytest.MonkeyPatch) -> FakeRegeneration:
    fake = FakeRegeneration()
    monkeypatch.setattr("builder.orchestration.check.build_many", fake)
    return fake


def test_read_tree_leaves_out_caches(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pkg/a.py": b"x",
            "pkg/__pycache__/a.cpython-311.pyc": b"c",
            ".pytest_cache/v": b"c",
            "pkg/b.pyc": b"c",
        },
    )
    assert read_tree(tmp_path) == {"pkg/a.py": b"x"}
    assert read_tree(tmp_path / "missing") == {}


def test_read_tree_reads_linked_files_enters_no_linked_folder_and_sorts(tmp_path: Path) -> None:
    write_tree(tmp_path / "outside", {"note.md": b"n", "deep/x.py": b"x"})
    root = tmp_path / "root"
    write_tree(root, {"b/z.py": b"z", "b/a/y.py": b"y", "a.txt": b"a", ".hidden": b"h"})
    (root / "b" / "linked.md").symlink_to(tmp_path / "outside" / "note.md")
    (root / "b" / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "dangling.py").symlink_to(tmp_path / "gone.py")
    tree = read_tree(root)
    assert list(tree) == [".hidden", "a.txt", "b/a/y.py", "b/linked.md", "b/z.py"]
    assert tree["b/linked.md"] == b"n"


@pytest.mark.parametrize(
    ("committed", "expected_drift", "expected_lines"),
    [
        (FRESH, (), []),
        (
            {**FRESH, "demo_skill/__init__.py": b'"""Demo."""\n\nVALUE = 2\n'},
            ("generated/demo_skill/__init__.py",),
            [
                "--- a/generated/demo_skill/__init__.py",
                "+++ b/generated/demo_skill/__init__.py",
                "-VALUE = 2",
                "+VALUE = 1",
            ],
        ),
        (
            {**FRESH, "stale/old.py": b"gone = True\n"},
            ("generated/stale/old.py",),
            ["--- a/generated/stale/old.py", "+++ /dev/null", "-gone = True"],
        ),
        (
            {k: v for k, v in FRESH.items() if k != "registry.yaml"},
            ("generated/registry.yaml",),
            ["--- /dev/null", "+++ b/generated/registry.yaml", "+format: 1"],
        ),
        (
            {
                **FRESH,
                "demo_skill/instructions.md": FRESH["demo_skill/instructions.md"].replace(
                    b"\n", b"\r\n"
                ),
            },
            ("generated/demo_skill/instructions.md",),
            ["-# Demo\r", "+# Demo"],
        ),
        (
            {**FRESH, "registry.yaml": b"\xff\xfe binary"},
            ("generated/registry.yaml",),
            ["Binary files a/generated/registry.yaml and b/generated/registry.yaml differ"],
        ),
    ],
    ids=["clean", "changed byte", "extra file", "missing file", "line endings", "binary"],
)
def test_diff_trees_finds_every_kind_of_drift(
    committed: dict[str, bytes], expected_drift: tuple[str, ...], expected_lines: list[str]
) -> None:
    drift, diff = diff_trees(committed, FRESH, "generated")
    assert drift == expected_drift
    lines = diff.split("\n")
    for line in expected_lines:
        assert line in lines
    assert bool(diff) is bool(expected_drift)


def test_check_is_clean_when_nothing_drifted(
    cli, project: Path, regeneration: FakeRegeneration
) -> None:
    result = cli(["check"], project)
    assert result.code == 0, result.err
    assert result.out == ""
    assert (
        result.err.splitlines()[-1]
        == "check: generated matches a fresh build of 1 skill(s) (3 files)"
    )


MUTATIONS: dict[str, Callable[[Path], None]] = {
    "changed byte": lambda g: (g / "demo_skill/__init__.py").write_bytes(
        FRESH["demo_skill/__init__.py"].replace(b"1", b"7")
    ),
    "extra file": lambda g: (g / "demo_skill/notes.txt").write_text("hand edit\n"),
    "missing file": lambda g: (g / "registry.yaml").unlink(),
    "missing package": lambda g: shutil.rmtree(g / "demo_skill"),
}


@pytest.mark.parametrize(
    ("mutation", "header"),
    [
        ("changed byte", "--- a/generated/demo_skill/__init__.py"),
        ("extra file", "--- a/generated/demo_skill/notes.txt"),
        ("missing file", "+++ b/generated/registry.yaml"),
        ("missing package", "+++ b/generated/demo_skill/instructions.md"),
    ],
)
def test_drift_prints_a_unified_diff_and_exits_1(
    cli, project: Path, regeneration: FakeRegeneration, mutation: str, header: str
) -> None:
    MUTATIONS[mutation](project / "generated")
    result = cli(["check"], project)
    assert result.code == 1
    assert header in result.out.splitlines()
    drifted = sorted(
        {line[6:] for line in result.out.splitlines() if line[:6] in ("--- a/", "+++ b/")}
    )
    generated = project / "generated"
    compared = set(FRESH) | set(tree(generated))
    # Without a terminal stderr is the outcome alone: a located line per drifted file, the total.
    assert result.err.splitlines() == [
        *(
            f"{path}: error[D001]: differs from a fresh build of its skill (run: mindrian build "
            "--all, commit it)"
            for path in drifted
        ),
        f"check: {len(drifted)} of {len(compared)} file(s) in generated differ from a fresh "
        "build of 1 skill(s) (run `mindrian build --all` and commit)",
    ]


def test_a_failed_regeneration_fails_the_check(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "builder.orchestration.check.build_many",
        FakeRegeneration(Problem("P003", "check 'tests_pass' failed")),
    )
    result = cli(["check"], project)
    assert result.code == 1
    assert "1 of 1 skill(s) failed to build; generated cannot be confirmed" in result.err


def test_quiet_and_verbose_together_are_a_usage_error(
    cli, project: Path, regeneration: FakeRegeneration
) -> None:
    result = cli(["check", "--quiet", "--verbose"], project)
    assert (result.code, result.err) == (2, "error[U044]: give --quiet or --verbose, not both\n")
    assert regeneration.seen == []


def test_check_by_default_renders_phases_1_to_6_without_tests_or_registry(
    cli, project: Path, regeneration: FakeRegeneration
) -> None:
    assert cli(["check"], project).code == 0
    ((_, options, registration),) = regeneration.seen
    assert options.until_phase == "code_generation"
    assert options.run_tests is False
    assert registration is None


def test_check_full_builds_in_scratch_folders_with_its_own_registry(
    cli, project: Path, regeneration: FakeRegeneration, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://db.example:7687")
    assert cli(["check", "--full"], project).code == 0
    ((config, options, registration),) = regeneration.seen
    assert options.until_phase is None and options.run_tests is True
    scratch = options.out_dir.parent
    assert not scratch.exists()  # removed afterwards
    assert options.checkpoints_dir.parent == scratch
    assert config.out_dir == str(options.out_dir) and config.neo4j_uri is None
    assert registration.registry_path.parent == scratch
    assert registration.env == {}  # the caller's NEO4J_URI is not used
    assert not (project / ".mindrian").exists()


@pytest.mark.parametrize(("per_skill", "in_memory"), [(1, True), (1 << 62, False)])
def test_the_scratch_folder_is_in_memory_only_when_that_has_room(
    cli,
    project: Path,
    regeneration: FakeRegeneration,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    per_skill: int,
    in_memory: bool,
) -> None:
    memory = tmp_path / "shm"
    memory.mkdir()
    monkeypatch.setattr("builder.orchestration.check._MEMORY", str(memory))
    monkeypatch.setattr("builder.orchestration.check._BYTES_PER_SKILL", per_skill)
    assert cli(["check"], project).code == 0
    ((_, options, _),) = regeneration.seen
    assert (options.out_dir.parent.parent == memory) is in_memory
    assert list(memory.iterdir()) == []  # removed afterwards


@pytest.mark.slow  # all seven real phases, twice
def test_a_real_regeneration_of_a_built_skill_is_clean(cli, tmp_path: Path) -> None:
    """All seven real phases: build into generated/, then check regenerates it byte for byte."""
    project = make_project(
        tmp_path, {"demo": skill_text("demo-skill", triggers="[plan gaps, review]")}
    )
    built = cli(["build", "--all", "--quiet"], project)
    assert built.code == 0, built.err
    assert sorted(tree(project / "generated"))[:2] == [
        "demo_skill/README.md",
        "demo_skill/__init__.py",
    ]
    assert "id: demo-skill" in (project / "generated" / "registry.yaml").read_text(encoding="utf-8")
    state = tree(project / ".mindrian")
    result = cli(["check", "--quiet"], project)
    assert result.code == 0, result.out + result.err
    assert result.out == ""
    assert (
        tree(project / ".mindrian") == state
    )  # the project's registry and checkpoints are untouched
    # The fast check (no generated tests, no probe) still catches a hand edit of generated/.
    agent = project / "generated" / "demo_skill" / "agent.py"
    agent.write_text(agent.read_text(encoding="utf-8") + "# tuned by hand\n", encoding="utf-8")
    edited = cli(["check", "--quiet"], project)
    assert edited.code == 1
    assert "--- a/generated/demo_skill/agent.py" in edited.out.splitlines()
    assert "-# tuned by hand" in edited.out.splitlines()


@pytest.mark.slow  # a real build, then real scratch builds
def test_a_scratch_regeneration_catches_a_stale_registry_and_an_unbuilt_skill_edit(
    cli, tmp_path: Path
) -> None:
    """Phases 1-6 keep no checkpoints in a check: the record each worker returns must be what
    phase 7 registered from the checkpoint, and every drift must still show, located."""
    from builder.graph.config import GraphConfig
    from builder.orchestration.batch import build_many
    from builder.pipeline.checkpoints import CheckpointStore
    from builder.pipeline.serial import from_plain

    project = make_project(tmp_path, {"demo": skill_text("demo-skill", triggers="[plan gaps]")})
    assert cli(["build", "--all", "--quiet"], project).code == 0
    skill = project / "skills" / "demo" / "SKILL.md"
    (report,) = build_many(
        [Target(skill, "skills/demo/SKILL.md")],
        BuildConfig(root=str(project), out_dir=str(tmp_path / "out")),
        BatchOptions(
            checkpoints_dir=tmp_path / "scratch",
            out_dir=tmp_path / "out",
            until_phase="code_generation",
            run_tests=False,
            scratch=True,
        ),
    )
    checkpoints = CheckpointStore(project / ".mindrian" / "checkpoints")
    stored = checkpoints.read("demo-skill", 5, "neo4j_schema")
    assert stored is not None
    assert report.framework == from_plain(GraphConfig, stored.output).to_framework_record()
    assert not (tmp_path / "scratch").exists()

    registry = project / "generated" / "registry.yaml"
    registry.write_text(registry.read_text(encoding="utf-8").replace("plan gaps", "gaps"))
    stale = cli(["check", "--quiet"], project)
    assert stale.code == 1
    lines = stale.out.splitlines()
    assert "--- a/generated/registry.yaml" in lines
    assert "-  - gaps" in lines and "+  - plan gaps" in lines

    assert cli(["build", "--all", "--quiet"], project).code == 0
    skill.write_text(skill_text("demo-skill", description="Edited, not rebuilt."), encoding="utf-8")
    edited = cli(["check", "--quiet"], project)
    assert edited.code == 1
    drifted = {line for line in edited.out.splitlines() if line.startswith("--- a/")}
    assert {"--- a/generated/registry.yaml", "--- a/generated/demo_skill/spec.yaml"} <= drifted
    assert "+  description: Edited, not rebuilt." in edited.out.splitlines()


def test_a_changed_executable_bit_is_drift_shown_as_git_shows_it() -> None:
    files = {"pkg/skill/scripts/run.sh": b"#!/bin/sh\n", "pkg/spec.yaml": b"id: x\n"}
    same = frozenset({"pkg/skill/scripts/run.sh"})
    assert diff_trees(files, files, "generated", (same, same)) == ((), "")
    drift, diff = diff_trees(files, files, "generated", (same, frozenset()))
    assert drift == ("generated/pkg/skill/scripts/run.sh",)
    assert diff == (
        "diff a/generated/pkg/skill/scripts/run.sh b/generated/pkg/skill/scripts/run.sh\n"
        "old mode 100755\nnew mode 100644\n"
    )
