"""Building many skills: ``mindrian build --all`` and ``mindrian check``.

Skills are built in the order given (``discover`` sorts them). Phases 1–6 of
different skills may run at the same time in a process pool (each writes only
its own checkpoints and its own package folder); phase 7 runs in this process,
because the registry has one writer: each skill's in a thread of its own, one at
a time, so the skills waiting for the registry at once are registered together
in that same order (:mod:`.serial_stage`, :mod:`builder.pipeline.turns`). A
failing skill never stops the others, not even when its build raises an internal
error (a bug): that becomes the skill's own failure, code I001 and exit status 3,
and the remaining skills are built and reported. Reports come back in input
order whatever the scheduling, and everything written to disk depends only on
the inputs, so the output is the same with one job or many.

Each skill's SKILL.md and folder are read once (:func:`read_sources`); every
step below builds from that read. Each skill's build is begun once
(:func:`~builder.orchestration.runner.start`), and that one run is walked in
legs wherever its phases run (a worker process, a shared session's second
pass, this process for phase 7): its identity comes from the phase-1 index, or
phase 1 runs (nothing written yet) and the run keeps that result as its phase
1; two skills that would share an agent id or a package folder are both
reported as failed (naming each other) and not built; a skill whose phase 1 is
current takes every step it can from checkpoint heads, so a no-op is known
before any worker starts.

Phase 6's generated tests run in shared pytest sessions (:mod:`.shared_tests`).
In a batch large enough for the pool, skills go through phases 1-6 in chunks,
so one chunk's session overlaps the rendering of the next, and phase 7 starts
on the first chunk while later ones are still generated.

A package tested alone in this process's phase 6, and the end-to-end probes of
phase 7, go through one warm worker (:mod:`builder.orchestration.warm`), started
at once so it loads the runtime while the first phases run; every test run and
probe is still a process of its own, and the probes of the skills waiting for
phase 7 run ahead of their registration, a registration group's worth at a time.

The pool's workers and the warm worker start before the skills' runs, sized for
every skill not current by its stamp (:class:`_HeadStart`): they import while
this process reads the skills and runs their phase 1; a build that turns out to
need less closes them unused. Where this process may fork, the workers are
forked from it once it has imported their phases, before any thread of the
batch starts (:func:`_pool_start_method`); elsewhere they are spawned.

Phase 7 in this process is the one step no other process can take, so the
batch's helper processes (pool workers, the shared sessions forked from the
warm worker) run below it (:func:`~builder.pipeline.children.background`): with
both cores busy it still gets one, and its skills do not pile up behind the
last session. The warm worker and its probes run at the batch's own priority:
phase 7 waits for its probes.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import shutil
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future, InvalidStateError
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from builder.orchestration import runner
from builder.orchestration.runner import (
    Hold,
    KeyLoader,
    PhaseLoader,
    Phases,
    Serviced,
    phase_range,
)
from builder.orchestration.schedule import Schedule
from builder.orchestration.serial_stage import SerialStage
from builder.orchestration.stamping import Hit, Seen, check_stamp, make_stamp, observe_source
from builder.orchestration.warm import Entry, warm_children
from builder.phases import PHASE_NAMES
from builder.phases.keys import output_paths
from builder.phases.outputs import AnyPhase
from builder.pipeline.arenas import share_arenas
from builder.pipeline.build_results import BuildReport, PhaseReport
from builder.pipeline.checkpoints import CheckpointStore
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import SkillSource
from builder.pipeline.errors import CompilerError, SourceLocation
from builder.pipeline.forked import can_fork, in_two
from builder.pipeline.output_folder import (
    committed_ids,
    generated_packages,
    unfinished_removals,
    unfinished_retire,
)
from builder.pipeline.results import Problem, problem_of
from builder.pipeline.services import Services
from builder.pipeline.stamps import StampStore
from builder.pipeline.turns import Turns
from builder.skill.source import load_source

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from builder.orchestration.shared_tests import SharedResults
    from builder.phases.registration import RegistrationPhase
    from builder.pipeline.worker import ModuleRunner, WarmWorker
    from builder.probe.runner import WarmProbes

__all__ = [
    "COLLISION_CODE",
    "BatchOptions",
    "Discovery",
    "Listener",
    "Target",
    "build_many",
    "default_jobs",
    "discover",
    "discover_skills",
    "find_collisions",
    "read_sources",
    "retire_removed",
    "retire_waits",
]

#: Error code of two skills that map to the same agent id or package.
COLLISION_CODE = "B001"

_T = TypeVar("_T")


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
    debug: bool = False
    """``mindrian --debug``: an internal error's traceback goes to stderr, and the batch goes on."""
    run_tests: bool = True
    """Phase 6 runs the generated tests; False only renders, compiles, installs (``check``)."""
    identities: Path | None = None
    """Checkpoint folder whose phase-1 index gives skills' agent ids and packages when looking
    for collisions (``check``: the project's, as phase 1's digest is the same in a fresh build);
    None: ``checkpoints_dir``. A skill it does not know runs phase 1 for that, as always."""
    scratch: bool = False
    """Phases 1-6 run in memory and keep no checkpoint (:func:`runner.scratch_build`), and each
    report carries phase 5's framework record (``check``: its scratch folder is thrown away
    unread). Only with ``until_phase`` at most phase 6, no tests and nothing forced or resumed."""


def default_jobs() -> int:
    """min(2, CPUs): phase 6 runs pytest in a subprocess, so more jobs mostly add contention."""
    return max(1, min(2, os.cpu_count() or 1))


def discover(root: Path) -> tuple[Path, ...]:
    """Every ``skills/**/SKILL.md`` under ``root``, sorted by relative POSIX path
    (:func:`discover_skills`, whose links out of the project are left out)."""
    return discover_skills(root).skills


@dataclass(frozen=True)
class Discovery:
    """What ``skills/`` holds: the skill files to build and the links not followed."""

    skills: tuple[Path, ...]
    """Every ``skills/**/SKILL.md``, sorted by relative POSIX path."""
    outside: tuple[str, ...]
    """Root-relative names of the links under ``skills/`` to a folder outside the project,
    sorted: not followed, so their skills are not built (and nothing is retired for them)."""


def discover_skills(root: Path) -> Discovery:
    """Every ``skills/**/SKILL.md`` under ``root`` (hidden folders too), from one listing of each
    folder: a no-op build of many skills starts here, and a glob stats every entry.

    A link to a folder is followed when it leads to a folder inside the project (not when it
    leads back to a folder it is in: that would never end), and left out, named in
    ``outside``, when it leads outside: the project's sources are what is under its root.
    """
    top = root / "skills"
    if not top.is_dir():
        return Discovery((), ())
    outside: list[str] = []
    top_path = os.fspath(top)
    real = os.path.realpath(top_path)
    found = _skill_files(top_path, "skills", os.path.realpath(root), (), outside, real)
    return Discovery(tuple(root / name for name in sorted(found)), tuple(sorted(outside)))


