"""A batch's phase 7 registers the skills waiting at once as one group: the same output, byte
for byte, as one skill at a time, whatever the grouping and ``--jobs``."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from build_factories import make_project, skill_text, tree

import builder.orchestration.batch as batch
import builder.phases.registration as registration
from builder.orchestration.batch import BatchOptions, Target, build_many, discover
from builder.orchestration.serial_stage import SerialStage
from builder.phases.registration import RegistrationPhase
from builder.pipeline.config import BuildConfig
from builder.pipeline.services import Services
from builder.probe.runner import ProbeResult
from mindrian.graph import EmbeddedRegistry
from mindrian.project import ProjectPaths

# Slow: whole builds of several skills, phases 1-7, twice.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
#: The package whose probe fails.
FAILING = "untriggered_skill"
#: Real skills that chain to each other (relationships, placeholders and selection interplay).
SKILLS = ("pws", "jtbd", "minto-pyramid")


def project(root: Path) -> Path:
    root.mkdir(parents=True)
    make_project(root, {"untriggered": skill_text("untriggered-skill")})
    for name in SKILLS:
        shutil.copytree(REPO / "skills" / name, root / "skills" / name)
    return root


def one_group(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every skill's serial phases submitted before any runs (the batch holds the baton while
    it submits), so they wait for the registry together; the sizes of the groups registered."""
    submit, aside, hold = SerialStage.submit, SerialStage.aside, RegistrationPhase._hold
    sizes: list[int] = []

    def held(self: SerialStage[object], work: Callable[[], object]) -> None:
        if self.turns is not None and not self.turns.baton.locked():
            self.turns.baton.acquire()
        submit(self, work)

    def released(self: SerialStage[object], work: Callable[[], None], wait: bool = False) -> None:
        if wait and self.turns is not None and self.turns.baton.locked():
            self.turns.baton.release()
        aside(self, work, wait)

    def counted(self: RegistrationPhase, requests: list[object]) -> list[object]:
        sizes.append(len(requests))
        return hold(self, requests)  # type: ignore[arg-type,return-value]

    # One group however long it holds the writer lock (a loaded machine).
    monkeypatch.setattr(registration, "REGISTRY_HOLD_SECONDS", 3600.0)
    monkeypatch.setattr(SerialStage, "submit", held)
    monkeypatch.setattr(SerialStage, "aside", released)
    monkeypatch.setattr(RegistrationPhase, "_hold", counted)
    return sizes


def probe(out_dir: Path, identifier: str) -> ProbeResult:
    """The end-to-end probe, failing for one package: its registration is undone in its group."""
    return ProbeResult(identifier != FAILING, f"probed {identifier}")


def built(root: Path, jobs: int) -> tuple[dict[str, bytes], list[object], list[object]]:
    """``build --all`` of ``root``: the output folder's files, the database's frameworks, and
    each skill's problem code."""
    config = BuildConfig(root=str(root))
    options = BatchOptions(
        checkpoints_dir=root / ".mindrian" / "checkpoints", out_dir=root / "generated", jobs=jobs
    )
    targets = [Target(p, p.relative_to(root).as_posix()) for p in discover(root)]
    reports = build_many(targets, config, options, services=Services(probe=probe))
    files = {k: v for k, v in tree(root / "generated").items() if "__pycache__" not in k}
    with EmbeddedRegistry(ProjectPaths(root).embedded_registry, read_only=True) as registry:
        held = [r.to_plain() for r in registry.export()]
    return files, held, [r.problem and r.problem.code for r in reports]


def test_one_group_or_one_skill_at_a_time_with_any_jobs_write_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch, "_SERIAL_GROUP", 1)
    alone = built(project(tmp_path / "alone"), jobs=1)
    monkeypatch.setattr(batch, "_SERIAL_GROUP", 32)
    sizes = one_group(monkeypatch)
    together = built(project(tmp_path / "together"), jobs=2)
    assert sizes == [len(SKILLS) + 1], sizes
    assert alone == together
    # One group whose writer lock is let go after every skill: a journal and commit each.
    monkeypatch.setattr(registration, "REGISTRY_HOLD_SECONDS", 0.0)
    sizes.clear()
    assert built(project(tmp_path / "held"), jobs=2) == alone
    assert sizes == [4, 3, 2, 1], sizes
    files, held, problems = together
    assert problems == [None, None, None, "P003"], problems  # a check failed
    assert f"{FAILING}/spec.yaml" not in files
    assert "registry.yaml" in files and len(held) >= len(SKILLS)


@pytest.mark.parametrize("registering", [*range(1, 130), 1000, 1001, 4096])
def test_registration_groups_are_as_even_as_the_largest_allows(registering: int) -> None:
    """As few groups as groups of ``_SERIAL_GROUP`` need, all but the last of one size and the
    last short of it by fewer skills than there are groups (a 100: four of 25, not three of 32
    and a remainder of four registered alone after the batch's last skill)."""
    group = batch._serial_group(registering)
    limit = batch._SERIAL_GROUP
    assert 1 <= group <= limit
    count = -(-registering // group)
    assert count == -(-registering // limit)
    last = registering - (count - 1) * group
    assert group - last < count, (group, last, count)


def test_a_hundred_register_in_the_groups_its_sessions_test() -> None:
    """A 100's registration groups are its shared sessions' chunks: each group is whole when
    its chunk is done, not when part of the next one is."""
    building = list(range(100))
    sizes = {len(chunk) for chunk in batch._chunks(building)}
    assert sizes == {batch._serial_group(len(building))}
