"""A large ``build --all`` streams phase 6: one shared session per chunk of skills, each skill's
report handed on as soon as its chunk is done, and the same result as one session (or a build of
each skill alone)."""

from __future__ import annotations

import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from build_factories import make_project, skill_text, tree

import builder.pipeline.package_tests as package_tests
from builder.orchestration import batch, runner
from builder.orchestration.batch import BatchOptions, Target, discover
from builder.orchestration.schedule import Schedule
from builder.orchestration.shared_tests import clear_sessions
from builder.orchestration.warm import Entry
from builder.phases import PHASE_NAMES, load_phase, phase_number
from builder.phases.keys import load_key
from builder.pipeline.build_results import BuildReport
from builder.pipeline.config import BuildConfig
from builder.pipeline.services import Services
from builder.pipeline.transaction import SESSION_PREFIX
from mindrian.project import ProjectPaths

SKILLS = {name: skill_text(f"{name}-skill") for name in ("alpha", "beta", "gamma")}


def test_chunks_are_even_in_order_and_sized_for_their_sessions() -> None:
    for count in (2, 16, 40, 100, 1000, 5000):
        chunks = batch._chunks(list(range(count)))
        assert [i for chunk in chunks for i in chunk] == list(range(count))
        assert max(map(len, chunks)) - min(map(len, chunks)) <= 1 or len(chunks[-1]) < len(
            chunks[0]
        )
        assert len(chunks) == 1 or min(map(len, chunks)) >= batch._CHUNK_MIN - 1
    assert [len(c) for c in batch._chunks(list(range(100)))] == [25] * 4
    assert len(batch._chunks(list(range(1000)))) == 8  # none much over _CHUNK_MAX
    assert len(batch._chunks(list(range(20)))) == 1  # too few for two sessions to pay


def _options(root: Path) -> BatchOptions:
    return BatchOptions(checkpoints_dir=root / ".mindrian" / "checkpoints", out_dir=root / "gen")


def _state(root: Path) -> dict[str, bytes]:
    return {
        **{f"checkpoints/{k}": v for k, v in tree(root / ".mindrian" / "checkpoints").items()},
        **{f"gen/{k}": v for k, v in tree(root / "gen").items()},
    }


def _plain(report: BuildReport) -> Any:
    return (
        report.path,
        report.agent_id,
        report.problem,
        [(p.status, p.checks) for p in report.phases],
    )


def _streamed(root: Path, chunks: list[list[int]], phases: Any) -> list[BuildReport]:
    """Phases 1-6 of the project's skills streamed in ``chunks`` (threads stand in for the pool)."""
    config = BuildConfig(root=str(root), out_dir=str(root / "gen"))
    targets = [Target(p, p.relative_to(root).as_posix()) for p in discover(root)]
    sources, _ = batch.read_sources(targets)
    options = _options(root)
    runs = {
        display: runner.start(
            source, config, checkpoints_dir=options.checkpoints_dir, phases=phases, index=None
        )
        for display, source in sources.items()
    }
    staging = clear_sessions(ProjectPaths(root, root / "gen"))
    out: dict[int, Future[Entry]] = {i: Future() for i in range(len(targets))}
    with ThreadPoolExecutor(2) as pool:
        plan = batch._Plan(config, options, 1, len(PHASE_NAMES), Schedule.of(load_key))
        chunked = batch._Chunked(targets, runs, plan, phases, Services(), pool, staging)
        futures = dict(out)  # stream takes each out of ``out`` once it is set or handed on
        chunked.stream(chunks, out)
        entries = [futures[i].result(timeout=600) for i in range(len(targets))]
    reports = [e.report if isinstance(e, runner.Run) else e for e in entries]
    assert list(staging.glob(f"{SESSION_PREFIX}*")) == []  # every session folder is gone
    return reports


@pytest.mark.slow
def test_streamed_chunks_give_what_one_session_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "p").mkdir()
    root = make_project(tmp_path / "p", SKILLS)
    sessions: list[list[str]] = []
    session = package_tests.run_session

    def spy(folder: Path, jobs: int, *args: Any) -> Any:
        sessions.append(sorted(p.name for p in folder.iterdir() if p.is_dir()))
        return session(folder, jobs, *args)

    monkeypatch.setattr(package_tests, "run_session", spy)
    together = _streamed(root, [[0, 1, 2]], load_phase)
    shared = _state(root)
    shutil.rmtree(root / ".mindrian")
    shutil.rmtree(root / "gen")
    streamed = _streamed(root, [[0, 1], [2]], load_phase)
    # A chunk of two shares a session; a chunk of one is tested alone, as a build of it alone is.
    assert sessions == [["alpha_skill", "beta_skill", "gamma_skill"], ["alpha_skill", "beta_skill"]]
    assert [_plain(r) for r in streamed] == [_plain(r) for r in together]
    assert [[p.status for p in r.phases] for r in streamed] == [
        ["ok"] * phase_number("code_generation")
    ] * 3
    assert _state(root) == shared


@pytest.mark.slow
def test_a_skill_that_crashes_in_a_chunk_fails_alone(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    root = make_project(tmp_path / "p", SKILLS)

    def phases(name: str) -> Any:
        phase = load_phase(name)
        if name != "neo4j_schema":
            return phase

        class Crashing:
            def __getattr__(self, attribute: str) -> Any:
                return getattr(phase, attribute)

            def with_services(self, services: Any) -> Any:
                return self  # the crash stays whatever the batch's services

            def run(self, inputs: Any) -> Any:
                if "beta" in inputs.source.path:
                    raise RuntimeError("a bug in phase 5")
                return phase.run(inputs)

        return Crashing()

    reports = _streamed(root, [[0, 1], [2]], phases)
    assert [r.problem.code if r.problem else None for r in reports] == [None, "I001", None]
    generation = phase_number("code_generation")
    assert [len(r.phases) for r in (reports[0], reports[2])] == [generation, generation]


@pytest.mark.slow
def test_a_session_that_cannot_run_leaves_its_skills_to_be_tested_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "p").mkdir()
    names = ("alpha", "beta", "gamma", "delta")
    root = make_project(tmp_path / "p", {name: skill_text(f"{name}-skill") for name in names})
    session = package_tests.run_session

    def broken_first(folder: Path, jobs: int, *args: Any) -> Any:
        if (folder / "alpha_skill").is_dir():
            raise OSError("the session's worker is gone")
        return session(folder, jobs, *args)

    monkeypatch.setattr(package_tests, "run_session", broken_first)
    # Discovery sorts the skills: alpha and beta share the broken session, delta and gamma theirs.
    reports = _streamed(root, [[0, 1], [2, 3]], load_phase)
    assert [r.problem for r in reports] == [None] * 4
    assert [[p.status for p in r.phases] for r in reports] == [
        ["ok"] * phase_number("code_generation")
    ] * 4