def _skill_files(
    folder: str,
    relative: str,
    root: str,
    above: tuple[str, ...],
    outside: list[str],
    real: str,
) -> Iterator[str]:
    """Root-relative names of the ``SKILL.md`` in ``folder`` (``relative`` to the root, ``real``
    its real path) and in every folder below it (links to folders as :func:`discover_skills`
    says)."""
    try:
        with os.scandir(folder) as listing:
            entries = list(listing)
    except (PermissionError, FileNotFoundError, NotADirectoryError):
        return
    here = (*above, real)
    for entry in entries:
        # Path.exists: a link counts when it leads somewhere.
        if entry.name == "SKILL.md" and (not entry.is_symlink() or os.path.exists(entry.path)):
            yield f"{relative}/SKILL.md"
        name = f"{relative}/{entry.name}"
        if _is_folder(entry):
            # A folder that is no link is where its parent really is: no path to resolve (a
            # no-op lists thousands of folders, and resolving one stats each part of its path).
            below = os.path.join(real, entry.name)
            yield from _skill_files(entry.path, name, root, here, outside, below)
        elif entry.is_symlink() and os.path.isdir(entry.path):
            target = os.path.realpath(entry.path)
            if os.path.commonpath((target, root)) != root:
                outside.append(name)
            elif target not in here:
                yield from _skill_files(entry.path, name, root, here, outside, target)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def read_sources(targets: Sequence[Target]) -> tuple[dict[str, SkillSource], dict[str, Problem]]:
    """Each target's SKILL.md and folder, read once for the whole batch, by display path; and why
    a target's cannot be read (its report's problem), by display path."""
    sources, unreadable, _ = _read_observed(targets, observing=False)
    return sources, unreadable


def _read_observed(
    targets: Sequence[Target], observing: bool = True
) -> tuple[dict[str, SkillSource], dict[str, Problem], dict[str, Seen]]:
    """:func:`read_sources`, and with ``observing`` each read skill's files as stat'ed just
    before (for its stamp: its folder is listed once, for the stats and the read; a build that
    keeps no stamps need not stat them)."""
    sources: dict[str, SkillSource] = {}
    unreadable: dict[str, Problem] = {}
    seen: dict[str, Seen] = {}
    for target in targets:
        observed = observe_source(target.path, target.display) if observing else None
        try:
            data, listing = (None, None) if observed is None else (observed.data, observed.listing)
            sources[target.display] = load_source(
                target.path, target.display, data, listing=listing
            )
        except CompilerError as error:
            unreadable[target.display] = runner.located(problem_of(error), target.display)
        if observed is not None and target.display in sources:
            seen[target.display] = observed
    return sources, unreadable, seen


def find_collisions(
    sources: Sequence[SkillSource],
    config: BuildConfig,
    phases: PhaseLoader = runner.SHIPPED.load,
    checkpoints: CheckpointStore | None = None,
    known: Mapping[str, tuple[Path, str, str | None]] | None = None,
) -> dict[str, Problem]:
    """Problems keyed by display path for skills sharing an agent id or package identifier with
    another.

    A skill whose phase 1 is current in ``checkpoints`` is known from the
    checkpoint index; phase 1 runs in the runner (nothing is written) for the
    others. Skills whose phase 1 fails are left to their own build, which reports why.
    ``known`` gives (SKILL.md path, agent id, identifier) by display path of skills found
    current from their stamps, which are read only when they take part in a collision.
    """
    runs = {
        s.path: runner.start(s, config, checkpoints_dir=None, phases=phases, index=checkpoints)
        for s in sources
    }
    return _collisions(runs, config, phases, known or {})


def _collisions(
    runs: Mapping[str, runner.Run],
    config: BuildConfig,
    phases: PhaseLoader,
    others_known: Mapping[str, tuple[Path, str, str | None]],
) -> dict[str, Problem]:
    """:func:`find_collisions` from each source's run (its phase 1 gives the line to name)."""
    if len(runs) + len(others_known) < 2:
        return {}
    identities = [(display, run.identity) for display, run in runs.items()]
    identities += [(display, (a, i)) for display, (_, a, i) in others_known.items()]
    owners: dict[tuple[str, str], list[str]] = {}
    for display, identity in identities:
        for kind, value in zip(("agent id", "package"), identity or (), strict=False):
            if value is not None:
                owners.setdefault((kind, value), []).append(display)
    problems: dict[str, Problem] = {}
    for (kind, value), owning in sorted(owners.items()):
        for display in owning if len(owning) > 1 else ():
            others = " and ".join(o for o in owning if o != display)
            message = (
                f"{display} and {others} both map to the {kind} {value!r}; rename one of the skills"
            )
            line = _name_line(display, runs, others_known, config, phases)
            problems.setdefault(
                display, Problem(COLLISION_CODE, message, SourceLocation(display, line))
            )
    return problems


def _name_line(
    display: str,
    runs: Mapping[str, runner.Run],
    known: Mapping[str, tuple[Path, str, str | None]],
    config: BuildConfig,
    phases: PhaseLoader,
) -> int:
    """The line a colliding skill's agent id comes from: from its run, or, for a skill known
    from its stamp, from its SKILL.md read again."""
    if display in runs:
        return runs[display].name_line(phases)
    try:
        source = load_source(known[display][0], display=display)
    except CompilerError:
        return 0
    return runner.name_line(source, config, phases=phases)


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
    registration: RegistrationPhase | None = None,
    phases: PhaseLoader | None = None,
    services: Services | None = None,
) -> tuple[BuildReport, ...]:
    """Build every target; the reports in input order.

    ``registration`` replaces the default phase 7 object (another registry, as
    ``check`` needs). ``phases`` replaces the loader of every phase (tests); such
    a loader need not survive pickling, so with one everything runs in this
    process. ``services`` chooses how the phases' children run (a test's doubles);
    what it leaves unset the batch fills (a warm worker, shared sessions). Raises
    :class:`UsageError` only for bad ``--from``/``--until``.
    """
    span = phase_range(options.from_phase, options.until_phase)
    stop = span[1]
    chosen = Phases.local(phases) if phases is not None else runner.DEFAULT
    keys = _keys(chosen.keys, registration)
    if options.scratch and (
        Schedule.of(keys).reaches_serial(stop) or options.run_tests or _reruns(options)
    ):
        raise ValueError("a scratch build renders the parallel phases only, without tests")
    hear = listener or Listener()
    own = services or Services()
    given = replace(own, tests=own.tests and options.run_tests)
    stamping = _stamping(options, stop)
    hits = _hits(targets, config, options, keys) if stamping else {}
    # The helpers the skills not known current would need import now, while this process reads
    # and starts every skill's run (a cold batch of many skills: seconds of one core).
    ahead = _shape(len(targets) - len(hits), chosen, keys, given, options, span)
    head = _head_start(ahead, chosen, given, config)
    try:
        return _build(
            targets, config, options, hear, registration, chosen, keys, given, stamping, hits, head
        )
    finally:
        head.close()


