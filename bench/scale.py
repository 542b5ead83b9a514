"""``make bench-scale``: the builder on many skills, cold and incremental, and ``check``.

For each size N (100 by default; ``BENCH_SCALE_SIZES=100,1000`` or
``python -m bench.scale 100 1000`` for more) a temporary project of N distinct
skills is synthesized from the shared corpus (:mod:`bench.synth`) and these
commands run in it, in order:

* ``build --all`` cold (no checkpoints, no output, no registry), all seven phases,
  with its CPU utilisation as a row of its own;
* ``build --all`` again with nothing changed (no-op);
* ``build --all`` after one skill's description changed;
* ``check`` (the default: phases 1-6 re-rendered, no generated tests or probes).

Besides, on the project's own skills: ``check`` (8 skills), and one skill of a
1-skill synthesized project built cold and then again with nothing changed.

Each command is timed wall-clock; its CPU time (user + system, children
included, from ``wait4``) gives the CPU utilisation (CPU / wall; 200 % is both
cores of a 2-core machine) and ``ru_maxrss`` the peak resident memory of the
largest process. Commands run with ``--jobs`` = CPU count and with
``PYTHONDONTWRITEBYTECODE`` removed, so bytecode caches behave as on a
developer's machine. Benchmarks inform; the exit status is 0 whatever the
figures.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import ROOT, Row, mindrian_command
from bench.run import format_table
from bench.synth import synthesize, touch_skill

__all__ = ["Measure", "main", "measure", "rows_for_project", "rows_for_size"]

#: Targets from issue 15, in seconds (MiB for memory).
TARGETS = {
    "one_cold": 2.0,
    "one_noop": 0.2,
    "check_8": 2.0,
    "cold_1000": 300.0,
    "changed_1000": 3.0,
    "noop_1000": 5.0,
    "rss": 1024.0,
}


@dataclass(frozen=True)
class Measure:
    """One command's cost."""

    wall: float
    """Wall-clock seconds."""
    cpu: float
    """User + system CPU seconds of the command and its children."""
    rss_mib: float
    """Peak resident memory of its largest process, MiB."""
    status: int
    """Exit status."""

    @property
    def utilisation(self) -> float:
        """CPU seconds per wall second, in percent."""
        return 100.0 * self.cpu / self.wall if self.wall else 0.0


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONDEVMODE", "PYTHONTRACEMALLOC"):
        env.pop(name, None)
    return env


def measure(args: Sequence[str], cwd: Path) -> Measure:
    """Run ``mindrian ARGS`` in ``cwd``; output discarded, exit status 2 or more raises."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [*mindrian_command(), *args],
        cwd=cwd,
        env=_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - began
    process.returncode = os.waitstatus_to_exitcode(status)
    code = process.returncode
    if code >= 2:
        raise RuntimeError(f"mindrian {' '.join(args)} exited {code}: {errors.decode()[-2000:]}")
    # Children's usage is folded into the child's own when it waits for them.
    cpu = usage.ru_utime + usage.ru_stime
    return Measure(wall, cpu, usage.ru_maxrss / 1024.0, code)


def _jobs() -> list[str]:
    return ["--jobs", str(os.cpu_count() or 1)]


def _row(name: str, m: Measure, target: float | None, note: str = "") -> Row:
    cost = f"CPU {m.cpu:.1f} s ({m.utilisation:.0f} %), exit {m.status}"
    return Row(name, m.wall, "s", target, f"{cost}; {note}" if note else cost)


def rows_for_size(count: int, work: Path) -> list[Row]:
    """Cold, no-op, one-changed build and check of ``count`` synthesized skills."""
    project = work / f"project-{count}"
    paths = synthesize(project, count)
    quiet = ["--quiet", *_jobs()]
    big = count >= 1000
    cold = measure(["build", "--all", *quiet], project)
    noop = measure(["build", "--all", *quiet], project)
    touch_skill(paths[count // 2], "edited")
    changed = measure(["build", "--all", *quiet], project)
    checked = measure(["check", *quiet], project)
    per_skill = f"{cold.wall / count:.2f} s wall, {cold.cpu / count:.2f} s CPU per skill"
    peak = max(cold, noop, changed, checked, key=lambda m: m.rss_mib)
    return [
        _row(
            f"{count} skills: cold build --all (phases 1-7)",
            cold,
            TARGETS["cold_1000"] if big else None,
            per_skill,
        ),
        Row(
            f"{count} skills: cold build CPU utilisation",
            cold.utilisation,
            "%",
            None,
            f"CPU / wall, {os.cpu_count() or 1} CPUs (100 % per busy core)",
        ),
        _row(f"{count} skills: no-op rebuild", noop, TARGETS["noop_1000"] if big else None),
        _row(
            f"{count} skills: 1 changed rebuild", changed, TARGETS["changed_1000"] if big else None
        ),
        _row(f"{count} skills: check", checked, None, f"{checked.wall / count:.3f} s per skill"),
        Row(f"{count} skills: peak RSS", peak.rss_mib, "MiB", TARGETS["rss"], "largest process"),
    ]


def rows_for_project(work: Path) -> list[Row]:
    """One skill cold and no-op; ``check`` of this project's own skills."""
    single = work / "project-1"
    synthesize(single, 1)
    cold = measure(["build", "--all", "--quiet"], single)
    noop = measure(["build", "--all", "--quiet"], single)
    checked = measure(["check", "--quiet", *_jobs()], ROOT)
    skills = len(list((ROOT / "skills").glob("**/SKILL.md")))
    return [
        _row("1 skill: cold build", cold, TARGETS["one_cold"]),
        _row("1 skill: no-op rebuild", noop, TARGETS["one_noop"]),
        _row(f"check of this project ({skills} skills)", checked, TARGETS["check_8"]),
    ]


def _sizes(argv: Sequence[str]) -> list[int]:
    text = ",".join(argv) or os.environ.get("BENCH_SCALE_SIZES", "100")
    return [int(part) for part in text.replace(" ", ",").split(",") if part]


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table; sizes from the arguments, else ``BENCH_SCALE_SIZES``, else 100."""
    sizes = _sizes(sys.argv[1:] if argv is None else argv)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="mindrian-bench-scale-") as scratch:
        work = Path(scratch)
        rows.extend(rows_for_project(work))
        for count in sizes:
            rows.extend(rows_for_size(count, work))
            print(f"done: {count} skills", file=sys.stderr, flush=True)
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
