"""What a build, a validation or a failure comes to: result types, exit statuses, error codes.

The one place that maps errors to exit statuses (:mod:`builder.pipeline.report` presents
them as lines, JSON and control frames):

====  =====================================================================
exit  meaning
====  =====================================================================
0     success
1     invalid input, a failed check, the registry database unreachable or
      refusing a statement (``GraphError``), or the file system refusing
      (``OSError``: disk full, read-only, name too long)
2     usage error (unknown option, bad phase name, missing argument)
3     internal error (a bug): one line, the traceback only with ``--debug``
====  =====================================================================
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from builder.pipeline.contract import CheckResult
from builder.pipeline.errors import MindrianError, SourceLocation, UsageError

if TYPE_CHECKING:
    from mindrian.graph.base import FrameworkRecord

__all__ = [
    "CHECK_FAILED_CODE",
    "DRIFT_CODE",
    "ENVIRONMENT_CODE",
    "EXIT_FAILED",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "GRAPH_ERROR_CODE",
    "INTERNAL_CODE",
    "BuildReport",
    "PhaseReport",
    "PhaseStatus",
    "Problem",
    "ValidationReport",
    "check_failure",
    "environment_problem",
    "exit_code_of",
    "graph_problem",
    "problem_of",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
#: 128 + SIGINT, as shells report a command Ctrl-C ended (Typer's status for KeyboardInterrupt).
EXIT_INTERRUPTED = 130

#: Error code of a phase check that does not hold.
CHECK_FAILED_CODE = "P003"
#: Error code of a registry database failure (``mindrian.graph.GraphError``).
GRAPH_ERROR_CODE = "G010"
#: Error code of a file system refusal: disk full, read-only, name too long, a file for a folder.
ENVIRONMENT_CODE = "F001"
#: Error code of ``mindrian check`` finding generated files that differ from a fresh build.
DRIFT_CODE = "D001"
#: Error code of an internal error (a bug) in an ERROR frame.
INTERNAL_CODE = "I001"
#: What happened to a phase: run and passed, skipped (its checkpoint matched), taken from its
#: checkpoint (before ``--from``), a check failed, or it raised.
PhaseStatus = Literal["ok", "cached", "loaded", "failed", "error"]


@dataclass(frozen=True)
class Problem:
    """Why a command did not succeed, ready to print."""

    code: str
    """Machine-readable code (``S201``, ``P003``…)."""
    message: str
    """One sentence for the user."""
    location: SourceLocation | None = None
    """Where in the sources, when known."""
    exit_code: int = EXIT_FAILED
    """The process exit status this problem leads to."""

    def render(self) -> str:
        """The compiler-style line: ``PATH:LINE:COL: error[CODE]: message``."""
        prefix = f"{self.location}: " if self.location else ""
        return f"{prefix}error[{self.code}]: {self.message}"


@dataclass(frozen=True)
class PhaseReport:
    """What happened to one phase during a build."""

    number: int
    """1-based phase number."""
    name: str
    """Phase name."""
    status: PhaseStatus
    """What happened to it."""
    checks: tuple[CheckResult, ...] = ()
    """The checks' verdicts (empty when the phase raised)."""
    warnings: tuple[str, ...] = ()
    """The phase's warnings."""
    seconds: float = 0.0
    """Wall-clock time spent on the phase (console only, never written to checkpoints)."""
    cpu_seconds: float = 0.0
    """CPU time of the thread that ran the phase, its subprocesses (tests, Node) not included
    (console only, like ``seconds``)."""


@dataclass(frozen=True)
class BuildReport:
    """The outcome of building one SKILL.md."""

    path: str
    """SKILL.md as displayed."""
    agent_id: str | None
    """The agent id, None when phase 1 did not produce one."""
    phases: tuple[PhaseReport, ...]
    """Phases reached, in order."""
    problem: Problem | None = None
    """Why the build stopped early, None on success."""
    framework: FrameworkRecord | None = None
    """The framework record of phase 5's output, as phase 7 would register it, when a scratch
    build made it (``mindrian check`` writes registry.yaml from these); None otherwise."""

    @property
    def exit_code(self) -> int:
        """0 on success, else the problem's status."""
        return self.problem.exit_code if self.problem else EXIT_OK


@dataclass(frozen=True)
class ValidationReport:
    """The outcome of validating one SKILL.md (phase 1 only)."""

    path: str
    """SKILL.md as displayed."""
    agent_id: str | None = None
    """Normalised id when valid."""
    agent_type: str | None = None
    """Explicit type, None when phase 2 will infer it."""
    problems: tuple[Problem, ...] = ()
    """Every failed check or the error raised; empty when valid."""
    warnings: tuple[str, ...] = ()
    """Phase 1's warnings, then where the Agent Skills specification is stricter."""

    @property
    def exit_code(self) -> int:
        """The worst status among the problems."""
        return max((p.exit_code for p in self.problems), default=EXIT_OK)


def exit_code_of(error: BaseException) -> int:
    """The exit status for an exception reaching the command line."""
    if isinstance(error, UsageError):
        return EXIT_USAGE
    if isinstance(error, MindrianError | OSError) or _is_graph_error(error):
        return EXIT_FAILED
    return EXIT_INTERNAL


def _is_graph_error(error: BaseException) -> bool:
    # Looked up rather than imported: loading mindrian.graph pulls in both database
    # drivers, and an error of that type can only exist once the module is loaded.
    module = sys.modules.get("mindrian.graph.errors")
    return module is not None and isinstance(error, module.GraphError)


def graph_problem(error: BaseException, secrets: Iterable[str | None] = ()) -> Problem:
    """A registry database failure as one line; any of ``secrets`` in it becomes ``***``.

    The registry already redacts the password it knows; ``secrets`` covers values
    (e.g. ``NEO4J_PASSWORD``) that reached the message some other way.
    """
    message = " ".join(str(error).split())
    for secret in secrets:
        if secret:
            message = message.replace(secret, "***")
    code = getattr(error, "code", GRAPH_ERROR_CODE)
    return Problem(code=str(code), message=message, exit_code=EXIT_FAILED)


def environment_problem(error: OSError) -> Problem:
    """A file system refusal as one line naming the error and the path: exit status 1, not a bug.

    ``No space left on device (ENOSPC): /repo/generated/pws_validation/spec.yaml``
    """
    reason = error.strerror or str(error) or type(error).__name__
    name = errno.errorcode.get(error.errno) if isinstance(error.errno, int) else None
    paths = [p for p in (error.filename, error.filename2) if p is not None]
    where = " -> ".join(os.fsdecode(p) if isinstance(p, str | bytes) else str(p) for p in paths)
    text = f"{reason} ({name})" if name else reason
    return Problem(ENVIRONMENT_CODE, f"{text}: {where}" if where else text, exit_code=EXIT_FAILED)


def problem_of(error: MindrianError) -> Problem:
    """A stage error as a printable problem."""
    return Problem(
        code=error.code,
        message=error.message,
        location=error.location,
        exit_code=exit_code_of(error),
    )


def check_failure(number: int, phase: str, check: CheckResult) -> Problem:
    """The problem reported for a phase check that does not hold."""
    return Problem(
        code=CHECK_FAILED_CODE,
        message=f"check {check.name!r} of phase {phase} ({number}) failed: {check.reason}",
        location=check.location,
    )