def _build(
    targets: Sequence[Target],
    config: BuildConfig,
    options: BatchOptions,
    hear: Listener,
    registration: RegistrationPhase | None,
    chosen: Phases,
    keys: KeyLoader,
    given: Services,
    stamping: bool,
    hits: Mapping[str, Hit],
    head: _HeadStart,
) -> tuple[BuildReport, ...]:
    """:func:`build_many` once the stamps are read (``stamping``: the build keeps them), with
    helpers started ahead in ``head``."""
    span = head.shape.start, head.shape.stop
    base = Serviced(chosen.load, given)
    store = CheckpointStore(options.checkpoints_dir)
    loader = _loader(base, registration)
    index = CheckpointStore(options.identities) if options.identities is not None else store
    rerun_from = _rerun_from(options, keys)
    buildable, blocked, seen = _begin(
        targets, hits, config, options, loader, index, rerun_from, span[1], stamping
    )
    current = {d: r.report for d, r in buildable.items() if r.finished(span[1])}
    building = len(buildable) - len(current)
    current |= {d: h.report for d, h in hits.items() if d not in blocked}
    shape = _shape(building, chosen, keys, given, options, span)
    shared, registering = shape.shared, shape.registering
    pool = head.pool(shape.workers)
    plan = _Plan(config, options, shape.start, shape.stop, shape.schedule)
    # Skills reaching a serial phase at once do its shared step together (phase 7's registry).
    group = _serial_group(registering)
    turns = Turns(group, _SERIAL_GATHER_SECONDS) if registering > 1 else None
    with (
        _closing(pool),
        warm_children(
            _loader(chosen.load, registration),
            config,
            replace(given, turns=turns),
            shape.schedule,
            tests_here=shape.tests_here,
            registering=registering,
            # A group's probes run while the group before it registers (one skill: its own).
            ahead=max(options.jobs, group if turns else 1),
            worker=head.worker,
        ) as children,
    ):
        early = [
            current.get(t.display)
            or _submit(None if shared else pool, t, buildable, blocked, plan, base)
            for t in targets
        ]
        if shared:
            early = _test_together(
                targets,
                buildable,
                early,
                pool,
                plan,
                chosen.load,
                given,
                children.worker,
                children.probes,
            )
        finisher = _Finisher(buildable, plan, hear, children.loader)
        reports: list[BuildReport] = []

        def told(done: Iterator[tuple[Target, BuildReport, _Heard]]) -> None:
            for target, report, heard in done:  # in input order
                heard.tell(hear)
                if stamping:
                    hit = hits.get(target.display)
                    _record(target, report, hit, buildable, seen, config, options)
                # Done with: only its report is kept (a batch of 1,000 skills held every run,
                # its sources and phase outputs, to the end).
                early[len(reports)] = report
                buildable.pop(target.display, None)
                seen.pop(target.display, None)
                reports.append(report)

        with SerialStage[tuple[Target, BuildReport, _Heard]](turns) as stage:
            stage.expect(len(targets))
            plan_probes = children.planner(early)
            for target, entry in zip(targets, early, strict=True):
                if isinstance(entry, Future):
                    wait_for((entry,))  # here: the serial phases' threads take turns meanwhile
                stage.aside(plan_probes)
                stage.submit(functools.partial(finisher.heard, target, entry))
                told(stage.finished())
            stage.aside(plan_probes, wait=True)  # every skill's parallel phases are done
            told(stage.finished(wait=True))
        return tuple(reports)


def _begin(
    targets: Sequence[Target],
    hits: Mapping[str, Hit],
    config: BuildConfig,
    options: BatchOptions,
    loader: PhaseLoader,
    index: CheckpointStore,
    rerun_from: int | None,
    stop: int,
    stamping: bool,
) -> tuple[dict[str, runner.Run], dict[str, Problem], dict[str, Seen]]:
    """The run of each skill not known current from its stamp that can be built, by display
    path; why the others cannot be (unreadable, colliding); and, when the build keeps stamps
    (``stamping``), each read skill's files as stat'ed before the read (for its stamp). Each
    run goes through phase ``stop`` at most.

    One entry into the runner per skill: its run knows its identity (phase 1 runs here when it
    is not current, once) and whether it has anything to do. Nothing else keeps the sources
    read: a skill's run holds them, and is let go once the skill is reported.
    """
    reading = [t for t in targets if t.display not in hits]
    sources, blocked, seen = _read_observed(reading, stamping)
    paths = {t.display: t.path for t in targets}
    known = {d: (paths[d], h.agent_id, h.identifier) for d, h in hits.items()}
    runs = _start(sources, config, options, loader, index, rerun_from, stop)
    blocked |= _collisions(runs, config, loader, known)
    return {d: r for d, r in runs.items() if d not in blocked}, blocked, seen


@dataclass(frozen=True)
class _Shape:
    """How a batch runs the skills it builds: where their phases run and which helpers they
    need. Decided by :func:`_shape` alone, for the helpers started ahead and for the build."""

    start: int
    """Number of the first phase to run."""
    stop: int
    """Number of the last phase to run."""
    schedule: Schedule
    """Where the phases run (an empty one when nothing is built: no phase key is read)."""
    testing: bool
    """Phase 6 runs the packages' tests."""
    shared: bool
    """They run in shared pytest sessions (:mod:`.shared_tests`): the workers only stage."""
    workers: int
    """The process pool's workers; 0: the parallel phases run in this process."""
    registering: int
    """Skills that reach a serial phase (phase 7's registry)."""

    @property
    def threaded(self) -> bool:
        """The batch runs threads beside this one: its serial stage's, its pool's, its shared
        sessions'."""
        return self.registering > 1 or self.workers > 0 or self.shared

    @property
    def tests_here(self) -> bool:
        """Package tests run in this process, one package at a time (the warm worker's)."""
        return self.testing and not self.shared and not self.workers

    def warm_worker(self, services: Services) -> bool:
        """Whether the build wants its warm worker: for the package tests or the shared
        sessions ``services`` leaves to it, or for the probes of the serial phases."""
        tests = self.testing and services.package_tests is None
        probes = self.registering > 0 and self.schedule.probes and services.probe is None
        return tests or probes


