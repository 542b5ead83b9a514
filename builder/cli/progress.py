"""The progress bar of ``build`` and ``check`` on a terminal.

One line on stderr, redrawn in place as skills and phases finish::

    [#########---------------]  38/100  skills/pws/SKILL.md  code_generation  0:41  ETA 1:07

The estimate is the mean time per finished skill times the skills left.
Warnings and problems are printed as ordinary lines above the bar, so they stay on screen
once the bar is gone; the bar is erased at the end, leaving only those lines
and the closing summary. The command line uses it only when stderr is a
terminal and neither ``--json``, ``--frames`` nor ``--quiet`` is given;
otherwise the output stays line-oriented.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from typing import TextIO

from builder.orchestration.batch import Listener, Target
from builder.pipeline.build_results import BuildReport, PhaseReport
from builder.pipeline.report import warning_lines
from builder.pipeline.terminal import terminal_line, terminal_safe

__all__ = ["ProgressBar", "clock_text"]

#: Erase the current terminal line and return to its start.
_ERASE = "\r\x1b[2K"
#: Cells of the bar itself.
_BAR_CELLS = 24


def clock_text(seconds: float) -> str:
    """``m:ss``, or ``h:mm:ss`` from an hour on."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ProgressBar(Listener):
    """A :class:`Listener` that redraws one status line; problems become lines above it."""

    def __init__(
        self,
        total: int,
        stream: TextIO,
        *,
        clock: Callable[[], float] = time.monotonic,
        columns: int | None = None,
    ) -> None:
        self.total = total
        """Skills in the run."""
        self.stream = stream
        """A terminal (stderr)."""
        self.clock = clock
        self.columns = columns or shutil.get_terminal_size((80, 24)).columns
        self.began = clock()
        self.done = 0
        self.skill = ""
        self.step = ""

    def started(self, target: Target) -> None:
        self.skill, self.step = target.display, "starting"
        self._draw()

    def phase(self, report: PhaseReport) -> None:
        self.step = report.name
        self._draw()

    def finished(self, report: BuildReport) -> None:
        self.done += 1
        warnings = (w for phase in report.phases for w in phase.warnings)
        for line in warning_lines(warnings, report.path):
            self.stream.write(_ERASE + terminal_line(line) + "\n")
        if report.problem is not None:
            self.stream.write(_ERASE + terminal_line(report.problem.render()) + "\n")
        self._draw()

    def close(self) -> None:
        """Erase the bar (what was printed above it stays)."""
        self.stream.write(_ERASE)
        self.stream.flush()

    def line(self) -> str:
        """The status line as drawn now, cut to the terminal's width."""
        elapsed = self.clock() - self.began
        filled = _BAR_CELLS * self.done // max(self.total, 1)
        bar = "[" + "#" * filled + "-" * (_BAR_CELLS - filled) + "]"
        count = f"{self.done:>{len(str(self.total))}}/{self.total}"
        eta = clock_text(elapsed / self.done * (self.total - self.done)) if self.done else "--:--"
        skill = terminal_safe(self.skill)
        text = f"{bar} {count}  {skill}  {self.step}  {clock_text(elapsed)}  ETA {eta}"
        return text[: max(self.columns - 1, 20)]

    def _draw(self) -> None:
        self.stream.write(_ERASE + self.line())
        self.stream.flush()
