"""Console listeners of a batch build: progress lines on stderr, control frames on stdout.

The command line imports this module inside its commands (it loads the pipeline), so
``mindrian --help`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from builder.cli.common import display
from builder.orchestration.batch import BatchOptions, Listener, Target
from builder.phases import PHASE_NAMES, phase_number
from builder.pipeline.build_results import BuildReport, PhaseReport
from builder.pipeline.checkpoints import CheckpointStore
from builder.pipeline.report import (
    done_frame,
    error_frame,
    phase_frame,
    progress_line,
    ready_frame,
    warning_lines,
)
from mindrian.frames import Frame

__all__ = ["ErrorPrinter", "FramePrinter", "ProgressPrinter", "print_outcome"]

#: Prints one human line (stderr, defused when frames share the terminal).
Say = Callable[[str], None]


class ProgressPrinter(Listener):
    """Each skill's start, its phases and its outcome, as lines."""

    def __init__(
        self,
        say: Say,
        *,
        quiet: bool = False,
        timings: bool = False,
        options: BatchOptions | None = None,
        prefix: str = "build",
    ) -> None:
        self._say, self._quiet, self._timings = say, quiet, timings
        self._options, self._prefix = options, prefix
        self._skill = ""
        # Two phases may report one warning (the same fact seen twice): it is printed once a skill.
        self._warned: set[str] = set()

    def started(self, target: Target) -> None:
        self._skill, self._warned = target.display, set()
        if not self._quiet:
            self._say(f"{self._prefix} {target.display}")

    def phase(self, report: PhaseReport) -> None:
        if self._quiet:
            return
        self._say(progress_line(report, len(PHASE_NAMES), timings=self._timings))
        for line in warning_lines(report.warnings, self._skill):
            if line not in self._warned:
                self._warned.add(line)
                self._say(line)

    def finished(self, report: BuildReport) -> None:
        print_outcome(report, self._say, quiet=self._quiet, options=self._options)


class ErrorPrinter(Listener):
    """Only the problem of each skill that failed."""

    def __init__(self, say: Say) -> None:
        self._say = say

    def finished(self, report: BuildReport) -> None:
        print_outcome(report, self._say, quiet=True)


class FramePrinter(Listener):
    """``inner``, plus READY, PHASE, ERROR and DONE frames for each skill."""

    def __init__(self, inner: Listener, stage: str, emit: Callable[[Frame], None]) -> None:
        self._inner, self._stage, self._emit = inner, stage, emit
        self._skill = ""

    def started(self, target: Target) -> None:
        self._inner.started(target)
        self._skill = target.display
        self._emit(ready_frame(self._stage, target.display))

    def phase(self, report: PhaseReport) -> None:
        self._inner.phase(report)
        self._emit(phase_frame(self._skill, report))

    def finished(self, report: BuildReport) -> None:
        self._inner.finished(report)
        if report.problem is not None:
            self._emit(error_frame(report.problem, report.path))
        self._emit(
            done_frame(self._stage, report.exit_code, skill=report.path, agent_id=report.agent_id)
        )


def print_outcome(
    report: BuildReport, say: Say, *, quiet: bool, options: BatchOptions | None = None
) -> None:
    """The skill's problem, or (unless ``quiet``) the line saying it was built and where."""
    if report.problem is not None:
        say(report.problem.render())
    elif not quiet:
        package = _package_path(report, options)
        where = f" -> {package}" if package else ""
        say(f"built {report.agent_id} ({report.path}): {len(report.phases)} phase(s) ok{where}")


#: The phase whose output names the package folder.
_WRITES_PACKAGE = "code_generation"


def _package_path(report: BuildReport, options: BatchOptions | None) -> str:
    """The package folder phase 6 wrote, from the report (a no-op's) or its checkpoint; empty
    when phase 6 was not reached."""
    number = phase_number(_WRITES_PACKAGE)
    if report.agent_id is None or options is None or len(report.phases) < number:
        return ""
    identifier = report.package or _stored_identifier(report.agent_id, options, number)
    if not identifier:
        return ""
    return display(options.out_dir / identifier, Path.cwd().absolute()) + "/"


def _stored_identifier(agent_id: str, options: BatchOptions, number: int) -> str | None:
    stored = CheckpointStore(options.checkpoints_dir).read(agent_id, number, _WRITES_PACKAGE)
    if stored is None or not isinstance(stored.output, dict):
        return None
    identifier = stored.output.get("identifier")
    return identifier if isinstance(identifier, str) else None
