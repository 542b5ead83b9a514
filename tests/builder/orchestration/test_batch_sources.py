"""A batch reads each skill's SKILL.md once, enters the runner once per skill and builds every
step from that read, whichever way its phases run."""

from __future__ import annotations

import concurrent.futures
import gc
import pathlib
import pickle
import threading
import time
import weakref
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest
from build_factories import FakePhase, FakePipeline, make_pipeline, make_project, skill_text

from builder.orchestration import batch, runner
from builder.orchestration.batch import BatchOptions, Target, build_many, discover
from builder.orchestration.runner import Phases
from builder.phases import PHASE_NAMES
from builder.pipeline import package_tests, worker
from builder.pipeline.build_results import BuildReport
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import PhaseInput
from builder.skill import source


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


def _project(tmp_path: Path, count: int, jobs: int) -> tuple[list[str], Path, BatchOptions]:
    """The names of ``count`` fake skills, the project holding them, and batch options with
    ``jobs`` writing under ``tmp_path``."""
    names = [f"skill{n:02}" for n in range(count)]
    root = make_project(tmp_path, {name: skill_text(name) for name in names})
    options = BatchOptions(
        checkpoints_dir=tmp_path / "checkpoints", out_dir=tmp_path / "generated", jobs=jobs
    )
    return names, root, options


def _as_shipped(monkeypatch: pytest.MonkeyPatch, pipeline: FakePipeline) -> None:
    """The fake phases as the shipped ones, which worker processes load by name (here
    threads)."""
    monkeypatch.setattr(runner, "DEFAULT", Phases(pipeline.load, pipeline.load, portable=True))


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


def test_a_cold_batch_lists_each_skill_folder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing made to stat a skill's files for its stamp is the one its read takes."""
    root = make_project(tmp_path, {"alpha": skill_text("alpha"), "beta": skill_text("beta")})
    (root / "skills" / "alpha" / "references").mkdir()
    (root / "skills" / "alpha" / "references" / "notes.md").write_text("Notes.\n")
    listed: Counter[str] = Counter()
    real = source._travelling

    def travelling(file: Path, *args: Any) -> Any:
        listed[file.parent.name] += 1
        return real(file, *args)

    monkeypatch.setattr(source, "_travelling", travelling)
    options = BatchOptions(checkpoints_dir=tmp_path / "checkpoints", out_dir=tmp_path / "out")
    reports = build_many(
        _targets(root), BuildConfig(root=str(root)), options, phases=make_pipeline().load
    )
    assert [r.problem for r in reports] == [None, None]
    assert listed == {"alpha": 1, "beta": 1}


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


#: The runner's entries a batch may call for a skill, each taking the skill's source first (those
#: this version of the runner lacks are not counted).
RUNNER_ENTRIES = ("build_source", "current_report", "identity", "scratch_build", "start", "survey")


def _count_runner_entries(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[str, str]]:
    """Calls of the runner's entries from now on, by (skill folder, entry), from any thread."""
    entries: Counter[tuple[str, str]] = Counter()
    lock = threading.Lock()
    for name in RUNNER_ENTRIES:
        real = getattr(runner, name, None)
        if real is None:
            continue

        def counting(
            source: Any, *args: Any, _name: str = name, _real: Any = real, **kw: Any
        ) -> Any:
            with lock:
                entries[(source.path.split("/")[-2], _name)] += 1
            return _real(source, *args, **kw)

        monkeypatch.setattr(runner, name, counting)
    return entries


class StagingPhase(FakePhase):
    """A fake phase whose tests are package tests: a batch stages it for a shared session (its
    run is held there) and runs it after the session."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.traits = replace(self.traits, tests="package")
        self.staged = 0

    def stage_tests(self, inputs: PhaseInput, folder: Path) -> bool:
        self.staged += 1
        return True


class _Session:
    """A shared session's worker and its tests, standing in for pytest's: no package is tested."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def start(self) -> None:
        pass

    def pipes(self) -> tuple[int, ...]:
        return ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a session's tests are run_session's, stood in for")


def _threads(max_workers: int, **_: Any) -> ThreadPoolExecutor:
    """A batch's process pool as threads: its workers get the fake phases, and are counted."""
    return ThreadPoolExecutor(max_workers)


#: The ways a batch runs a cold skill's phases: (skills, jobs, package tests in shared sessions,
#: phases 1-6 in the process pool).
PATHS = {
    "in-process": (2, 1, False, False),
    "process pool": (16, 2, False, True),
    "shared session": (3, 1, True, False),
    "shared sessions streamed through the pool": (16, 2, True, True),
}


