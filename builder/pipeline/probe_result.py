"""The end-to-end probe's verdict (phase 7), apart from the services that name its runner
(:mod:`builder.pipeline.services`, which every phase's input holds) so that a phase that never
probes, and ``mindrian validate``, do not define it."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ProbeResult"]


@dataclass(frozen=True)
class ProbeResult:
    """The end-to-end probe's verdict, as parsed from the subprocess."""

    success: bool
    """The handoff succeeded offline."""
    summary: str
    """What happened, one line."""