def _shape(
    building: int,
    chosen: Phases,
    keys: KeyLoader,
    services: Services,
    options: BatchOptions,
    span: tuple[int, int],
) -> _Shape:
    """The shape of a batch that builds ``building`` skills with ``services``, phases ``span``
    (first, last: :func:`phase_range` of the options)."""
    start, stop = span
    # Nothing to build: no phase module need be imported to know where phases would run.
    schedule = Schedule.of(keys) if building else Schedule(len(PHASE_NAMES) + 1, None, False)
    testing = services.tests and schedule.tests_packages(start, stop)
    # Package tests in shared sessions (shared_tests): the workers only stage, like ``check``.
    shared = testing and building > 1 and services.package_tests is None
    parallel = chosen.portable and start <= schedule.last_parallel
    workers = _workers(options.jobs, building, testing and not shared) if parallel else 0
    registering = building if schedule.reaches_serial(stop) else 0
    return _Shape(start, stop, schedule, testing, shared, workers, registering)


@dataclass(frozen=True)
class _Plan:
    """What every skill of a batch shares: its configuration, switches, phase range and
    schedule."""

    config: BuildConfig
    """The build's configuration."""
    options: BatchOptions
    """The batch's switches."""
    start: int
    """Number of the first phase to run."""
    stop: int
    """Number of the last phase to run."""
    schedule: Schedule
    """Where the phases run."""

    @property
    def parallel_until(self) -> int:
        """Number of the last phase a worker process runs."""
        return self.schedule.parallel_until(self.stop)


def _stamping(options: BatchOptions, stop: int) -> bool:
    """Whether this build decides and records no-ops with stamps (see
    :mod:`builder.orchestration.stamping`)."""
    return stop == len(PHASE_NAMES) and options.run_tests and not _reruns(options)


def _reruns(options: BatchOptions) -> bool:
    """Whether phases run again even when their checkpoints are current."""
    return options.force or options.reregister or options.from_phase is not None


def _keys(keys: KeyLoader, registration: AnyPhase | None) -> KeyLoader:
    """What the stamps are checked with and the schedule read from: the phases' keys, with an
    explicit phase 7 as its own key (it is already imported)."""
    if registration is None:
        return keys
    return lambda name: registration if name == "registration" else keys(name)


#: Skills from which a batch with more than one job checks their stamps in two processes
#: (:func:`builder.pipeline.forked.in_two`): a fork and its answer cost some 5 ms, a skill's
#: check about 1 ms of one core.
_FORKED_CHECKS = 64


def _hits(
    targets: Sequence[Target], config: BuildConfig, options: BatchOptions, keys: KeyLoader
) -> dict[str, Hit]:
    """The skills whose stamps say they are current, by display path (in input order)."""
    check = functools.partial(_checked_stamps, config=config, options=options, keys=keys)
    if options.jobs < 2 or len(targets) < _FORKED_CHECKS:
        return check(targets)
    first, second = in_two(targets, check)
    return first | second


def _checked_stamps(
    targets: Sequence[Target], config: BuildConfig, options: BatchOptions, keys: KeyLoader
) -> dict[str, Hit]:
    """:func:`_hits` of ``targets``, in this process."""
    found = {}
    for target in targets:
        hit = check_stamp(target.path, target.display, config, options.checkpoints_dir, keys)
        if hit is not None:
            found[target.display] = hit
    return found


def _record(
    target: Target,
    report: BuildReport,
    hit: Hit | None,
    runs: Mapping[str, runner.Run],
    seen: Mapping[str, Seen],
    config: BuildConfig,
    options: BatchOptions,
) -> None:
    """Write (or drop) the skill's stamp after its build; a hit's only when its times moved."""
    stamps = StampStore(options.checkpoints_dir)
    # A stamp that cannot be written costs the next build a full check, never a wrong no-op:
    # every stamp is verified against the files and digests it records.
    with contextlib.suppress(OSError):
        if hit is not None and report is hit.report:
            if hit.rewrite is not None:
                stamps.write(hit.rewrite)
            return
        run, observed = runs.get(target.display), seen.get(target.display)
        stamp = None
        if run is not None and observed is not None:
            stamp = make_stamp(run, observed, report, config, options.checkpoints_dir)
        if stamp is None:
            stamps.remove(target.display)
        else:
            stamps.write(stamp)


def retire_removed(
    reports: Sequence[BuildReport],
    config: BuildConfig,
    registration: RegistrationPhase | None = None,
) -> tuple[str, ...]:
    """After a build of every skill of a project: unregister and uninstall the frameworks whose
    skill is gone (deleted or renamed); the ids removed.

    Nothing is removed unless every report names its agent id: a skill whose
    phase 1 failed might be the owner of any of them.
    """
    keep = {r.agent_id for r in reports}
    if None in keep or not _anything_to_retire(config, {k for k in keep if k is not None}):
        return ()
    from builder.phases.registration import PHASE

    phase = PHASE if registration is None else registration
    return tuple(phase.retire(config, {k for k in keep if k is not None}))


def retire_waits(reports: Sequence[BuildReport], config: BuildConfig) -> bool:
    """Whether :func:`retire_removed` left something of a removed skill installed because a
    skill failed before its agent id was known (it might own it): the next batch in which every
    skill gets past phase 1 retires it."""
    keep = {r.agent_id for r in reports}
    return None in keep and _anything_to_retire(config, {k for k in keep if k is not None})


def _anything_to_retire(config: BuildConfig, keep: set[str]) -> bool:
    """Whether the output folder holds anything of a skill not in ``keep`` (or a removal or a
    retire a killed run left), found without opening the registry: after most builds there is
    nothing, and phase 7's module and the registry's would cost more than the rest of a no-op."""
    paths = output_paths(config.root, config.out_dir)
    ids = committed_ids(paths)
    if ids is None or not ids <= keep or unfinished_removals(paths) or unfinished_retire(paths):
        return True
    return not generated_packages(paths.generated).keys() <= keep


def _start(
    sources: Mapping[str, SkillSource],
    config: BuildConfig,
    options: BatchOptions,
    phases: PhaseLoader,
    index: CheckpointStore,
    rerun_from: int | None,
    stop: int,
) -> dict[str, runner.Run]:
    """Each skill's run (:func:`runner.start`), by display path: its identity, and as many
    steps through phase ``stop`` as checkpoint heads allow when nothing is forced (all of them
    for a skill with nothing to do).

    They begin in this process, so a batch starts workers and a probe server only
    for the skills that need them (none at all for a no-op).
    """
    current = None if _reruns(options) or options.scratch else stop
    return {
        display: runner.start(
            source,
            config,
            checkpoints_dir=None if options.scratch else options.checkpoints_dir,
            phases=phases,
            index=index,
            from_phase=options.from_phase,
            rerun_from=rerun_from,
            current=current,
        )
        for display, source in sources.items()
    }


