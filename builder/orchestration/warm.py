"""A build's warm worker: phase 6's tests and phase 7's probes without paying their imports.

A build that runs generated tests in this process or registers skills starts
one :class:`~builder.pipeline.worker.WarmWorker` at once, so it imports Agno
and the runtime while phases 1-5 run on the other core. Phase 6 then runs the
package's tests as a fork of it, and phase 7 its probe; a single cold build
pays those imports once instead of once per child. In a batch, the probes
of the skills waiting for phase 7 run ahead of their registration, a
registration group's worth at once (``ahead``), several packages to a child
(:class:`~builder.probe.runner.WarmProbes`), each on its ready package (what
phase 7 probes, see :mod:`builder.phases.registration`): while one group is
registered, the next one's probes run on the other core. A batch's shared test
sessions fork from the same worker (:class:`Warm`'s ``worker``): each worker costs
a build its imports again. Those sessions also probe the packages that pass, in their
own process (:mod:`builder.probe.session`), and hand the successes to ``probes``,
which then starts no child for a package whose ready files are the ones probed.
Results are those of fresh processes (:mod:`builder.pipeline.worker`), so
checkpoints do not depend on this.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from builder.orchestration.runner import PhaseLoader, Run, Serviced
from builder.orchestration.schedule import Schedule
from builder.pipeline.build_results import BuildReport
from builder.pipeline.config import BuildConfig
from builder.pipeline.services import Services

if TYPE_CHECKING:
    from builder.pipeline.worker import WarmWorker
    from builder.probe.runner import WarmProbes

__all__ = ["Entry", "Warm", "warm_children"]

#: A skill's entry in a batch once its parallel phases are done: its run, or the report of a
#: skill not built (current, colliding, failed by a bug).
Entry = Run | BuildReport

_SPEC_ID = re.compile(rb"^id: *['\"]?([^'\"\n]+?)['\"]? *$", re.MULTILINE)


@dataclass
class Warm:
    """The phases of a build with the warm worker put in, and the probes to run ahead."""

    loader: PhaseLoader
    """Every phase, running its children as the build's services say (in the worker where
    they may)."""
    schedule: Schedule
    """Where the phases run (which of them wait for the probes planned here)."""
    probes: WarmProbes | None = None
    """The :class:`~builder.probe.runner.WarmProbes` of the serial phases, None when the build's
    services chose another probe."""
    config: BuildConfig | None = None
    """The build's configuration (where ready packages wait)."""
    worker: WarmWorker | None = None
    """The started warm worker, None when the build needs none: a batch forks its shared test
    sessions from it too, rather than paying for another worker's imports."""
    _planned: int = 0
    _ready: dict[str, str] = field(default_factory=dict, repr=False)

    def planner(self, early: Sequence[Entry | Future[Entry] | None]) -> Callable[[], None]:
        """:meth:`plan` of ``early`` (the batch's entries, filled in as skills finish their
        parallel phases), which the probes also call when asked for one not planned yet."""
        planning = functools.partial(self.plan, early)
        if self.probes is not None:
            self.probes.more = planning
        return planning

    def plan(self, early: Sequence[Entry | Future[Entry] | None]) -> None:
        """Start the probes of skills whose parallel phases are done, in order, from the first not
        yet planned up to the first still building."""
        if self.probes is None or self.config is None:
            return
        from mindrian.project import ProjectPaths

        start = self._planned
        while self._planned < len(early) and _available(early[self._planned]):
            self._planned += 1
        reports = [_report(e) for e in early[start : self._planned]]
        waiting = [
            r.agent_id
            for r in reports
            if r is not None and r.agent_id is not None and self._waits(r)
        ]
        staging = ProjectPaths(Path(self.config.root), Path(self.config.out_dir)).staging
        if any(agent_id not in self._ready for agent_id in waiting):
            # Streamed chunks stage their packages as they go: look again.
            self._ready = _ready_packages(staging)
        identifiers = [self._ready[a] for a in waiting if a in self._ready]
        self.probes.plan([(staging / f"{i}.ready", i) for i in identifiers])

    def _waits(self, report: BuildReport) -> bool:
        """The parallel phases passed and no serial one has run (it is not current)."""
        ran = {p.number for p in report.phases}
        return report.problem is None and self.schedule.waits_for_serial(ran)


def _available(entry: Entry | Future[Entry] | None) -> bool:
    return entry is not None and (not isinstance(entry, Future) or entry.done())


def _report(entry: Entry | Future[Entry] | None) -> BuildReport | None:
    if isinstance(entry, Future):
        entry = entry.result() if entry.exception() is None else None
    return entry.report if isinstance(entry, Run) else entry


def _ready_packages(staging: Path) -> dict[str, str]:
    """Agent id to package identifier of every ready package under ``staging`` (from the head of
    its generated ``spec.yaml``)."""
    found = {}
    for spec in sorted(staging.glob("*.ready/*/spec.yaml")):
        try:
            with spec.open("rb") as handle:
                match = _SPEC_ID.search(handle.read(2048))
        except OSError:
            continue
        if match:
            found[match.group(1).decode("utf-8", "replace")] = spec.parent.name
    return found


@contextlib.contextmanager
def warm_children(
    loader: PhaseLoader,
    config: BuildConfig,
    services: Services,
    schedule: Schedule,
    *,
    tests_here: bool,
    registering: int,
    ahead: int,
    worker: WarmWorker | None = None,
) -> Iterator[Warm]:
    """The build's phases with ``services``, and one started warm worker running what they leave
    to the build: package tests run in this process (``tests_here``), and the probes of the
    serial phases when skills reach them (``registering``), up to ``ahead`` of them at once.

    ``worker``: one the caller started already (and closes), the build's warm worker whatever
    it runs. A runner the caller's services already chose (a test's double) is kept.
    """
    warm_tests = tests_here and services.tests and services.package_tests is None
    warm_probes = registering > 0 and schedule.probes and services.probe is None
    if not (warm_tests or warm_probes):
        # Nothing to test or register (a no-op): the phase modules need not even be imported.
        yield Warm(Serviced(loader, services), schedule, worker=worker)
        return
    # Here, not at the top: a no-op imports neither the probes nor the worker they run in.
    from builder.pipeline.worker import WarmWorker
    from builder.probe.runner import PROBES_PER_CHILD, WarmProbes

    with contextlib.ExitStack() as stack:
        if worker is None:
            worker = stack.enter_context(WarmWorker(home=Path(config.root).resolve()))
        # Started before the phase modules are imported: the worker's imports are the longest
        # step of a small build.
        worker.start()
        children = max(1, -(-ahead // PROBES_PER_CHILD))
        probes = WarmProbes(worker, at_once=children) if warm_probes else None
        tests = None
        if warm_tests:
            # Only then: a batch whose pool renders and tests the packages never loads phase 6
            # here (its module, Jinja's and the graph config's: some 60 ms of this process).
            from builder.phases.code_generation import run_generated_tests

            tests = functools.partial(run_generated_tests, runner=worker)
        warmed = services.filled(package_tests=tests, probe=probes)
        yield Warm(Serviced(loader, warmed), schedule, probes, config, worker)
