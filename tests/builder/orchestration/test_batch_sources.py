"""A batch reads each skill's SKILL.md once and builds every step from that read."""

from __future__ import annotations

import pathlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from build_factories import make_pipeline, make_project, skill_text

from builder.orchestration import runner
from builder.orchestration.batch import BatchOptions, Target, build_many, discover
from builder.phases import PHASE_NAMES
from builder.pipeline.config import BuildConfig


def _count_skill_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Opens of files named SKILL.md from now on, by folder name."""
    reads: Counter[str] = Counter()
    real_open = pathlib.Path.open

    def counting_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.name == "SKILL.md":
            reads[self.parent.name] += 1
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "open", counting_open)
    return reads


def _targets(root: Path) -> list[Target]:
    return [Target(p, p.relative_to(root).as_posix()) for p in discover(root)]


@pytest.mark.parametrize("reregister", [False, True])
def test_a_cold_and_a_warm_batch_read_each_skill_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reregister: bool
) -> None:
    root = make_project(tmp_path, {"alpha": skill_text("alpha"), "beta": skill_text("beta")})
    options = BatchOptions(
        checkpoints_dir=tmp_path / "checkpoints",
        out_dir=tmp_path / "generated",
        reregister=reregister,
    )
    config = BuildConfig(root=str(root))
    pipeline = make_pipeline()
    for run in ("cold", "warm"):
        reads = _count_skill_reads(monkeypatch)
        reports = build_many(_targets(root), config, options, phases=pipeline.load)
        assert [r.problem for r in reports] == [None, None], run
        assert reads == {"alpha": 1, "beta": 1}, run


def test_an_unreadable_skill_fails_alone_at_its_path(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"alpha": skill_text("alpha")})
    missing = Target(root / "skills" / "gone" / "SKILL.md", "skills/gone/SKILL.md")
    reports = build_many(
        [missing, *_targets(root)],
        BuildConfig(root=str(root)),
        BatchOptions(checkpoints_dir=tmp_path / "checkpoints", out_dir=tmp_path / "generated"),
        phases=make_pipeline().load,
    )
    gone, alpha = reports
    assert gone.problem is not None and gone.problem.code == "S100"
    assert gone.problem.location is not None
    assert gone.problem.location.path == "skills/gone/SKILL.md"
    assert (gone.agent_id, gone.phases) == (None, ())
    assert alpha.problem is None and len(alpha.phases) == len(PHASE_NAMES)


#: The runner's entries a batch may call for a skill, each taking the skill's source first.
RUNNER_ENTRIES = ("build_source", "current_report", "identity", "scratch_build", "survey")


def _count_runner_entries(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[str, str]]:
    """Calls of the runner's entries from now on, by (skill folder, entry)."""
    entries: Counter[tuple[str, str]] = Counter()
    for name in RUNNER_ENTRIES:
        real = getattr(runner, name, None)
        if real is None:
            continue

        def counting(
            source: Any, *args: Any, _name: str = name, _real: Any = real, **kw: Any
        ) -> Any:
            entries[(source.path.split("/")[-2], _name)] += 1
            return _real(source, *args, **kw)

        monkeypatch.setattr(runner, name, counting)
    return entries


def test_a_cold_batch_enters_the_runner_twice_per_skill_and_runs_phase_1_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path, {"alpha": skill_text("alpha"), "beta": skill_text("beta")})
    options = BatchOptions(checkpoints_dir=tmp_path / "checkpoints", out_dir=tmp_path / "generated")
    pipeline = make_pipeline()
    entries = _count_runner_entries(monkeypatch)
    reports = build_many(_targets(root), BuildConfig(root=str(root)), options, phases=pipeline.load)
    assert [r.problem for r in reports] == [None, None]
    # A survey (identity, nothing current) and the build, which takes phase 1's result from it.
    assert entries == {
        ("alpha", "survey"): 1,
        ("alpha", "build_source"): 1,
        ("beta", "survey"): 1,
        ("beta", "build_source"): 1,
    }
    assert pipeline["skill_analysis"].calls == 2
    assert [p.status for p in reports[0].phases] == ["ok"] * len(PHASE_NAMES)
