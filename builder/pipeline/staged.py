"""What a phase staged for a batch's shared test session and takes up when its run resumes."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Staged"]


@dataclass(frozen=True)
class Staged:
    """What :meth:`Phase.stage_tests` answers when it staged and has something for the phase to
    take up when its run resumes (in another process, as a run pickles): the phase's
    :attr:`PhaseInput.staged`. Phase 6 keeps the files it rendered, so a batch renders each
    package once."""

    value: object
    """The kept work (plain, picklable data)."""
