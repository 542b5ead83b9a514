"""Phase 6 of a batch with shared pytest sessions for its packages' generated tests.

A build of many skills walks each skill's run to phase 6 in two legs around
one session per chunk of skills (:func:`builder.pipeline.package_tests.run_session`;
the batch cuts the chunks, :func:`builder.orchestration.batch.build_many`):

1. the run steps up to phase 6, and :class:`Stager` (the leg's
   :data:`~builder.orchestration.runner.Hold`) renders its package into the
   session folder and holds phase 6 instead of letting it run;
2. after the session, the held run resumes at phase 6, which runs as usual
   with :class:`SharedResults` as its test runner (the leg's
   ``Services.package_tests``), which answers from the session for a package
   whose files are exactly what was tested, and tests any other package alone;
   phase 6 takes the files it rendered and the copy the session tested (when
   it is still as written) from what the stager kept (``inputs.staged``), and
   the batch removes the session folder after these legs.

Phase 6 itself is unchanged, so its checkpoint, report and staged package are
what a build of the skill alone writes. A package the stager cannot stage (it
does not render or compile) is left to phase 6, which reports why.

A batch that registers also has the session probe the packages whose tests
passed (:func:`probing`, :mod:`builder.probe.session`), and hands their
successes to phase 7's probes (:func:`probed`): a package probed there whose
ready files are the ones tested takes its verdict from the session.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from builder.phases.code_generation import run_generated_tests
from builder.phases.outputs import AnyPhase, Inputs
from builder.pipeline.package_tests import TestRun, tree_digest
from builder.pipeline.probe_result import ProbeResult
from builder.pipeline.staged import Staged
from builder.pipeline.transaction import SESSION_PREFIX, sweep_sessions
from builder.probe.session import OPTION, read_probes
from mindrian.project import ProjectPaths

__all__ = [
    "SharedResults",
    "Stager",
    "clear_sessions",
    "new_session",
    "probed",
    "probing",
]

#: The file a session's probes write their verdicts to, in its folder (not a package: a file).
_PROBES = "probes.json"


def clear_sessions(paths: ProjectPaths) -> Path:
    """The staging folder, made if missing, without the session folders killed builds left."""
    paths.staging.mkdir(parents=True, exist_ok=True)
    sweep_sessions(paths)
    return paths.staging


def new_session(staging: Path) -> Path:
    """A fresh session folder under ``staging`` (:func:`clear_sessions`' result)."""
    return Path(tempfile.mkdtemp(prefix=SESSION_PREFIX, dir=staging))


@dataclass(frozen=True)
class Stager:
    """Holds a phase with package tests back, what they test staged into the session folder."""

    folder: Path
    """The session folder: one subfolder per package."""

    def __call__(self, phase: AnyPhase, inputs: Inputs) -> bool | Staged:
        return phase.stage_tests(inputs, self.folder)


@dataclass(frozen=True)
class SharedResults:
    """A phase 6 test runner that answers from a shared session, else tests the package alone."""

    results: Mapping[str, tuple[str, TestRun]]
    """By package: the tree digest of the files tested and their outcome."""

    def __call__(self, folder: Path, identifier: str) -> TestRun:
        found = self.results.get(identifier)
        if found is not None and found[0] == tree_digest(folder / identifier):
            return found[1]
        return run_generated_tests(folder, identifier)


def probing(folder: Path) -> tuple[str, ...]:
    """pytest arguments that have the session of ``folder`` probe the packages that pass."""
    return ("-p", "builder.probe.session", OPTION, str(folder / _PROBES))


def probed(folder: Path, results: SharedResults) -> dict[str, tuple[str, ProbeResult]]:
    """The probes' successes in the session of ``folder`` (:func:`probing`) for the packages it
    answers for and that passed, with the tree digest of the files tested and probed."""
    return {
        identifier: (results.results[identifier][0], verdict)
        for identifier, verdict in read_probes(folder / _PROBES).items()
        if identifier in results.results and results.results[identifier][1].passed
    }
