"""Whole builds: PWS cold and fully cached, with each phase's time, and ``mindrian check`` of every
skill.

Cold runs start from an empty checkpoint folder, an empty registry and an
empty output folder in a temporary directory (the project's own are never
touched); the cached run repeats the build on the folders the cold run left.
One more cold run also starts from an empty Cypher lint cache
(``MINDRIAN_CACHE_DIR``), so phase 5 pays for Node. ``check`` is noted with the
CPU time of everything it started: on a shared machine that moves less than
the wall clock.
"""

from __future__ import annotations

import os
import re
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.common import ROOT, Row, mindrian_command

__all__ = ["rows"]

SKILL = "skills/pws/SKILL.md"
COLD_RUNS = 3
CACHED_RUNS = 5
COLD_TARGET_S = 4.0
CACHED_TARGET_S = 0.5
CHECK_TARGET_S = 10.0

#: ``[5/7] neo4j_schema … ok [2415.2 ms]`` as printed with ``--timings``.
_TIMING = re.compile(r"^\[(?P<n>\d+)/\d+\] (?P<name>\w+) … .*\[(?P<ms>[0-9.]+) ms\]$", re.M)


def _run(
    argv: Sequence[str], accept: tuple[int, ...] = (0,), env: Mapping[str, str] | None = None
) -> tuple[float, str, int]:
    """Wall-clock seconds, stderr and exit status of one command; another status than ``accept``
    raises."""
    began = time.perf_counter()
    done = subprocess.run(
        argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    elapsed = time.perf_counter() - began
    if done.returncode not in accept:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    return elapsed, done.stderr, done.returncode


def _children_cpu() -> float:
    """User plus system seconds of every finished child process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _build_argv(folder: Path) -> list[str]:
    return [
        *mindrian_command(),
        "build",
        SKILL,
        "--timings",
        "--out",
        str(folder / "generated"),
        "--checkpoints",
        str(folder / "checkpoints"),
        "--registry",
        str(folder / "registry.lbug"),
    ]


def _phase_rows(label: str, stderr: str) -> list[Row]:
    return [
        Row(f"  {label}: [{m['n']}] {m['name']}", float(m["ms"]), "ms", None)
        for m in _TIMING.finditer(stderr)
    ]


def rows() -> list[Row]:
    """Cold and cached build of PWS (medians), their per-phase times, and one ``check``."""
    with tempfile.TemporaryDirectory(prefix="mindrian-bench-") as scratch:
        cold = [_run(_build_argv(Path(scratch) / f"run{index}")) for index in range(COLD_RUNS)]
        cached = [_run(_build_argv(Path(scratch) / "run0")) for _ in range(CACHED_RUNS)]
        no_lint_cache = dict(os.environ, MINDRIAN_CACHE_DIR=str(Path(scratch) / "lint-cache"))
        unlinted = _run(_build_argv(Path(scratch) / "unlinted"), env=no_lint_cache)
    # Drift (exit 1) is the check's verdict, not a broken benchmark; it is noted beside the time.
    cpu_before = _children_cpu()
    check_seconds, _, status = _run([*mindrian_command(), "check", "--quiet"], accept=(0, 1))
    check_cpu = _children_cpu() - cpu_before
    skills = len(list((ROOT / "skills").glob("**/SKILL.md")))
    verdict = "clean" if status == 0 else "DRIFT or failed build"
    return [
        Row(
            f"build {SKILL} (cold)",
            statistics.median(r[0] for r in cold),
            "s",
            COLD_TARGET_S,
            f"median of {COLD_RUNS}, fresh folders each",
        ),
        *_phase_rows("cold", cold[0][1]),
        Row(
            f"build {SKILL} (cold, empty lint cache)",
            unlinted[0],
            "s",
            None,
            "one run; phase 5 runs Node",
        ),
        *_phase_rows("cold, empty lint cache", unlinted[1]),
        Row(
            f"build {SKILL} (every phase cached)",
            statistics.median(r[0] for r in cached),
            "s",
            CACHED_TARGET_S,
            f"median of {CACHED_RUNS}",
        ),
        *_phase_rows("cached", cached[-1][1]),
        Row(
            f"mindrian check ({skills} skills)",
            check_seconds,
            "s",
            CHECK_TARGET_S,
            f"one run, default --jobs, {check_cpu:.1f} s CPU; {verdict}",
        ),
    ]
