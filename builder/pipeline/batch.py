"""Building many skills: ``mindrian build --all`` and ``mindrian check``.

Skills are built in the order given (``discover`` sorts them). Phases 1–6 of
different skills may run at the same time in a process pool (each writes only
its own checkpoints and its own package folder); phase 7 runs in this process,
one skill after another in that same order, because the registry has one
writer. A failing skill never stops the others. Reports come back in input
order whatever the scheduling, and everything written to disk depends only on
the inputs, so the output is the same with one job or many.

Before anything is built, phase 1 of every skill runs here to find two skills
that would share an agent id or a package folder; both are then reported as
failed (naming each other) and not built.

When several skills reach phase 7, their end-to-end probes go through one
:class:`~builder.probe.runner.ProbeServer`, started at once so it loads
the runtime while phases 1–6 run; every probe still runs in a fresh process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from builder.phases import PHASE_NAMES, load_phase, phase_number
from builder.pipeline import runner
from builder.pipeline.config import BuildConfig
from builder.pipeline.errors import MindrianError, SourceLocation
from builder.pipeline.results import BuildReport, PhaseReport, Problem
from builder.pipeline.runner import PhaseLoader, Progress, phase_range

__all__ = [
    "COLLISION_CODE",
    "BatchOptions",
    "Listener",
    "Target",
    "build_many",
    "default_jobs",
    "discover",
    "find_collisions",
]

#: Error code of two skills that map to the same agent id or package.
COLLISION_CODE = "B001"
_CODEGEN = phase_number("code_generation")
_REGISTRATION = phase_number("registration")


@dataclass(frozen=True)
class Target:
    """One skill to build."""

    path: Path
    """Its SKILL.md."""
    display: str
    """How it is named in messages and generated headers (relative to the project root)."""


@dataclass(frozen=True)
class BatchOptions:
    """The switches of one ``build`` run that apply to every skill."""

    checkpoints_dir: Path
    """Checkpoint folder."""
    out_dir: Path
    """Output folder, as reported to the user (phases write to ``config.out_dir``, the same
    folder)."""
    jobs: int = 1
    """Skills whose phases 1–6 may run at once."""
    from_phase: str | None = None
    """``--from``."""
    until_phase: str | None = None
    """``--until``."""
    force: bool = False
    """``--force``."""
    reregister: bool = False
    """Phase 7 runs even when its checkpoint is current (``mindrian register``); earlier phases are
    cached or rebuilt as usual."""


def default_jobs() -> int:
    """min(2, CPUs): phase 6 runs pytest in a subprocess, so more jobs mostly add contention."""
    return max(1, min(2, os.cpu_count() or 1))


def discover(root: Path) -> tuple[Path, ...]:
    """Every ``skills/**/SKILL.md`` under ``root``, sorted by relative POSIX path."""
    found = (root / "skills").glob("**/SKILL.md")
    return tuple(sorted(found, key=lambda p: p.relative_to(root).as_posix()))


def find_collisions(
    targets: Sequence[Target], config: BuildConfig, phases: PhaseLoader = load_phase
) -> dict[str, Problem]:
    """Problems keyed by display path for skills sharing an agent id or package identifier with
    another.

    Skills whose phase 1 fails are left to their own build, which reports why.
    """
    from builder.pipeline.contract import PhaseInput
    from builder.skill.source import load_source

    if len(targets) < 2:
        return {}
    phase = phases(PHASE_NAMES[0])
    owners: dict[tuple[str, str], list[str]] = {}
    for target in targets:
        try:
            result = phase.run(
                PhaseInput(source=load_source(target.path, display=target.display), config=config)
            )
        except MindrianError:
            continue
        if not all(c.passed for c in result.checks):
            continue
        for kind, attribute in (("package", "identifier"), ("agent id", "id")):
            value = getattr(result.output, attribute, None)
            if value is not None:
                owners.setdefault((kind, value), []).append(target.display)
    problems: dict[str, Problem] = {}
    for (kind, value), displays in sorted(owners.items()):
        for display in displays if len(displays) > 1 else ():
            others = " and ".join(d for d in displays if d != display)
            message = (
                f"{display} and {others} both map to the {kind} {value!r}; rename one of the skills"
            )
            problems.setdefault(display, Problem(COLLISION_CODE, message, SourceLocation(display)))
    return problems


class Listener:
    """Hears about a batch as it goes; every method is called in input order, from this process."""

    def started(self, target: Target) -> None:
        """A skill's report is about to be told (its phases follow)."""

    def phase(self, report: PhaseReport) -> None:
        """One phase of the current skill finished."""

    def finished(self, report: BuildReport) -> None:
        """The current skill's final report."""


def build_many(
    targets: Sequence[Target],
    config: BuildConfig,
    options: BatchOptions,
    *,
    listener: Listener | None = None,
    registration: Any = None,
    phases: PhaseLoader | None = None,
) -> tuple[BuildReport, ...]:
    """Build every target; the reports in input order.

    ``registration`` replaces the default phase 7 object (another registry, as
    ``check`` needs). ``phases`` replaces the loader of every phase (tests); a
    loader other than :func:`builder.phases.load_phase` need not survive
    pickling, so with one everything runs in this process. Raises :class:`UsageError` only for bad
    ``--from``/``--until``.
    """
    start, stop = phase_range(options.from_phase, options.until_phase)
    hear = listener or Listener()
    base = phases or _runner_loader()
    collisions = find_collisions(targets, config, _loader(base, registration))
    building = sum(t.display not in collisions for t in targets)
    parallel = base is load_phase and start <= _CODEGEN
    pool = _pool(options.jobs, building) if parallel else None
    registering = building if stop == _REGISTRATION else 0
    with pool or _NoPool(), _shared_probe(registration, base, config, registering) as phase7:
        loader = _loader(base, phase7)
        early = [_submit(pool, t, config, options, collisions, start, stop) for t in targets]
        return tuple(
            _finish(t, e, config, options, hear, loader, stop)
            for t, e in zip(targets, early, strict=True)
        )


