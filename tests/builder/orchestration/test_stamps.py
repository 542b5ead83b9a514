"""Build stamps: a no-op decided from one file per skill, never a wrong one.

Real phases 1-7 (generated tests skipped, a passing probe, a scratch embedded
registry), so that phase 6 installs a real package the stamp records.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from build_factories import make_project, skill_text

from builder.codegen.templates import AGENT_TEMPLATES
from builder.orchestration import runner
from builder.orchestration.batch import BatchOptions, Target, build_many, discover
from builder.phases import PHASE_NAMES, load_phase, phase_number
from builder.phases.code_generation import CodeGenerationPhase, skip_generated_tests
from builder.phases.outputs import AnyPhase
from builder.phases.registration import RegistrationPhase
from builder.pipeline.build_results import BuildReport
from builder.pipeline.config import BuildConfig
from builder.pipeline.services import Services
from builder.pipeline.stamps import StampStore
from builder.probe.runner import ProbeResult

# Slow: whole builds, phases 1-7.
pytestmark = pytest.mark.slow

#: Paths opened while :func:`opened` listens (an audit hook cannot be removed, only muted).
_OPENED: list[str] | None = None


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _OPENED is not None and event == "open" and isinstance(args[0], str | Path):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)


@pytest.fixture
def opened() -> Iterator[list[str]]:
    """Every path opened until the test ends."""
    global _OPENED
    _OPENED = []
    try:
        yield _OPENED
    finally:
        _OPENED = None


def _passing_probe(out_dir: Path, identifier: str) -> ProbeResult:
    return ProbeResult(True, "a test's probe")


class Project:
    """A one-skill project built with the real phases."""

    def __init__(self, root: Path) -> None:
        make_project(root, {"alpha": skill_text("alpha-skill")})
        references = root / "skills" / "alpha" / "references"
        references.mkdir()
        (references / "notes.md").write_text("Ask about gaps.\n", encoding="utf-8")
        self.root = root
        self.config = BuildConfig(root=str(root))
        self.options = BatchOptions(
            checkpoints_dir=root / ".mindrian" / "checkpoints", out_dir=root / "generated"
        )
        self.registration = RegistrationPhase(root / "registry.lbug", env={})
        # The test's doubles: generated tests not run, a probe that passes.
        self.services = Services(package_tests=skip_generated_tests, probe=_passing_probe)

    def load(self, name: str) -> AnyPhase:
        return self.registration if name == "registration" else load_phase(name)

    def build(self) -> BuildReport:
        targets = [Target(p, p.relative_to(self.root).as_posix()) for p in discover(self.root)]
        (report,) = build_many(
            targets, self.config, self.options, phases=self.load, services=self.services
        )
        assert report.problem is None, report.problem
        return report

    @property
    def stamp(self) -> Path:
        return StampStore(self.options.checkpoints_dir).path("skills/alpha/SKILL.md")

    @property
    def notes(self) -> Path:
        return self.root / "skills" / "alpha" / "references" / "notes.md"


def _checkpoint_reads(opened: list[str], project: Project) -> list[str]:
    heads = str(project.options.checkpoints_dir)
    return [p for p in opened if p.startswith(heads) and "/.stamps/" not in p]


def _statuses(report: BuildReport) -> list[str]:
    return [p.status for p in report.phases]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    built = Project(tmp_path)
    assert _statuses(built.build()) == ["ok"] * len(PHASE_NAMES)
    return built


def test_a_stamp_hit_reads_no_checkpoint_and_lives_outside_the_output(
    project: Project, opened: list[str]
) -> None:
    assert project.stamp.is_file()
    assert not any(".stamps" in p.as_posix() for p in (project.root / "generated").rglob("*"))
    before = project.stamp.read_bytes()

    report = project.build()

    assert _statuses(report) == ["cached"] * len(PHASE_NAMES)
    assert _checkpoint_reads(opened, project) == []
    assert not any(p.endswith("notes.md") for p in opened)  # trusted by size and times
    assert project.stamp.read_bytes() == before  # nothing to rewrite: same bytes


def test_a_touched_but_unchanged_file_is_still_a_no_op(project: Project, opened: list[str]) -> None:
    stat = project.notes.stat()
    os.utime(project.notes, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))

    report = project.build()

    assert _statuses(report) == ["cached"] * len(PHASE_NAMES)
    assert _checkpoint_reads(opened, project) == []
    assert any(p.endswith("notes.md") for p in opened)  # hashed, its times having moved
    assert str(project.notes.stat().st_mtime_ns) in project.stamp.read_text(encoding="utf-8")


@pytest.mark.parametrize("restore_mtime", [False, True])
def test_a_same_size_edit_is_rebuilt(project: Project, restore_mtime: bool) -> None:
    """Size unchanged; mtime moved, or set back with os.utime (ctime still moves)."""
    stat = project.notes.stat()
    project.notes.write_text("Ask about risk.\n", encoding="utf-8")  # same length
    assert project.notes.stat().st_size == stat.st_size
    if restore_mtime:
        os.utime(project.notes, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    report = project.build()

    assert report.phases[0].status == "ok"  # phase 1 ran again: the source digest changed


def test_a_hand_edited_package_is_no_no_op(project: Project) -> None:
    package = next(p for p in (project.root / "generated").iterdir() if p.is_dir())
    spec = package / "spec.yaml"
    before, stamp = spec.read_bytes(), project.stamp.read_bytes()
    spec.write_bytes(before + b"# edited\n")

    report = project.build()

    # Phase 6 found its package changed and staged it again; phase 7 installed it.
    generation = phase_number("code_generation")
    assert _statuses(report)[generation - 1 :] == ["ok", "ok"]
    assert spec.read_bytes() == before
    assert project.stamp.read_bytes() != stamp  # the new package's times
    assert _statuses(project.build()) == ["cached"] * len(PHASE_NAMES)


@pytest.mark.parametrize("damage", [b"{not json", b'{"format": 99}', b""])
def test_a_damaged_stamp_falls_back_to_the_checkpoints(
    project: Project, opened: list[str], damage: bytes
) -> None:
    project.stamp.write_bytes(damage)

    report = project.build()

    assert _statuses(report) == ["cached"] * len(PHASE_NAMES)
    assert _checkpoint_reads(opened, project)  # decided from the checkpoint heads
    assert b'"format":2' in project.stamp.read_bytes()  # and stamped again


def test_a_missing_checkpoint_makes_the_stamp_stale(project: Project) -> None:
    (project.options.checkpoints_dir / "alpha-skill").joinpath(
        f"{phase_number('tool_assembly')}-tool_assembly.yaml"
    ).unlink()

    report = project.build()

    assert (
        _statuses(report)[phase_number("tool_assembly") - 1] == "ok"
    )  # it ran again rather than trusting the stamp


def test_stamps_are_deterministic(project: Project, tmp_path: Path) -> None:
    first = project.stamp.read_bytes()
    project.stamp.unlink()

    project.build()

    assert project.stamp.read_bytes() == first


def test_a_configuration_change_after_a_no_op_rebuilds(project: Project) -> None:
    """The configuration's part of every digest is serialised once a build: a new one is seen,
    and an equal one made anew is still a no-op."""
    assert _statuses(project.build()) == ["cached"] * len(PHASE_NAMES)
    project.config = BuildConfig(root=project.config.root, models={"operator": "openai:gpt-5"})

    assert project.build().phases[0].status == "ok"  # every digest covers the configuration

    project.config = BuildConfig(root=project.config.root, models={"operator": "openai:gpt-5"})
    assert _statuses(project.build()) == ["cached"] * len(PHASE_NAMES)


def _package(project: Project) -> Path:
    return next(p for p in (project.root / "generated").iterdir() if p.is_dir())


@pytest.mark.parametrize(
    ("change", "first_run"),
    [
        ("skill file", "skill_analysis"),
        ("new folder file", "skill_analysis"),
        ("linked file appears", "skill_analysis"),
        ("package file removed", "code_generation"),
        ("package file added", "code_generation"),
    ],
)
def test_a_no_op_notices_a_changed_input_or_output(
    project: Project, change: str, first_run: str
) -> None:
    """Each of these changes what a build reads or installs: the stamp no longer holds, and the
    first phase it concerns runs again (a stamp is a stat cache, never a decision of its own)."""
    folder = project.root / "skills" / "alpha"
    if change == "skill file":
        skill = folder / "SKILL.md"
        skill.write_text(skill.read_text(encoding="utf-8") + "\nOne more line.\n")
    elif change == "new folder file":
        (folder / "references" / "more.md").write_text("More notes.\n", encoding="utf-8")
    elif change == "linked file appears":
        skill = folder / "SKILL.md"
        skill.write_text(skill.read_text(encoding="utf-8") + "\nSee `forms.md`.\n")
        assert _statuses(project.build())[0] == "ok"
        (folder / "forms.md").write_text("A form.\n", encoding="utf-8")  # named, now there
    elif change == "package file removed":
        (_package(project) / "README.md").unlink()
    else:
        (_package(project) / "extra.txt").write_text("left here\n", encoding="utf-8")

    statuses = _statuses(project.build())

    first = phase_number(first_run) - 1
    assert statuses[:first] == ["cached"] * first and statuses[first] == "ok"


def test_a_changed_checkpoint_is_decided_from_the_checkpoints(
    project: Project, opened: list[str]
) -> None:
    head = project.options.checkpoints_dir / "alpha-skill" / "2-architecture.yaml"
    head.write_text(head.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    opened.clear()  # the build's reads only

    project.build()

    assert _checkpoint_reads(opened, project)  # the stamp did not vouch for the edited head


def test_changed_templates_are_no_no_op(project: Project, tmp_path: Path) -> None:
    """Phase 6's digest covers the templates it renders with; a stamp recomputes it."""
    templates = tmp_path / "templates"
    shutil.copytree(AGENT_TEMPLATES, templates)
    generation = phase_number("code_generation")

    shipped = project.load

    def load(name: str) -> AnyPhase:
        # A new phase object each time: one reads its templates' digest once.
        return CodeGenerationPhase(templates) if name == "code_generation" else shipped(name)

    project.load = load  # type: ignore[method-assign]
    assert _statuses(project.build()) == ["cached"] * len(PHASE_NAMES)  # the same bytes

    readme = templates / "README.md.jinja"
    readme.write_text(readme.read_text(encoding="utf-8") + "\n", encoding="utf-8")

    assert _statuses(project.build())[generation - 1] == "ok"


