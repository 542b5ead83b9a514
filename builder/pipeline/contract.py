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
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Literal, Protocol, Self, TypeVar

from builder.pipeline.config import BuildConfig
from builder.pipeline.errors import SourceLocation
from builder.pipeline.services import Services

if TYPE_CHECKING:  # a build's record, off the path of validate (which imports this contract)
    from builder.pipeline.staged import Staged

__all__ = [
    "CheckResult",
    "Phase",
    "PhaseHooks",
    "PhaseInput",
    "PhaseResult",
    "PhaseTraits",
    "SkillSource",
    "TestKind",
]

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
    staged: object = None
    """What this phase's :meth:`Phase.stage_tests` kept (:class:`Staged`) when its run was held
    for a shared session, handed back as the run resumes at it; None otherwise. Computed from
    the inputs above, so no digest covers it."""


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


#: How a phase's children run: ``none`` (it starts none), ``package`` (it tests the package it
#: renders in a child through ``Services.package_tests``, so a batch may stage many packages for
#: one shared pytest session with :meth:`Phase.stage_tests`), ``probe`` (it probes the installed
#: package in a child through ``Services.probe``, so a batch may run the probes ahead).
TestKind = Literal["none", "package", "probe"]


@dataclass(frozen=True)
class PhaseTraits:
    """What a batch needs to know of a phase to schedule it (sqlglot's rules habit: the nature
    of a step lives with the step, and the scheduler reads it rather than naming the step)."""

    writes: bool = False
    """It writes beyond its checkpoint (a package folder, the registry), so its digest names
    where."""
    serial: bool = False
    """Skills go through it one at a time, in input order, in the build's own process (the
    registry has one writer); the phases before the first serial one may run in parallel."""
    tests: TestKind = "none"
    """How its children run (:data:`TestKind`)."""


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
    def traits(self) -> PhaseTraits:
        """What a batch needs to know to schedule it."""
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

    def with_services(self, services: Services) -> Phase[P, T]:
        """This phase running its children as ``services`` says."""
        ...

    def stage_tests(self, inputs: PhaseInput[P], folder: Path) -> bool | Staged:
        """Put what its tests test into ``folder`` for a shared session instead of running;
        False when it has nothing to stage (it runs as usual and reports why); :class:`Staged`
        to be handed what it computed when it runs."""
        ...


class PhaseHooks(Generic[P, T]):
    """The defaults of a phase's optional hooks: a phase class derives from this."""

    #: A phase that computes: no side effects, no children, any number of skills at once.
    traits = PhaseTraits()

    def with_services(self, services: Services) -> Self:
        """A phase without children runs the same whatever the services."""
        return self

    def stage_tests(self, inputs: PhaseInput[P], folder: Path) -> bool | Staged:
        """Nothing to stage: a phase without package tests runs as usual."""
        return False

    def extra_digest(self, inputs: PhaseInput[P]) -> object:
        """Nothing beyond what the runner hashes (source, configuration, code, earlier outputs)."""
        return None

    def cache_valid(self, inputs: PhaseInput[P], stored: Callable[[], T]) -> bool:
        """A passing checkpoint with a matching digest holds (phases without side effects)."""
        return True
