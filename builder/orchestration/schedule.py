"""A pipeline cut by its phases' traits: what a batch runs where.

The batch reads each phase's :class:`~builder.pipeline.contract.PhaseTraits`
(from its key, so no phase module is imported for it) and never asks which
phase it holds: the phases before the first serial one may run in worker
processes, the serial ones run here one skill at a time, and the phase whose
tests are package tests may share a pytest session with other skills.
"""

from __future__ import annotations

from dataclasses import dataclass

from builder.orchestration.runner import KeyLoader
from builder.phases import PHASE_NAMES

__all__ = ["Schedule"]


@dataclass(frozen=True)
class Schedule:
    """Where the phases of a pipeline run, from their traits."""

    serial: int
    """Number of the first phase that runs one skill at a time in this process (one past the
    last phase when none does)."""
    package: int | None
    """Number of the phase that tests the package it renders (a batch may share its sessions);
    None when no phase does."""
    probes: bool
    """A serial phase probes in a child (a batch may run the probes ahead in a warm worker)."""

    @classmethod
    def of(cls, keys: KeyLoader) -> Schedule:
        """The schedule of the phases ``keys`` describes."""
        traits = [keys(name).traits for name in PHASE_NAMES]
        numbered = list(enumerate(traits, 1))
        serial = next((n for n, t in numbered if t.serial), len(traits) + 1)
        package = next((n for n, t in numbered if t.tests == "package"), None)
        probes = any(t.serial and t.tests == "probe" for t in traits)
        return cls(serial, package, probes)

    @property
    def last_parallel(self) -> int:
        """Number of the last phase before the serial ones."""
        return self.serial - 1

    def parallel_until(self, stop: int) -> int:
        """Number of the last phase up to ``stop`` that may run in a worker process."""
        return min(stop, self.last_parallel)

    def reaches_serial(self, stop: int) -> bool:
        """Whether a build up to phase ``stop`` runs a serial phase."""
        return stop >= self.serial

    def tests_packages(self, start: int, stop: int) -> bool:
        """Whether a build of phases ``start``..``stop`` runs package tests."""
        return self.package is not None and start <= self.package <= stop

    def ran_serial(self, numbers: set[int]) -> bool:
        """Whether any of the phases numbered ``numbers`` is a serial one."""
        return any(n >= self.serial for n in numbers)

    def waits_for_serial(self, numbers: set[int]) -> bool:
        """Whether phases ``numbers`` reached the last parallel phase and no serial one ran."""
        return self.last_parallel in numbers and not self.ran_serial(numbers)