def test_another_mindrian_version_is_no_no_op(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every input digest names the builder's version: a stamp of another version never holds."""
    monkeypatch.setattr(runner, "__version__", "0.0.1+other")
    # A configuration made anew, as in a new process: one build serialises its part once.
    project.config = BuildConfig(root=project.config.root)

    assert _statuses(project.build())[0] == "ok"


def test_a_build_fsyncs_what_is_taken_as_it_is_and_nothing_it_rebuilds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """registry.yaml (and the journal beside it) outlive a crash of the machine; checkpoints,
    stamps and cache entries cost no fsync, each being rebuilt when a crash of the machine
    damaged or lost it (the stamp's case here; the others' in their own tests)."""
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    project = Project(tmp_path)
    assert _statuses(project.build()) == ["ok"] * len(PHASE_NAMES)

    assert any("registry.yaml" in p for p in synced), synced
    state = (str(project.options.checkpoints_dir), os.environ["MINDRIAN_CACHE_DIR"])
    assert [p for p in synced if p.startswith(state)] == []
    store = StampStore(project.options.checkpoints_dir)
    whole = project.stamp.read_bytes()
    for end in range(len(whole.rstrip())):  # the whole stamp but its newline is the stamp
        project.stamp.write_bytes(whole[:end])
        assert store.read("skills/alpha/SKILL.md") is None, whole[:end]


def test_a_cold_build_stamps_its_checkpoints_as_it_wrote_them(
    tmp_path: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stamp takes each checkpoint's digest and times from its write: none is read back."""
    real = os.replace

    def replace(src: str, dst: str) -> None:
        real(src, dst)
        opened.append(f"written {os.fspath(dst)}")

    monkeypatch.setattr(os, "replace", replace)
    project = Project(tmp_path)
    assert _statuses(project.build()) == ["ok"] * len(PHASE_NAMES)

    written = {p.removeprefix("written ") for p in opened if p.startswith("written ")}
    folder = str(project.options.checkpoints_dir / "alpha-skill")
    checkpoints = [p for p in written if p.startswith(folder)]
    assert len(checkpoints) == len(PHASE_NAMES)
    read_back = [
        p for i, p in enumerate(opened) if p in checkpoints and f"written {p}" in opened[:i]
    ]
    assert read_back == []
    assert _statuses(project.build()) == ["cached"] * len(PHASE_NAMES)  # the stamp holds


def test_a_checkpoint_replaced_under_the_build_is_stamped_as_it_is_now(tmp_path: Path) -> None:
    """A checkpoint rewritten after its phase wrote it (here: the same bytes as another file) is
    no longer the file written: the stamp reads it back rather than record the write."""
    project = Project(tmp_path)
    name = f"{phase_number('handoff_protocol')}-handoff_protocol.yaml"
    handoff = project.options.checkpoints_dir / "alpha-skill" / name

    def probe(out_dir: Path, identifier: str) -> ProbeResult:
        data = handoff.read_bytes()
        handoff.unlink()
        handoff.write_bytes(data)
        return ProbeResult(True, "a test's probe, after replacing a checkpoint")

    project.services = Services(package_tests=skip_generated_tests, probe=probe)
    assert _statuses(project.build()) == ["ok"] * len(PHASE_NAMES)

    found = StampStore(project.options.checkpoints_dir).read("skills/alpha/SKILL.md")
    assert found is not None
    recorded = {f.name: f for f in found[0].checkpoints}[name]
    now = handoff.stat()
    assert (recorded.size, recorded.mtime_ns, recorded.ctime_ns) == (
        now.st_size,
        now.st_mtime_ns,
        now.st_ctime_ns,
    )
