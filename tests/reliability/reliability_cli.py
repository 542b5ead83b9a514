"""The ``mindrian`` command line run in-process: what the reliability tests' fixture returns.

A module of its own (not conftest.py) so that tests import it by a name no other folder uses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Mindrian", "Run"]


@dataclass(frozen=True)
class Run:
    """Exit status and output of one in-process ``mindrian`` run."""

    code: int
    """The exit status ``main`` returned."""
    out: str
    """Everything printed on stdout."""
    err: str
    """Everything printed on stderr."""


#: Runs ``mindrian ARGS`` from a folder.
Mindrian = Callable[[Path, Sequence[str]], Run]