def _rerun_from(options: BatchOptions, keys: KeyLoader) -> int | None:
    """The first phase that runs even when its checkpoint is current: ``--from``'s with
    ``--from`` or ``--force``, the first serial one with ``register``."""
    if options.force or options.from_phase is not None:
        return phase_range(options.from_phase, None)[0]
    return Schedule.of(keys).serial if options.reregister else None


@contextlib.contextmanager
def _closing(pool: ProcessPoolExecutor | None) -> Iterator[None]:
    """Shut ``pool`` down on the way out, waiting for its work; on an exception (Ctrl-C), at
    once: queued work is cancelled and the workers, which ignore SIGINT so that they print no
    traceback of their own (:func:`_pool_worker`), are terminated rather than waited for."""
    if pool is None:
        yield
        return
    try:
        yield
    except BaseException:
        # The executor keeps no public handle on its processes; terminating is the only way not
        # to wait for a running phase 6.
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _pool_worker(batch: int, foreign: Sequence[int] = ()) -> None:
    """A worker's initializer: Ctrl-C is the batch's to handle, in the process that started it;
    the worker runs below it, in a session of its own (:func:`background`: the batch's serial
    phases get their core), and dies with it. A forked worker closes ``foreign``, the batch's
    ends of its warm worker's pipes: only the batch talks to that server.

    A worker holds both ends of the pool's call queue (a ``multiprocessing`` queue pickles
    them together), so a killed batch never closes its reader: it would wait for work forever.
    """
    from builder.pipeline.children import background, exit_when_orphaned  # a no-op starts none

    for descriptor in foreign:
        with contextlib.suppress(OSError):
            os.close(descriptor)
    exit_when_orphaned(batch)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):  # AttributeError: not POSIX
        os.setsid()
    background(batch)


def _submit(
    pool: ProcessPoolExecutor | None,
    target: Target,
    runs: dict[str, runner.Run],
    blocked: Mapping[str, Problem],
    plan: _Plan,
    phases: PhaseLoader,
) -> Entry | Future[Entry] | None:
    """The skill's run after its parallel phases in the pool (its future); None when they run
    later in this process.

    A skill that cannot be read, or collides with another, is not built: its report is the
    problem.
    """
    if target.display in blocked:
        return BuildReport(
            path=target.display, agent_id=None, phases=(), problem=blocked[target.display]
        )
    if pool is None:
        return None
    # The pool's copy comes back in its place (_Finisher): this process keeps one run a skill.
    return pool.submit(_advance, runs.pop(target.display), plan.parallel_until, phases)


def _advance(
    run: runner.Run | _Packed, stop: int, phases: PhaseLoader, hold: Hold | None = None
) -> Entry:
    """``run`` walked through phase ``stop`` (in a worker process, or here) and handed back."""
    walked = pickle.loads(run.run) if isinstance(run, _Packed) else run
    walked.advance(stop, phases, hold=hold)
    return walked


@dataclass(frozen=True)
class _Packed:
    """A run held for its shared session, as its first leg in a pool worker pickled it: the
    batch only hands it on to the second leg, so its process never unpickles it (it did, and
    pickled it again, for each skill: a run holding five phases' outputs and its skill's files
    weighs about 100 KB, some 0.5-1 ms of the batch's process each way)."""

    run: bytes
    """The pickled run."""


#: What a first leg hands back: a run held for its session (packed from a pool worker), or
#: the run or report of a skill that needs none.
_First = Entry | _Packed


def _first_leg(run: runner.Run, stop: int, phases: PhaseLoader, hold: Hold) -> Entry | _Packed:
    """:func:`_advance` in a pool worker for a first leg: a run it holds comes back packed."""
    walked = _advance(run, stop, phases, hold)
    if isinstance(walked, runner.Run) and walked.held:
        return _Packed(pickle.dumps(walked, protocol=pickle.HIGHEST_PROTOCOL))
    return walked


@dataclass(frozen=True)
class _Finisher:
    """What completing a skill in this process needs, the same for every skill of a batch: its
    run's parallel phases awaited (or walked here), the serial ones, and its report told in
    input order."""

    runs: dict[str, runner.Run]
    """The runs of the skills to build, by display path: a run walked elsewhere (a pool's copy)
    takes the place of the one handed over there."""
    plan: _Plan
    """The batch's configuration, switches, phase range and schedule."""
    hear: Listener
    """Told of each skill's start, phases and report."""
    loader: PhaseLoader
    """The loader of the phases run here (the warm children's)."""

    def finish(self, target: Target, early: Entry | Future[Entry] | None) -> BuildReport:
        """Every phase of one skill up to the plan's last, told to :attr:`hear`; a bug while
        building it fails that skill, not the batch."""
        self.hear.started(target)
        options = self.plan.options
        report = _guarded(target, options, functools.partial(self._complete, target, early))
        self.hear.finished(report)
        return report

    def heard(
        self, target: Target, early: Entry | Future[Entry] | None
    ) -> tuple[Target, BuildReport, _Heard]:
        """:meth:`finish`, with what it tells kept for later (see :class:`_Heard`)."""
        heard = _Heard()
        return target, replace(self, hear=heard).finish(target, early), heard

    def _complete(self, target: Target, early: Entry | Future[Entry] | None) -> BuildReport:
        """The rest of the skill's run, walked here after the phases it took elsewhere (each
        told as it ends).

        ``early`` is None only for a skill that is built (it has a run in :attr:`runs`).
        """
        entry = early.result() if isinstance(early, Future) else early
        run = self.runs[target.display] if entry is None else entry
        for phase in run.phases if isinstance(run, BuildReport) else run.reports:
            self.hear.phase(phase)
        if isinstance(run, BuildReport):
            return run
        self.runs[target.display] = run
        report = run.advance(self.plan.stop, self.loader, progress=self.hear.phase)
        return _framed(report, run) if self.plan.options.scratch else report


def _framed(report: BuildReport, run: runner.Run) -> BuildReport:
    """A scratch build's report with the framework record of its graph, taken from the output
    in memory."""
    if report.problem is not None:
        return report
    try:
        graph = run.outputs.graph()
    except LookupError:  # the build stopped before the graph phase
        return report
    return replace(report, framework=graph.to_framework_record())


