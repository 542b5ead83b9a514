"""The contract between the runner and the phases.

A phase is a small object with a name, its position, the checks it
guarantees, the type of its output, a pure ``run`` and two hooks with
defaults (:class:`PhaseHooks`). The runner owns everything else (digests,
checkpoints, skipping, resuming, progress).

The contract is generic in what the earlier phases hand over (``P``): the
typed record of their outputs is defined with the phases
(``builder.phases.outputs.Outputs``), so this layer imports nothing above it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from builder.pipeline.config import BuildConfig
from builder.pipeline.errors import SourceLocation

__all__ = ["CheckResult", "Phase", "PhaseHooks", "PhaseInput", "PhaseResult", "SkillSource"]

T = TypeVar("T")
#: What the earlier phases hand over (``builder.phases.outputs.Outputs``).
P = TypeVar("P")


@dataclass(frozen=True)
class SkillSource:
    """The bytes a build starts from: SKILL.md and the files of its folder."""

    path: str
    """SKILL.md as the user named it, POSIX separators (used in messages and headers)."""
    data: bytes
    """The raw bytes of SKILL.md (decoding is phase 1's job, so it can report the byte offset)."""
    files: tuple[tuple[str, bytes], ...] = ()
    """Other files of the skill folder (``references/…``, ``scripts/…``, ``assets/…``, what
    SKILL.md links to …), folder-relative POSIX path and bytes, sorted."""
    digest: str = ""
    """SHA-256 hex of SKILL.md and every file above (names and bytes) and of ``executables``."""
    executables: tuple[str, ...] = ()
    """The names in ``files`` whose executable bit is set (git's mode 100755), sorted."""
    left_out: tuple[tuple[str, int], ...] = ()
    """Files of the folder that travel with the skill but were not read, being over the size
    limits (``builder.skill.source``): folder-relative name and size in bytes, sorted."""


@dataclass(frozen=True)
class PhaseInput(Generic[P]):
    """Everything a phase may read; phases never touch the file system for inputs."""

    source: SkillSource
    """The skill being built."""
    config: BuildConfig
    """Project configuration (``[tool.mindrian]``) and command-line switches."""
    previous: P
    """The typed outputs of the earlier phases, each read when the phase first asks for it."""


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


class Phase(Protocol[P, T]):
    """One step of the pipeline, as the runner sees it (read-only attributes: a class attribute
    of a phase satisfies them)."""

    @property
    def name(self) -> str:
        """The phase's name in ``PHASE_NAMES``."""
        ...

    @property
    def number(self) -> int:
        """Its 1-based position in the pipeline."""
        ...

    @property
    def checks(self) -> tuple[str, ...]:
        """The names of the checks ``run`` returns a verdict for, in order."""
        ...

    @property
    def output_type(self) -> type[T]:
        """The frozen dataclass of its output (checkpoints are read back into it)."""
        ...

    def run(self, inputs: PhaseInput[P]) -> PhaseResult[T]:
        """Compute the output from the inputs; raise a stage error for unusable input."""
        ...

    def extra_digest(self, inputs: PhaseInput[P]) -> object:
        """What else the output depends on (templates, an output folder), as plain data."""
        ...

    def cache_valid(self, inputs: PhaseInput[P], stored: Callable[[], T]) -> bool:
        """Whether a passing checkpoint still holds; ``stored`` reads its output."""
        ...


class PhaseHooks(Generic[P, T]):
    """The defaults of a phase's optional hooks: a phase class derives from this."""

    def extra_digest(self, inputs: PhaseInput[P]) -> object:
        """Nothing beyond what the runner hashes (source, configuration, code, earlier outputs)."""
        return None

    def cache_valid(self, inputs: PhaseInput[P], stored: Callable[[], T]) -> bool:
        """A passing checkpoint with a matching digest holds (phases without side effects)."""
        return True
