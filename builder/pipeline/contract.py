"""The contract between the runner and the phases.

A phase is a small object with a name, its position, the checks it
guarantees, the type of its output and a pure ``run``. The runner owns
everything else (digests, checkpoints, skipping, resuming, progress).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from builder.pipeline.config import BuildConfig
from builder.pipeline.errors import SourceLocation

__all__ = ["CheckResult", "Phase", "PhaseInput", "PhaseResult", "SkillSource"]

T = TypeVar("T")


@dataclass(frozen=True)
class SkillSource:
    """The bytes a build starts from: SKILL.md and the files of its folder."""

    path: str
    """SKILL.md as the user named it, POSIX separators (used in messages and headers)."""
    data: bytes
    """The raw bytes of SKILL.md (decoding is phase 1's job, so it can report the byte offset)."""
    files: tuple[tuple[str, bytes], ...] = ()
    """Other files of the skill folder (``references/…``, ``scripts/…``), folder-relative POSIX path
    and bytes, sorted."""
    digest: str = ""
    """SHA-256 hex of SKILL.md and every file above (names and bytes)."""


@dataclass(frozen=True)
class PhaseInput:
    """Everything a phase may read; phases never touch the file system for inputs."""

    source: SkillSource
    """The skill being built."""
    config: BuildConfig
    """Project configuration (``[tool.mindrian]``) and command-line switches."""
    previous: Mapping[str, Any] = field(default_factory=dict)
    """Outputs of the earlier phases, keyed by phase name."""


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one named check of a phase."""

    name: str
    """The check's name, e.g. ``valid_yaml``."""
    passed: bool
    """Whether the check holds."""
    reason: str
    """Why it holds or not, in one sentence a user can act on."""
    location: SourceLocation | None = None
    """Where in the sources the problem is, when it has a place."""


@dataclass(frozen=True)
class PhaseResult(Generic[T]):
    """What ``Phase.run`` returns: the typed output and the checks' verdicts."""

    output: T
    """The phase's typed output, stored in the checkpoint as plain YAML."""
    checks: tuple[CheckResult, ...]
    """One verdict per name in ``Phase.checks``, in that order."""
    warnings: tuple[str, ...] = ()
    """Things worth a look that do not stop the build."""


class Phase(Protocol[T]):
    """One step of the pipeline."""

    name: str
    number: int
    checks: tuple[str, ...]
    output_type: type[T]

    def run(self, inputs: PhaseInput) -> PhaseResult[T]:
        """Compute the output from the inputs; raise a stage error for unusable input."""
        ...
