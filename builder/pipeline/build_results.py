"""What a build comes to: a report for each phase it reached and one for each skill.

Apart from :mod:`builder.pipeline.results` (problems, exit statuses, the validation's report),
which ``mindrian validate`` reads without defining these records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from builder.pipeline.results import EXIT_OK, Problem

if TYPE_CHECKING:
    from builder.pipeline.contract import CheckResult
    from mindrian.graph.base import FrameworkRecord

__all__ = ["BuildReport", "PhaseReport", "PhaseStatus"]

#: What happened to a phase: run and passed, skipped (its checkpoint matched), taken from its
#: checkpoint (before ``--from``), a check failed, or it raised.
PhaseStatus = Literal["ok", "cached", "loaded", "failed", "error"]


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
    package: str | None = None
    """The package's identifier (its folder under the output) when the build knew it without
    reading phase 6's checkpoint: a no-op's, from its stamp; None otherwise."""

    @property
    def exit_code(self) -> int:
        """0 on success, else the problem's status."""
        return self.problem.exit_code if self.problem else EXIT_OK
