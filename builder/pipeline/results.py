"""What a validation or a failure comes to: result types, exit statuses, error codes (a build's
reports: :mod:`builder.pipeline.build_results`).

The one place that turns an exception into a problem and an exit status (:func:`problem_of`;
:mod:`builder.pipeline.report` presents problems as lines, JSON and control frames):

====  =====================================================================
exit  meaning
====  =====================================================================
0     success
1     invalid input, a failed check, the registry database unreachable or
      refusing a statement (``GraphError``, a runtime error with a ``code``), or the
      file system refusing
      (``OSError``: disk full, read-only, name too long)
2     usage error (unknown option, bad phase name, missing argument)
3     internal error (a bug): one line, the traceback only with ``--debug``
====  =====================================================================
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from builder.pipeline.errors import CompilerError, SourceLocation, UsageError
from mindrian.errors import MindrianError

if TYPE_CHECKING:
    from builder.pipeline.contract import CheckResult

__all__ = [
    "CHECK_FAILED_CODE",
    "DRIFT_CODE",
    "ENVIRONMENT_CODE",
    "EXIT_FAILED",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "INTERNAL_CODE",
    "Problem",
    "ValidationReport",
    "check_failure",
    "internal_error_line",
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
#: Error code of a file system refusal: disk full, read-only, name too long, a file for a folder.
ENVIRONMENT_CODE = "F001"
#: Error code of ``mindrian check`` finding generated files that differ from a fresh build.
DRIFT_CODE = "D001"
#: Error code of an internal error (a bug) in an ERROR frame.
INTERNAL_CODE = "I001"


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


def problem_of(error: BaseException, command: str = "") -> Problem:
    """Any exception reaching a command or a skill's build as the problem it reports.

    A compiler error keeps its code and place (exit status 2 for a usage error, else 1); a
    runtime error with a registered code (the registry database refusing) and the file
    system refusing (``OSError``) are the user's situation, exit status 1; anything else is a
    bug: ``I001``, exit status 3, its message hinting at ``mindrian --debug COMMAND``.
    """
    if isinstance(error, CompilerError):
        status = EXIT_USAGE if isinstance(error, UsageError) else EXIT_FAILED
        return Problem(error.code, error.message, error.location, status)
    if isinstance(error, OSError):
        return _environment_problem(error)
    if isinstance(error, MindrianError) and error.code is not None:
        return _coded_problem(error, error.code)
    line = internal_error_line(error, command)
    return Problem(INTERNAL_CODE, line.removeprefix("internal error: "), exit_code=EXIT_INTERNAL)


def internal_error_line(error: BaseException, command: str = "") -> str:
    """The single line shown for a bug when ``--debug`` is off.

    ``--debug`` is an option of ``mindrian`` itself, before the command, so the hint
    spells the whole command line (``mindrian --debug build …``).
    """
    detail = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {detail[0]}" if detail else type(error).__name__
    rerun = " ".join(("mindrian --debug", *([command, "…"] if command else [])))
    return f"internal error: {text} (rerun as `{rerun}` for the traceback)"


def _coded_problem(error: MindrianError, code: str) -> Problem:
    """A runtime error the user can act on (a registry database failure) as one line.

    The registry already redacts the password it knows; ``NEO4J_PASSWORD`` may have reached
    the message some other way, so it becomes ``***`` too.
    """
    message = " ".join(str(error).split())
    secret = os.environ.get("NEO4J_PASSWORD")
    if secret:
        message = message.replace(secret, "***")
    return Problem(code, message, exit_code=EXIT_FAILED)


def _environment_problem(error: OSError) -> Problem:
    """A file system refusal as one line naming the error and the path: exit status 1, not a bug.

    ``No space left on device (ENOSPC): /repo/generated/pws_validation/spec.yaml``
    """
    reason = error.strerror or str(error) or type(error).__name__
    name = errno.errorcode.get(error.errno) if isinstance(error.errno, int) else None
    paths = [p for p in (error.filename, error.filename2) if p is not None]
    where = " -> ".join(os.fsdecode(p) if isinstance(p, str | bytes) else str(p) for p in paths)
    text = f"{reason} ({name})" if name else reason
    return Problem(ENVIRONMENT_CODE, f"{text}: {where}" if where else text, exit_code=EXIT_FAILED)


def check_failure(number: int, phase: str, check: CheckResult) -> Problem:
    """The problem reported for a phase check that does not hold."""
    return Problem(
        code=CHECK_FAILED_CODE,
        message=f"check {check.name!r} of phase {phase} ({number}) failed: {check.reason}",
        location=check.location,
    )
