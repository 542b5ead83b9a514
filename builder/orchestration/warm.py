"""A build's warm worker: phase 6's tests and phase 7's probes without paying their imports.

A build that runs generated tests in this process or registers skills starts
one :class:`~builder.pipeline.worker.WarmWorker` at once, so it imports Agno
and the runtime while phases 1-5 run on the other core. Phase 6 then runs the
package's tests as a fork of it, and phase 7 its probe; a single cold build
pays those imports once instead of once per child. In a batch, the probes
of the skills waiting for phase 7 run ahead of their registration, up to
``--jobs`` at once, each on its ready package (what phase 7 probes, see
:mod:`builder.phases.registration`). Results are those of fresh processes
(:mod:`builder.pipeline.worker`), so checkpoints do not depend on this.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from builder.orchestration.runner import PhaseLoader
from builder.phases.outputs import AnyPhase
from builder.pipeline.config import BuildConfig
from builder.pipeline.results import BuildReport
from builder.probe.runner import WarmProbes

__all__ = ["Warm", "default_providers", "warm_children"]

_SPEC_ID = re.compile(rb"^id: *['\"]?([^'\"\n]+?)['\"]? *$", re.MULTILINE)


@dataclass
class Warm:
    """The phases of a build with the warm worker put in, and the probes to run ahead."""

    loader: PhaseLoader
    """Every phase, phase 6 and 7 running their children in the worker where they may."""
    probes: WarmProbes | None = None
    """The :class:`~builder.probe.runner.WarmProbes` of phase 7, None when phase 7 keeps its own."""
    config: BuildConfig | None = None
    """The build's configuration (where ready packages wait)."""
    _planned: int = 0
    _ready: dict[str, str] = field(default_factory=dict, repr=False)

    def plan(self, early: Sequence[BuildReport | Future[BuildReport] | None]) -> None:
        """Start the probes of skills whose phases 1-6 are done, in order, from the first not yet
        planned up to the first still building."""
        if self.probes is None or self.config is None:
            return
        from builder.phases.registration import project_paths

        start = self._planned
        while self._planned < len(early) and _available(early[self._planned]):
            self._planned += 1
        reports = [_report(e) for e in early[start : self._planned]]
        waiting = [
            r.agent_id
            for r in reports
            if r is not None and r.agent_id is not None and _waits_for_phase7(r)
        ]
        staging = project_paths(self.config).staging
        if any(agent_id not in self._ready for agent_id in waiting):
            # Streamed chunks stage their packages as they go: look again.
            self._ready = _ready_packages(staging)
        identifiers = [self._ready[a] for a in waiting if a in self._ready]
        self.probes.plan([(staging / f"{i}.ready", i) for i in identifiers])


def _available(entry: BuildReport | Future[BuildReport] | None) -> bool:
    return isinstance(entry, BuildReport) or (isinstance(entry, Future) and entry.done())


def _report(entry: BuildReport | Future[BuildReport] | None) -> BuildReport | None:
    if isinstance(entry, Future):
        return entry.result() if entry.exception() is None else None
    return entry


def _waits_for_phase7(report: BuildReport) -> bool:
    """Phases 1-6 passed and phase 7 has not run (it is not current)."""
    from builder.phases import phase_number

    if report.problem is not None:
        return False
    ran = {p.number for p in report.phases}
    return phase_number("code_generation") in ran and phase_number("registration") not in ran


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
    base: PhaseLoader,
    registration: AnyPhase | None,
    config: BuildConfig,
    *,
    tests_here: bool,
    registering: int,
    jobs: int,
) -> Iterator[Warm]:
    """The build's phases with one started warm worker when phase 6 tests a package in this
    process (``tests_here``) or skills reach phase 7 (``registering``); else as given.

    Only the real phases with their default test runner and probe are changed; a test's phase
    or probe is kept.
    """
    if not tests_here and registering == 0:
        # Nothing to test or register (a no-op): the phase modules need not even be imported.
        yield Warm(_with(base, registration))
        return
    from builder.pipeline.worker import WarmWorker

    providers = default_providers(config) if tests_here else ()
    with WarmWorker(home=Path(config.root).resolve(), providers=providers) as worker:
        # Started before the phase modules are imported: the worker's imports are the longest
        # step of a small build. Only a test's own phases can leave it unused (closed below).
        worker.start()
        from builder.orchestration.shared_tests import tests_alone
        from builder.phases.code_generation import CodeGenerationPhase, run_generated_tests
        from builder.phases.registration import RegistrationPhase
        from builder.probe.runner import run_probe

        phase6 = base("code_generation") if tests_here else None
        phase7 = registration if registration is not None else base("registration")
        warm6 = tests_alone(phase6) if phase6 is not None else False
        warm7 = (
            registering > 0 and isinstance(phase7, RegistrationPhase) and phase7.probe is run_probe
        )
        if not (warm6 or warm7):
            worker.close()
            yield Warm(_with(base, registration))
            return
        probes = WarmProbes(worker, at_once=max(1, jobs)) if warm7 else None
        if isinstance(phase7, RegistrationPhase) and probes is not None:
            registration = phase7.with_probe(probes)
        if isinstance(phase6, CodeGenerationPhase) and warm6:
            tests = functools.partial(run_generated_tests, runner=worker)
            phase6 = CodeGenerationPhase(run_tests=tests, templates=phase6.templates)
        yield Warm(_with(base, registration, phase6 if warm6 else None), probes, config)


def default_providers(config: BuildConfig) -> tuple[str, ...]:
    """The model providers a worker running generated tests imports ahead: those of the build's
    default models, which most skills use (a skill naming another provider's model imports it in
    its own test run)."""
    return tuple(sorted({ref.partition(":")[0].strip().lower() for ref in config.models.values()}))


def _with(
    base: PhaseLoader, registration: AnyPhase | None, codegen: AnyPhase | None = None
) -> PhaseLoader:
    if registration is None and codegen is None:
        return base
    replaced = {"registration": registration, "code_generation": codegen}

    def loader(name: str) -> AnyPhase:
        return replaced.get(name) or base(name)

    return loader