@pytest.mark.parametrize("path", PATHS)
def test_a_cold_batch_enters_the_runner_once_per_skill_and_runs_phase_1_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    count, jobs, shared, pooled = PATHS[path]
    names, root, options = _project(tmp_path, count, jobs)
    pipeline = make_pipeline()
    if shared:
        pipeline.phases["code_generation"] = StagingPhase("code_generation")
        monkeypatch.setattr(package_tests, "run_session", lambda *args, **kw: {})
        monkeypatch.setattr(worker, "WarmWorker", _Session)
    _as_shipped(monkeypatch, pipeline)
    pool = Counter[str]()
    monkeypatch.setattr(
        concurrent.futures,
        "ProcessPoolExecutor",
        lambda **kw: pool.update(["made"]) or _threads(**kw),
    )
    entries = _count_runner_entries(monkeypatch)
    reports = build_many(_targets(root), BuildConfig(root=str(root)), options)
    assert [r.problem for r in reports] == [None] * count
    assert pool["made"] == int(pooled)
    assert entries == {(name, "start"): 1 for name in names}
    assert pipeline["skill_analysis"].calls == count
    assert [[p.status for p in r.phases] for r in reports] == [["ok"] * len(PHASE_NAMES)] * count
    staged = pipeline["code_generation"]
    assert getattr(staged, "staged", count) == count and staged.calls == count


class _Counted(_Session):
    """A warm worker standing in for the real one, counting how many a build starts."""

    made: ClassVar[list[_Counted]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _Counted.made.append(self)


@pytest.mark.parametrize("probes", [False, True])
def test_streamed_sessions_fork_from_the_builds_one_warm_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, probes: bool
) -> None:
    names, root, options = _project(tmp_path, 32, jobs=2)  # two chunks
    pipeline = make_pipeline()
    pipeline.phases["code_generation"] = StagingPhase("code_generation")
    if probes:  # phase 7 probes: the build starts its warm worker for them at once
        registration = pipeline.phases["registration"]
        registration.traits = replace(registration.traits, tests="probe")
    runners: list[Any] = []
    monkeypatch.setattr(
        package_tests, "run_session", lambda *args, **kw: runners.append(args[3]) or {}
    )
    monkeypatch.setattr(_Counted, "made", [])
    monkeypatch.setattr(worker, "WarmWorker", _Counted)
    _as_shipped(monkeypatch, pipeline)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", _threads)
    reports = build_many(_targets(root), BuildConfig(root=str(root)), options)
    assert [r.problem for r in reports] == [None] * len(names)
    assert len(runners) == len(batch._chunks(list(range(len(names))))) > 1
    assert len(_Counted.made) == 1
    # Each session forked from it below the build, whose phase 7 waits for none of them.
    assert all(used.func is _Counted.made[0] for used in runners)
    assert all(used.keywords == {"lowered": True} for used in runners)


def test_a_cold_batch_starts_its_pool_and_warm_worker_before_its_skills_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names, root, options = _project(tmp_path, 16, jobs=2)
    pipeline = make_pipeline()
    pipeline.phases["code_generation"] = StagingPhase("code_generation")
    registration = pipeline.phases["registration"]
    registration.traits = replace(registration.traits, tests="probe")
    monkeypatch.setattr(package_tests, "run_session", lambda *args, **kw: {})
    events: list[str] = []

    class Started(_Session):
        def start(self) -> None:
            events.append("warm worker")

    monkeypatch.setattr(worker, "WarmWorker", Started)
    _as_shipped(monkeypatch, pipeline)
    monkeypatch.setattr(
        concurrent.futures,
        "ProcessPoolExecutor",
        lambda **kw: events.append("pool") or _threads(**kw),
    )
    real_start = runner.start
    monkeypatch.setattr(
        runner, "start", lambda *args, **kw: events.append("run") or real_start(*args, **kw)
    )
    reports = build_many(_targets(root), BuildConfig(root=str(root)), options)
    assert [r.problem for r in reports] == [None] * len(names)
    # They import while this process reads the skills and runs their phase 1; the warm
    # worker first, while this process imports the pool's phases.
    assert events[:2] == ["warm worker", "pool"]
    assert events.count("pool") == 1 and events.count("run") == len(names)


class _Released(batch.Listener):
    """Told of the last skill's report, checks that no run of the skills reported before it is
    still referenced (each run kept by weak reference, by display path)."""

    def __init__(self, count: int, runs: list[tuple[str, weakref.ref[runner.Run]]]) -> None:
        self.count, self.runs = count, runs
        self.told: list[str] = []
        self.alive: list[str] | None = None

    def finished(self, report: BuildReport) -> None:
        self.told.append(report.path)
        if len(self.told) < self.count:
            return
        done = set(self.told[:-1])
        # Threads of the batch (a session's, a leg's) may still be returning: a moment for them.
        deadline = time.monotonic() + 10
        while True:
            gc.collect()
            self.alive = sorted({path for path, ref in self.runs if path in done and ref()})
            if not self.alive or time.monotonic() > deadline:
                return
            time.sleep(0.05)