@contextlib.contextmanager
def _shared_probe(
    registration: Any, base: PhaseLoader, config: BuildConfig, registering: int
) -> Iterator[Any]:
    """Phase 7 probing through one started :class:`ProbeServer` when several skills reach it, else
    ``registration``.

    Only the real phase 7 with its default probe is changed; a test's phase or probe is kept.
    """
    if registering < 2:
        yield registration
        return
    from builder.phases.registration import RegistrationPhase, output_dir
    from builder.probe.runner import ProbeServer, run_probe

    phase = registration if registration is not None else base("registration")
    if not isinstance(phase, RegistrationPhase) or phase.probe is not run_probe:
        yield registration
        return
    with ProbeServer() as server:
        folder = output_dir(config)
        if folder.is_dir():  # else the first probe starts it, in the folder phase 6 created
            server.start(folder)
        yield phase.with_probe(server)


class _NoPool:
    """Stands in for the pool's context manager when everything runs in this process."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _submit(
    pool: ProcessPoolExecutor | None,
    target: Target,
    config: BuildConfig,
    options: BatchOptions,
    collisions: dict[str, Problem],
    start: int,
    stop: int,
) -> BuildReport | Future[BuildReport] | None:
    """The early phases' report (or its future); None when they run later in this process."""
    if target.display in collisions:
        return BuildReport(
            path=target.display, agent_id=None, phases=(), problem=collisions[target.display]
        )
    if start > _CODEGEN:  # ``--from registration``: phase 7 alone
        return BuildReport(path=target.display, agent_id=None, phases=())
    if pool is None:
        return None
    return pool.submit(
        _early, target, config, options, PHASE_NAMES[min(stop, _CODEGEN) - 1], None, load_phase
    )


def _finish(
    target: Target,
    early: BuildReport | Future[BuildReport] | None,
    config: BuildConfig,
    options: BatchOptions,
    hear: Listener,
    loader: PhaseLoader,
    stop: int,
) -> BuildReport:
    hear.started(target)
    if early is None and not options.reregister:
        # In this process one pass through every phase does what the two parts below do.
        report = _early(target, config, options, PHASE_NAMES[stop - 1], hear.phase, loader)
        hear.finished(report)
        return report
    if early is None:
        report = _early(
            target, config, options, PHASE_NAMES[min(stop, _CODEGEN) - 1], hear.phase, loader
        )
    else:
        report = early.result() if isinstance(early, Future) else early
        for phase in report.phases:
            hear.phase(phase)
    if stop == _REGISTRATION and report.problem is None:
        report = _register(target, config, options, loader, report, hear)
    hear.finished(report)
    return report


def _runner_loader() -> PhaseLoader:
    """The loader the runner uses by default, looked up now (tests may have replaced it)."""
    return runner.load_phase


def _loader(base: PhaseLoader, registration: Any) -> PhaseLoader:
    if registration is None:
        return base
    return lambda name: registration if name == "registration" else base(name)


def _pool(jobs: int, count: int) -> ProcessPoolExecutor | None:
    """A process pool when more than one skill can run at once, else None (build in this process).

    ``spawn`` rather than ``fork``: this process may hold database or Agno threads.
    """
    workers = min(jobs, count)
    if workers <= 1:
        return None
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))


def _early(
    target: Target,
    config: BuildConfig,
    options: BatchOptions,
    until: str,
    progress: Progress | None,
    phases: PhaseLoader,
) -> BuildReport:
    """Phases up to ``until`` of one skill (in a worker process, or here)."""
    return runner.build(
        target.path,
        config,
        checkpoints_dir=options.checkpoints_dir,
        display=target.display,
        from_phase=options.from_phase,
        until_phase=until,
        force=options.force,
        progress=progress,
        phases=phases,
    )


def _register(
    target: Target,
    config: BuildConfig,
    options: BatchOptions,
    loader: PhaseLoader,
    early: BuildReport,
    hear: Listener,
) -> BuildReport:
    """Phase 7 of one skill after its earlier phases; the report joins both parts.

    Earlier phases come from the checkpoints just written (cached), or are
    loaded from them when ``--from``/``--force`` asks phase 7 to run again.
    """
    seen = {p.number: p for p in early.phases}

    def progress(report: PhaseReport) -> None:
        if report.number not in seen:
            hear.phase(report)

    rerun = options.force or options.reregister or options.from_phase is not None
    late = runner.build(
        target.path,
        config,
        checkpoints_dir=options.checkpoints_dir,
        display=target.display,
        from_phase="registration" if rerun else None,
        progress=progress,
        phases=loader,
    )
    return replace(late, phases=tuple(seen.get(p.number, p) for p in late.phases))