class _Heard(Listener):
    """What one skill's build told, kept to be told again in input order (its serial phases run
    in a thread of :class:`SerialStage`)."""

    def __init__(self) -> None:
        self._calls: list[Callable[[Listener], None]] = []

    def started(self, target: Target) -> None:
        self._calls.append(lambda hear: hear.started(target))

    def phase(self, report: PhaseReport) -> None:
        self._calls.append(lambda hear: hear.phase(report))

    def finished(self, report: BuildReport) -> None:
        self._calls.append(lambda hear: hear.finished(report))

    def tell(self, hear: Listener) -> None:
        """Tell ``hear`` everything heard, in the order heard."""
        for call in self._calls:
            call(hear)


def _internal_failure(target: Target, error: Exception) -> BuildReport:
    """The report of a skill whose build raised something other than a stage error."""
    problem = runner.located(problem_of(error, "build"), target.display)
    return BuildReport(path=target.display, agent_id=None, phases=(), problem=problem)


def _test_together(
    targets: Sequence[Target],
    runs: dict[str, runner.Run],
    early: list[Entry | Future[Entry] | None],
    pool: ProcessPoolExecutor | None,
    plan: _Plan,
    load: PhaseLoader,
    services: Services,
    worker: WarmWorker | None = None,
    probes: WarmProbes | None = None,
) -> list[Entry | Future[Entry] | None]:
    """The parallel phases of every skill to build, their package tests in shared pytest
    sessions (forked from ``worker``, the build's warm worker, when it has one), which also
    probe what passes for ``probes`` (phase 7's, when it runs).

    ``early`` is what :func:`_submit` gave without a pool: None for each skill
    to build, whose run is walked in the two legs of
    :mod:`builder.orchestration.shared_tests`. Other entries are kept.

    Without a pool that is one session, in this process, before this returns.
    With one, the skills go through in chunks (:func:`_chunks`) driven by a
    thread of its own, and their entries are futures: a session runs in one
    process, so while it tests one chunk the pool renders the next one and
    finishes the one before, and phase 7 (in this process) starts on the first
    chunk while later ones are still being generated.
    """
    from builder.orchestration.shared_tests import clear_sessions
    from mindrian.project import ProjectPaths

    building = [i for i, entry in enumerate(early) if entry is None]
    config = plan.config
    chunked = _Chunked(
        targets,
        runs,
        plan,
        load,
        services,
        pool,
        clear_sessions(ProjectPaths(Path(config.root), Path(config.out_dir))),
        worker,
        probes,
    )
    done: list[Entry | Future[Entry] | None] = list(early)
    if pool is None:
        for i, entry in chunked.in_process(building).items():
            done[i] = entry
        return done
    futures: dict[int, Future[Entry]] = {i: Future() for i in building}
    # A daemon: a build interrupted mid-session exits at once; the next build clears the folder.
    threading.Thread(
        target=chunked.stream, args=(_chunks(building), futures), name="phase6", daemon=True
    ).start()
    for i, future in futures.items():
        done[i] = future
    return done


def _join_all(threads: Sequence[threading.Thread]) -> None:
    for thread in threads:
        thread.join()


def _fail_unset(out: Mapping[int, Future[Entry]], error: BaseException) -> None:
    """Every future of ``out`` not yet set fails with ``error``."""
    for future in list(out.values()):  # other threads take theirs out meanwhile
        with contextlib.suppress(InvalidStateError):
            future.set_exception(error)


#: Skills registered together at most, and so threads running a batch's serial phases: a
#: group pays for one registry open, journal and registry.yaml write (each tens of ms).
_SERIAL_GROUP = 32