@pytest.mark.parametrize("path", PATHS)
def test_a_batch_keeps_no_run_of_a_skill_it_has_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    count, jobs, shared, _ = PATHS[path]
    _, root, options = _project(tmp_path, count, jobs)
    pipeline = make_pipeline()
    if shared:
        pipeline.phases["code_generation"] = StagingPhase("code_generation")
        monkeypatch.setattr(package_tests, "run_session", lambda *args, **kw: {})
        monkeypatch.setattr(worker, "WarmWorker", _Session)
    _as_shipped(monkeypatch, pipeline)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", _threads)
    runs: list[tuple[str, weakref.ref[runner.Run]]] = []
    real_start, real_advance = runner.start, batch._advance

    def start(*args: Any, **kw: Any) -> runner.Run:
        run = real_start(*args, **kw)
        runs.append((run.source.path, weakref.ref(run)))
        return run

    def advance(run: runner.Run | batch._Packed, *args: Any, **kw: Any) -> Any:
        # As a process pool's worker: a copy of the run is walked and handed back (a second leg
        # gets it as its first leg packed it).
        copy = pickle.loads(pickle.dumps(run))
        copy = pickle.loads(copy.run) if isinstance(copy, batch._Packed) else copy
        runs.append((copy.source.path, weakref.ref(copy)))
        return real_advance(copy, *args, **kw)

    monkeypatch.setattr(runner, "start", start)
    monkeypatch.setattr(batch, "_advance", advance)
    released = _Released(count, runs)
    reports = build_many(_targets(root), BuildConfig(root=str(root)), options, listener=released)
    assert [r.problem for r in reports] == [None] * count
    assert {path for path, _ in runs} == {r.path for r in reports}
    assert released.alive == []


def test_a_batch_bounds_the_malloc_arenas_before_it_starts_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, root, options = _project(tmp_path, 3, jobs=1)
    events: list[str] = []
    monkeypatch.setattr(batch, "share_arenas", lambda: events.append("arenas"))
    real_stage = batch.SerialStage.__init__

    def stage(self: Any, turns: Any) -> None:
        events.append("serial stage" if turns is not None else "no threads")
        real_stage(self, turns)

    monkeypatch.setattr(batch.SerialStage, "__init__", stage)
    pipeline = make_pipeline()
    targets = _targets(root)
    for batched in (targets[:1], targets[1:]):
        events.clear()
        reports = build_many(batched, BuildConfig(root=str(root)), options, phases=pipeline.load)
        assert [r.problem for r in reports] == [None] * len(batched)
        # Two skills are registered together, in threads of the serial stage; one is not.
        assert events == (["arenas", "serial stage"] if len(batched) > 1 else ["no threads"])


@pytest.mark.parametrize("from_phase", [None, "skill_analysis"])
def test_only_a_batch_that_keeps_stamps_stats_its_skills_files_before_reading_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, from_phase: str | None
) -> None:
    root = make_project(tmp_path, {"alpha": skill_text("alpha"), "beta": skill_text("beta")})
    options = BatchOptions(
        checkpoints_dir=tmp_path / "checkpoints",
        out_dir=tmp_path / "generated",
        from_phase=from_phase,
    )
    observed: list[str] = []
    real_observe = batch.observe_source

    def observe(path: Path, display: str) -> Any:
        observed.append(display)
        return real_observe(path, display)

    monkeypatch.setattr(batch, "observe_source", observe)
    reports = build_many(
        _targets(root), BuildConfig(root=str(root)), options, phases=make_pipeline().load
    )
    assert [r.problem for r in reports] == [None, None]
    # --from decides from the checkpoints and keeps no stamp: nothing to stat the files for.
    assert len(observed) == (0 if from_phase else 2)


def test_a_streamed_batch_hands_a_held_run_on_to_its_second_leg_as_its_first_leg_packed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch's own process only passes a run held for its session from one pool worker to
    the next: it gets the bytes the first leg pickled, never the run (unpickling and pickling
    it again cost it about a millisecond a skill)."""
    count, jobs, _, _ = PATHS["shared sessions streamed through the pool"]
    _, root, options = _project(tmp_path, count, jobs)
    pipeline = make_pipeline()
    pipeline.phases["code_generation"] = StagingPhase("code_generation")
    monkeypatch.setattr(package_tests, "run_session", lambda *args, **kw: {})
    monkeypatch.setattr(worker, "WarmWorker", _Session)
    _as_shipped(monkeypatch, pipeline)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", _threads)
    given: Counter[str] = Counter()
    real_advance = batch._advance

    def advance(run: Any, *args: Any, **kw: Any) -> Any:
        given[type(run).__name__] += 1
        return real_advance(run, *args, **kw)

    monkeypatch.setattr(batch, "_advance", advance)
    reports = build_many(_targets(root), BuildConfig(root=str(root)), options)
    assert [r.problem for r in reports] == [None] * count
    # Each skill's first leg gets its run from the batch, its second leg the packed bytes.
    assert given == {"Run": count, "_Packed": count}
