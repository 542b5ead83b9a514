"""Shared pieces of the benchmarks: the table row and wall-clock timing of commands.

Benchmarks measure; they never assert. ``bench/run.py`` prints every module's
rows in one table and marks the ones that miss their target.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CORPUS",
    "ROOT",
    "ROUTING",
    "Row",
    "median_seconds",
    "mindrian_command",
    "python_baseline",
]

#: The project root (benchmarks run commands from here).
ROOT = Path(__file__).resolve().parent.parent
#: Where the shared conformance corpus is looked for: beside the project, or beside the folder
#: of its worktrees.
_CORPUS_CANDIDATES = (ROOT.parent / "shared" / "corpus", ROOT.parent.parent / "shared" / "corpus")
#: The corpus (49 real SKILL.md folders): the first candidate that exists, else the first.
CORPUS = next((c for c in _CORPUS_CANDIDATES if c.is_dir()), _CORPUS_CANDIDATES[0])
_ROUTING_CANDIDATES = (
    ROOT.parent / "shared" / "routing",
    ROOT.parent.parent / "shared" / "routing",
)
#: The routing set (75 skills and their authors' trigger evals), found as :data:`CORPUS` is.
ROUTING = next((c for c in _ROUTING_CANDIDATES if c.is_dir()), _ROUTING_CANDIDATES[0])


@dataclass(frozen=True)
class Row:
    """One measured figure."""

    name: str
    """What was measured."""
    value: float
    """The figure, in ``unit``."""
    unit: str
    """Unit of ``value`` and ``target`` (``ms``, ``MiB``…)."""
    target: float | None
    """Upper bound the figure should stay under, None when there is none."""
    note: str = ""
    """Context, e.g. the ratio to a baseline."""
    per: str = ""
    """Empty: ``target`` is in ``unit`` as set on the reference machine (``bench/yardstick.yaml``;
    a time is judged in multiples of the loop). ``start`` or ``loop``: ``target`` is that
    multiple of the machine's yardstick (:mod:`bench.yardstick`)."""


def median_seconds(
    argv: Sequence[str],
    runs: int = 7,
    warmup: int = 1,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
) -> float:
    """Median wall-clock seconds of ``argv`` over ``runs`` runs, after ``warmup`` untimed ones;
    ``env`` adds to (or replaces) variables of this environment.

    Output is discarded; a failing command raises so a broken benchmark is not
    mistaken for a fast one. The exit status may be 1 for commands that report
    a problem on purpose, so only 2 and above count as failure.
    """
    samples = []
    for index in range(warmup + runs):
        began = time.perf_counter()
        done = subprocess.run(
            argv,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**_env(), **(env or {})},
        )
        elapsed = time.perf_counter() - began
        if done.returncode >= 2:
            raise RuntimeError(
                f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace')}"
            )
        if index >= warmup:
            samples.append(elapsed)
    return statistics.median(samples)


def python_baseline(runs: int = 7) -> float:
    """Median seconds of ``python -c pass``: the floor every command pays."""
    return median_seconds([sys.executable, "-c", "pass"], runs)


def mindrian_command() -> list[str]:
    """How to start ``mindrian``: the script beside this interpreter, else ``python -m builder``."""
    script = Path(sys.executable).with_name("mindrian")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "builder"]


def _env() -> dict[str, str]:
    # Timings should not depend on a developer's debugging switches.
    env = dict(os.environ)
    # Nor on a switch that leaves bytecode uncached: every command would compile its modules.
    for name in (
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONDEVMODE",
        "PYTHONTRACEMALLOC",
        "PYTHONPROFILEIMPORTTIME",
    ):
        env.pop(name, None)
    return env