def _serial_group(registering: int) -> int:
    """How many of ``registering`` skills register together at most: groups as even as
    :data:`_SERIAL_GROUP` allows, in as few groups as it needs.

    A group is registered once its last skill is done, so a small last one (a 100 in groups of
    32: four) was the batch's last work, alone on one core after the full group before it.
    A 100's four groups of 25 are also the chunks its shared sessions test
    (:func:`_chunks`): each registers as soon as its chunk is done.
    """
    groups = -(-registering // _SERIAL_GROUP)
    return max(1, -(-registering // max(1, groups)))


#: How long a group of fewer skills waits, from its first, for the skills still to come:
#: skills leave the pool one by one, and served as they came a cold batch of 100 opened the
#: registry some 20 times. Only how many skills share a group depends on it, never the output.
_SERIAL_GATHER_SECONDS = 2.0

#: Skills per shared session of a streamed batch, at least and about at most. A session forked
#: from the warm worker costs about 0.05 s of CPU to start and 0.025 s per package of
#: synthesized operators (2-core machine, loaded; the 100 of one build in 1, 2, 4 or 8 sessions:
#: 2.8-3.3 CPU s in all): four chunks or more keep both cores busy, and chunks this size still
#: pay for their start-up.
_CHUNK_MIN, _CHUNK_MAX = 16, 128


def _chunks(building: Sequence[int]) -> list[list[int]]:
    """``building`` cut into chunks of even size, in order: four when each gets at least
    :data:`_CHUNK_MIN`, more when they would pass :data:`_CHUNK_MAX`, one when it is small."""
    count = max(1, min(len(building) // _CHUNK_MIN, max(4, -(-len(building) // _CHUNK_MAX))))
    size = -(-len(building) // count)
    return [list(building[k : k + size]) for k in range(0, len(building), size)]


@dataclass(frozen=True)
class _Chunked:
    """The parallel phases of a batch's skills in two legs of their runs around shared
    sessions, chunk by chunk."""

    targets: Sequence[Target]
    """Every target of the batch; a chunk lists indexes into it."""
    runs: dict[str, runner.Run]
    """The skills' runs by display path, each taken out when its first leg is queued: the leg
    hands back the run that goes on."""
    plan: _Plan
    """The batch's configuration, switches, phase range and schedule."""
    load: PhaseLoader
    """The loader of every phase."""
    services: Services
    """How the phases' children run, but for the package tests, which the sessions answer."""
    pool: Executor | None
    """Where phases run (a process pool; threads in tests); None: in this process."""
    staging: Path
    """Where session folders are made."""
    worker: WarmWorker | None = None
    """The build's warm worker, which the streamed sessions fork from; None: they start one."""
    probes: WarmProbes | None = None
    """Phase 7's probes, told the successes of the sessions' probes; None: sessions probe
    nothing."""

    def in_process(self, chunk: Sequence[int]) -> dict[int, Entry]:
        """Every skill of ``chunk`` through phase 6, one session, in this process."""
        folder, first = self._stage(chunk)
        held = [i for i in chunk if _held(first[i])]
        done: dict[int, Entry] = dict(first)
        try:
            results = self._session(folder, held, self.plan.options.jobs)
            for i in held:
                done[i] = self._guarded(
                    i, functools.partial(_advance, *self._second(i, first, results))
                )
        finally:  # after phase 6 took the packages it tested out of it
            shutil.rmtree(folder, ignore_errors=True)
        return done

    def stream(self, chunks: Sequence[Sequence[int]], out: dict[int, Future[Entry]]) -> None:
        """Every chunk through phase 6, each skill's run set in ``out`` as soon as it is known.

        A chunk's first leg is queued in the pool as soon as the one before is
        staged; its session then runs beside up to ``jobs - 1`` others, and its
        second leg is queued as it ends, so sessions, rendering and phase 7
        overlap. Each session is forked from the build's warm worker (one
        started now when the build has none, so it imports while the first
        chunk renders), ``jobs`` sessions at a time. A failure here fails the
        skills not yet reported. Each future is taken out of ``out`` once set,
        or handed to the second leg that sets it: this thread keeps no run.

        Sessions run in daemon threads, as this one does: an interrupted build
        exits at once, its warm workers (and the sessions they fork) dying with
        it, instead of waiting at exit for the session under way, as Python
        waits for a ``ThreadPoolExecutor``'s threads (issue 38, 3).
        """
        from builder.pipeline.worker import WarmWorker

        try:
            with contextlib.ExitStack() as stack:
                worker = self.worker
                if worker is None:
                    home = Path(self.plan.config.root).resolve()
                    worker = stack.enter_context(WarmWorker(home=home))
                    worker.start()
                slots = threading.Semaphore(max(1, self.plan.options.jobs))
                sessions: list[threading.Thread] = []
                stack.callback(_join_all, sessions)
                pending = self._staging(chunks[0])
                for k, chunk in enumerate(chunks):
                    folder, futures = pending
                    first = {i: self._guarded(i, futures[i].result) for i in chunk}
                    if k + 1 < len(chunks):
                        pending = self._staging(chunks[k + 1])
                    held = [i for i in chunk if _held(first[i])]
                    for i in chunk:
                        entry = first[i]
                        if not _held(entry) and not isinstance(entry, _Packed):
                            out.pop(i).set_result(entry)
                    session = threading.Thread(
                        target=self._tested_or_failed,
                        args=(folder, held, first, out, worker, slots),
                        name="session",
                        daemon=True,
                    )
                    session.start()
                    sessions.append(session)
        except BaseException as error:
            _fail_unset(out, error)

    def _tested_or_failed(
        self,
        folder: Path,
        held: Sequence[int],
        first: Mapping[int, _First],
        out: dict[int, Future[Entry]],
        worker: WarmWorker,
        slots: threading.Semaphore,
    ) -> None:
        """:meth:`_tested`; a failure fails this chunk's skills not yet reported, not the
        other chunks' (their sessions and second legs go on)."""
        try:
            self._tested(folder, held, first, out, worker, slots)
        except BaseException as error:
            _fail_unset({i: out[i] for i in held if i in out}, error)

    def _tested(
        self,
        folder: Path,
        held: Sequence[int],
        first: Mapping[int, _First],
        out: dict[int, Future[Entry]],
        worker: WarmWorker,
        slots: threading.Semaphore,
    ) -> None:
        """One chunk's session, forked from ``worker`` once one of ``slots`` is free, then its
        second legs queued in the pool, each setting its entry of ``out`` (taken out) when
        done; the session folder is removed once they are (phase 6 takes the packages it
        tested out of it)."""
        try:
            with slots:
                lowered = functools.partial(worker, lowered=True)  # phase 7 waits for no session
                results = self._session(
                    folder, held, self.plan.options.jobs, workers=0, runner=lowered
                )
            assert self.pool is not None
            done = threading.Semaphore(0)  # counts the legs done, keeping none of their runs
            for i in held:
                job = self.pool.submit(_advance, *self._second(i, first, results))
                job.add_done_callback(functools.partial(self._settle, i, out.pop(i)))
                job.add_done_callback(lambda _: done.release())
            for _ in held:
                done.acquire()
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _settle(self, i: int, out: Future[Entry], done: Future[Entry]) -> None:
        out.set_result(self._guarded(i, done.result))

    def _staging(self, chunk: Sequence[int]) -> tuple[Path, dict[int, Future[_First]]]:
        """A new session folder, and chunk's first legs queued in the pool (staging into it)."""
        assert self.pool is not None
        folder, pool = self._folder(), self.pool
        return folder, {i: pool.submit(_first_leg, *self._first(i, folder)) for i in chunk}

    def _stage(self, chunk: Sequence[int]) -> tuple[Path, dict[int, Entry]]:
        """A new session folder, and chunk's first legs walked here (staging into it)."""
        folder = self._folder()
        return folder, {
            i: self._guarded(i, functools.partial(_advance, *self._first(i, folder))) for i in chunk
        }

    def _session(
        self,
        folder: Path,
        held: Sequence[int],
        jobs: int,
        workers: int | None = None,
        runner: ModuleRunner | None = None,
    ) -> SharedResults:
        """The tests of the packages staged in ``folder`` (none for a single one), in a fresh
        process unless a ``runner`` is given; the caller removes the folder once each held
        run's phase 6 took the package it tested out of it.

        A session that cannot be run (its worker gone, the disk full) answers for no package:
        each is then tested alone, so only a package's own failure fails its skill.
        """
        from builder.orchestration.shared_tests import SharedResults, probed, probing
        from builder.pipeline.package_tests import run_session
        from builder.pipeline.worker import run_module

        try:
            if len(held) < 2:
                return SharedResults({})
            more = probing(folder) if self.probes is not None else ()
            results = SharedResults(run_session(folder, jobs, workers, runner or run_module, more))
            if self.probes is not None:
                self.probes.passed(probed(folder, results))
            return results
        except Exception as error:
            if self.plan.options.debug:
                traceback.print_exception(error, file=sys.stderr)
            return SharedResults({})

    def _folder(self) -> Path:
        from builder.orchestration.shared_tests import new_session

        return new_session(self.staging)

    def _first(self, i: int, folder: Path) -> tuple[runner.Run, int, PhaseLoader, Hold]:
        """The arguments of :func:`_advance` for skill ``i``'s first leg, staging into
        ``folder``."""
        from builder.orchestration.shared_tests import Stager

        run = self.runs.pop(self.targets[i].display)
        return run, self.plan.parallel_until, Serviced(self.load, self.services), Stager(folder)

    def _second(
        self, i: int, first: Mapping[int, _First], results: SharedResults
    ) -> tuple[runner.Run | _Packed, int, PhaseLoader]:
        """The arguments of :func:`_advance` for skill ``i``'s held run (its first leg's) to run
        its package tests with ``results``."""
        run = first[i]
        assert isinstance(run, runner.Run | _Packed) and _held(run), "only a held run waits"
        phases = Serviced(self.load, self.services.filled(package_tests=results))
        return run, self.plan.parallel_until, phases

    def _guarded(self, i: int, build: Callable[[], _T]) -> _T | BuildReport:
        return _guarded(self.targets[i], self.plan.options, build)


def _guarded(target: Target, options: BatchOptions, build: Callable[[], _T]) -> _T | BuildReport:
    try:
        return build()
    except Exception as error:  # a bug while building one skill fails that skill, not the batch
        if options.debug:
            traceback.print_exception(error, file=sys.stderr)
        return _internal_failure(target, error)


def _held(entry: _First) -> bool:
    """An entry whose run stopped at a held step: it waits for the shared session."""
    return isinstance(entry, _Packed) or (isinstance(entry, runner.Run) and entry.held)


def _loader(base: PhaseLoader, registration: AnyPhase | None) -> PhaseLoader:
    """``base`` with ``registration`` in place of the phase of its name."""
    if registration is None:
        return base
    return lambda name: registration if name == registration.name else base(name)


#: Skills per worker below which rendering without tests stays in this process: a spawned
#: worker spends about 0.7 s importing what one skill's phases 1-6 need in 0.15 s.
_RENDER_ONLY_SKILLS_PER_WORKER = 8


def _workers(jobs: int, count: int, run_tests: bool) -> int:
    """The pool's workers for ``count`` skills to build: 0 when none pays.

    Phase 6 with tests waits on a subprocess per skill, so two skills already
    overlap well; rendering alone is cheap enough that a worker must get several
    skills to earn its start-up.
    """
    share = 1 if run_tests else _RENDER_ONLY_SKILLS_PER_WORKER
    workers = min(jobs, count // share)
    return workers if workers > 1 else 0


def _pool_start_method() -> str:
    """How a batch's pool workers start: ``fork`` where this process may fork a copy of itself
    (Linux, and no thread but this one: :func:`~builder.pipeline.forked.can_fork`), else
    ``spawn``.

    A forked worker is this process, which imported the phases the worker runs just before,
    so it starts in some 10 ms of CPU; a spawned one starts an interpreter and imports them,
    some 0.35 CPU-s each, which a cold batch of 100 skills paid twice. A fork copies only the
    forking thread: where another one runs (a registry's, an in-process test's), a lock it
    held would stay held in the copy, so the workers are spawned. The pool forks its workers
    all at once, at its first task (:func:`_pool`), while this thread is still the only one,
    and never replaces one that dies (a worker dying breaks the pool: its skills fail with
    I001), so no worker is forked from this process once the batch's threads run.
    """
    return "fork" if can_fork() else "spawn"


def _pool(
    workers: int,
    load: PhaseLoader,
    names: Sequence[str],
    method: Callable[[], str] = _pool_start_method,
    *,
    foreign: Sequence[int] = (),
) -> ProcessPoolExecutor:
    """A process pool of ``workers`` workers started now with the phases ``names`` imported,
    the workers started as ``method`` says (a test's choice, else :func:`_pool_start_method`).
    A forked worker closes the descriptors ``foreign`` (this process's ends of other children's
    pipes) first."""
    # Imported here: a no-op starts no pool, and the process pool's modules (multiprocessing's)
    # would cost it some 25 ms.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    start = method()
    if start == "fork":
        _import_phases(load, names)  # once here, for every worker
        start = method()  # asked again: an import may have started a thread
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context(start),
        initializer=_pool_worker,
        initargs=(os.getpid(), tuple(foreign) if start == "fork" else ()),
    )
    # The first task forks every worker before the pool's own threads start; spawned, a worker
    # starts for each task while none is idle, and imports the phases.
    for _ in range(workers):
        pool.submit(_import_phases, load, names)
    return pool


@dataclass
class _HeadStart:
    """A batch's helpers started before its skills' runs: they import while this process reads
    the skills and runs their phase 1. Sized for every skill not known current from its stamp;
    what the build turns out not to need is closed unused."""

    shape: _Shape
    """What they were started for: the batch's phase range, and how it would run the skills
    not known current from their stamps."""
    load: PhaseLoader
    """The loader of the phases the pool's workers run."""
    workers: ProcessPoolExecutor | None = None
    """The process pool, its workers started."""
    worker: WarmWorker | None = None
    """The build's warm worker, started."""
    _own: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def pool(self, wanted: int) -> ProcessPoolExecutor | None:
        """The pool when the build wants one (``wanted`` workers, 0 for none): the one started
        ahead, else a new one; a pool started ahead and not wanted is shut down."""
        if not wanted:
            self.close_pool()
            return None
        taken, self.workers = self.workers, None
        if taken is None:
            return _pool(wanted, self.load, _parallel_names(self.shape), foreign=self.pipes())
        return taken

    def pipes(self) -> tuple[int, ...]:
        """This process's ends of the warm worker's pipes (none without one)."""
        return self.worker.pipes() if self.worker is not None else ()

    def close_pool(self) -> None:
        pool, self.workers = self.workers, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop what was not taken (the pool) or is done with (the warm worker)."""
        self.close_pool()
        self._own.close()


def _head_start(
    shape: _Shape, chosen: Phases, services: Services, config: BuildConfig
) -> _HeadStart:
    """Helpers of a batch of ``shape`` (:func:`_shape` for the skills not known current from
    their stamps), started now: the pool's workers importing the parallel phases, the warm
    worker when tests or probes will run."""
    if shape.threaded:
        share_arenas()  # before the batch's threads start: each would keep an arena of its own
    head = _HeadStart(shape, chosen.load)
    if shape.warm_worker(services):
        from builder.pipeline.worker import WarmWorker

        # First: its server imports (some 0.5 CPU-s) while this process imports the phases and
        # reads the skills, not beside the pool's first skills. Starting it starts no thread,
        # so the pool's workers may still be forked.
        head.worker = head._own.enter_context(WarmWorker(home=Path(config.root).resolve()))
        head.worker.start()
    if shape.workers:
        names = _parallel_names(shape)
        head.workers = _pool(shape.workers, chosen.load, names, foreign=head.pipes())
    return head


def _parallel_names(shape: _Shape) -> Sequence[str]:
    """The phases a pool worker of a batch of ``shape`` runs."""
    return PHASE_NAMES[shape.start - 1 : shape.schedule.parallel_until(shape.stop)]


def _import_phases(load: PhaseLoader, names: Sequence[str]) -> None:
    """The phases a pool worker will run, imported ahead: in the worker starting (spawned), or
    in this process before it forks the workers."""
    for name in names:
        load(name)
