"""``make bench-scale``: the builder on many skills, cold and incremental, and ``check``.

Prints the table of issue 26 under its labels, each row with its target and a
verdict (✓ or MISS; rows without a target have neither):

* on a 1-skill synthesized project, a cold build (phases 1-7) and a no-op;
  ``check`` of this project's own skills. The skill is new to every cache: its
  name carries a salt drawn for the run, so no answer kept in the user's cache
  from an earlier run (Black's formatting of its files) serves it. What a
  developer's machine has from any earlier build is warm, as there: an untimed
  build of another skill first writes the bytecode of changed modules, installs
  Neo4j's Cypher linter and keeps the answers that do not depend on a skill's
  text (the default model's settings, the linted queries);
* for each size N (100 by default; ``BENCH_SCALE_SIZES=100,1000`` or
  ``python -m bench.scale 100 1000`` for more), in a temporary project of N
  distinct skills synthesized from the shared corpus (:mod:`bench.synth`):
  ``build --all`` cold (all seven phases; its CPU use is a row of its own),
  again with nothing changed (no-op), after one skill's description changed,
  and ``check`` (phases 1-6 re-rendered, no generated tests or probes); and the
  peak resident memory of the largest process. These N skills are the same every
  run, so Black's answers for their files are in the user's cache after a first
  run (as for a developer rebuilding a project); a second cold build, of N skills
  salted for the run ("new to every cache", as on a fresh CI machine), formats
  every file.

Then the per-phase breakdown of the largest cold build, from its ``--json``
report: for each phase, how many skills ran it and the wall and CPU seconds
summed over them (CPU of the thread that ran it), beside the build's own wall
and CPU; the CPU spent outside any phase's thread (test sessions, probes, the
Node linter, starting workers, the batch's own steps) is the difference.

The machine's yardstick (:mod:`bench.yardstick`: a fixed pure-Python loop and ``python -c
pass``) is measured and printed first; wall and CPU seconds are also given as multiples of
the loop, and a target in seconds (set on the machine ``bench/yardstick.yaml`` records) is
judged in those multiples, so a slow machine gets the verdict a fast one would.

Each command is timed wall-clock; its CPU time (user + system, children
included, from ``wait4``) gives the CPU use (CPU / wall; 200 % is both cores
of a 2-core machine), which depends less on other load than wall time does.
Commands run with ``--jobs`` = CPU count and with ``PYTHONDONTWRITEBYTECODE``
removed, so bytecode caches behave as on a developer's machine. The load
average is printed with the table. Benchmarks inform; the exit status is 0
whatever the figures.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import yardstick
from bench.common import ROOT, mindrian_command
from bench.synth import synthesize, touch_skill
from bench.yardstick import Yardstick

__all__ = [
    "Measure",
    "ScaleRow",
    "Target",
    "breakdown",
    "main",
    "measure",
    "report",
    "rows_for_project",
    "rows_for_size",
    "table",
]


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
    stdout: str = ""
    """What it printed, when asked to keep it."""

    @property
    def utilisation(self) -> float:
        """CPU seconds per wall second, in percent."""
        return 100.0 * self.cpu / self.wall if self.wall else 0.0


@dataclass(frozen=True)
class Target:
    """What a row should reach."""

    bound: float
    """The figure to stay under (or reach, with ``at_least``)."""
    unit: str
    """``s`` (wall seconds), ``%`` (CPU use), ``MiB`` (peak memory) or ``CPU s/skill`` (CPU
    seconds shared among :attr:`skills`)."""
    at_least: bool = False
    """The figure must be at least ``bound`` rather than at most."""
    skills: int = 1
    """The skills a ``CPU s/skill`` figure divides the command's CPU among."""

    def value(self, m: Measure) -> float:
        """The figure of ``m`` this target is about."""
        if self.unit == _PER_SKILL:
            return m.cpu / self.skills
        return {"s": m.wall, "%": m.utilisation, "MiB": m.rss_mib}[self.unit]

    def met(self, m: Measure, here: Yardstick | None = None) -> bool:
        """Whether ``m`` reaches the target; a time in multiples of the loop when measured on
        a machine of yardstick ``here`` (the bound was set on the reference machine)."""
        figure, bound = self.value(m), self.bound
        if self.unit in _TIMES and here is not None:
            figure, bound = figure / here.loop_s, bound / yardstick.reference().loop_s
        return figure >= bound if self.at_least else figure <= bound

    def text(self) -> str:
        """``≤ 30 s = 27.3 loop``, ``≥ 180 %``, ``≤ 0.1 CPU s/skill = 0.317 loop``."""
        shown = f"{'≥' if self.at_least else '≤'} {self.bound:g} {self.unit}"
        if self.unit in _TIMES:
            places = 3 if self.unit == _PER_SKILL else 2
            shown += f" = {self.bound / yardstick.reference().loop_s:.{places}f} loop"
        return shown


#: The unit of a CPU-per-skill target.
_PER_SKILL = "CPU s/skill"
#: Units that are times, judged in loops of the machine measured.
_TIMES = ("s", _PER_SKILL)


@dataclass(frozen=True)
class ScaleRow:
    """One line of the table."""

    label: str
    """What was measured, as the issue names it."""
    measure: Measure
    """Its cost."""
    target: Target | None = None
    """What it should reach; None when the issue sets nothing."""
    note: str = ""
    """Context (per-skill figures)."""

    def verdict(self, here: Yardstick | None = None) -> str:
        """``✓``, ``MISS``, or empty without a target (:meth:`Target.met`)."""
        if self.target is None:
            return ""
        return "✓" if self.target.met(self.measure, here) else "MISS"


#: Targets of issue 26 by number of skills (seconds unless said).
_TARGETS: Mapping[int, Mapping[str, Target]] = {
    100: {
        "cold": Target(30.0, "s"),
        "noop": Target(0.3, "s"),
        "changed": Target(2.0, "s"),
    },
    1000: {
        "cold": Target(300.0, "s"),
        "noop": Target(1.0, "s"),
        "changed": Target(3.0, "s"),
        "check": Target(10.0, "s"),
    },
}
#: CPU use of a cold ``build --all`` with both cores busy (issue 26, item 4): 90 % of each core.
_BUSY_PER_CORE = 90.0
#: CPU per skill of a cold ``build --all`` (issue 39, item 3): half of the 0.21 s measured on the
#: reference machine, rounded as the issue states it.
_CPU_PER_SKILL = 0.1
#: Peak resident memory of any one process (issue 15).
_RSS = Target(1024.0, "MiB")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONDEVMODE", "PYTHONTRACEMALLOC"):
        env.pop(name, None)
    return env


def measure(args: Sequence[str], cwd: Path, keep_stdout: bool = False) -> Measure:
    """Run ``mindrian ARGS`` in ``cwd``; exit status 2 or more raises."""
    began = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [*mindrian_command(), *args],
            cwd=cwd,
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=out if keep_stdout else subprocess.DEVNULL,
            stderr=err,
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - began
        process.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if code >= 2:
            errors = err.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"mindrian {' '.join(args)} exited {code}: {errors}")
        printed = out.read().decode() if keep_stdout else ""
    # Children's usage is folded into the child's own when it waits for them.
    cpu = usage.ru_utime + usage.ru_stime
    return Measure(wall, cpu, usage.ru_maxrss / 1024.0, code, printed)


def _jobs() -> list[str]:
    return ["--jobs", str(os.cpu_count() or 1)]


def _busy() -> Target | None:
    cores = min(2, os.cpu_count() or 1)
    return Target(_BUSY_PER_CORE * cores, "%", at_least=True) if cores > 1 else None


def rows_for_size(count: int, work: Path, here: Yardstick) -> tuple[list[ScaleRow], Measure]:
    """Cold (with its ``--json`` report kept), no-op, one-changed build and check of ``count``
    synthesized skills; the rows and the cold build."""
    project = work / f"project-{count}"
    paths = synthesize(project, count)
    quiet = ["--quiet", *_jobs()]
    cold = measure(["build", "--all", "--json", *quiet], project, keep_stdout=True)
    noop = measure(["build", "--all", *quiet], project)
    touch_skill(paths[count // 2], "edited")
    changed = measure(["build", "--all", *quiet], project)
    checked = measure(["check", *quiet], project)
    # The same skills every run: Black's answers for their files are in the user's cache from
    # an earlier run, as on a developer's machine. Skills new to every cache (a fresh CI
    # machine, or a folder of skills never built here) are built once more, salted.
    fresh = work / f"project-{count}-new"
    synthesize(fresh, count, salt=secrets.token_hex(4))
    new = measure(["build", "--all", *quiet], fresh)
    targets = _TARGETS.get(count, {})
    name = f"{count:,} skills" if count != 1 else "1 skill"
    peak = max(cold, noop, changed, checked, new, key=lambda m: m.rss_mib)
    per_skill = Target(_CPU_PER_SKILL, _PER_SKILL, skills=count)
    rows = [
        ScaleRow(
            f"{name}, cold `build --all`", cold, targets.get("cold"), _per_skill(cold, count, here)
        ),
        ScaleRow(f"{name}, cold `build --all`: CPU use", cold, _busy(), "both cores busy"),
        ScaleRow(f"{name}, cold `build --all`: CPU per skill", cold, per_skill),
        ScaleRow(
            f"{name}, cold, new to every cache",
            new,
            targets.get("cold"),
            _per_skill(new, count, here),
        ),
        ScaleRow(f"{name}, cold, new to every cache: CPU per skill", new, per_skill),
        ScaleRow(f"{name}, no-op", noop, targets.get("noop")),
        ScaleRow(f"{name}, one changed", changed, targets.get("changed")),
        ScaleRow(f"{name}, `check`", checked, targets.get("check")),
        ScaleRow(f"{name}, peak RSS", peak, _RSS, "largest process of the five commands"),
    ]
    return rows, cold


def _per_skill(build: Measure, count: int, here: Yardstick) -> str:
    per_skill = f"{build.wall / count:.2f} s wall, {build.cpu / count:.2f} s CPU per skill"
    return per_skill + f" ({build.cpu / count / here.loop_s:.3f} loop)"


def rows_for_project(work: Path) -> list[ScaleRow]:
    """One skill cold and no-op; ``check`` of this project's own skills."""
    salt = secrets.token_hex(4)
    warm_up = work / "warm-up"
    synthesize(warm_up, 1, salt=f"warm-up-{salt}")
    measure(["build", "--all", "--quiet"], warm_up)
    single = work / "project-1"
    synthesize(single, 1, salt=salt)
    cold = measure(["build", "--all", "--quiet"], single)
    noop = measure(["build", "--all", "--quiet"], single)
    checked = measure(["check", "--quiet", *_jobs()], ROOT)
    skills = len(list((ROOT / "skills").glob("**/SKILL.md")))
    return [
        ScaleRow(
            "1 skill, cold build (phases 1–7)",
            cold,
            Target(2.0, "s"),
            "a skill new to every cache, after a build of another",
        ),
        ScaleRow("1 skill, no-op", noop, Target(0.2, "s")),
        ScaleRow(f"`check` of this project ({skills} skills)", checked, Target(2.0, "s")),
    ]


_HEADER = (
    "benchmark",
    "wall s",
    "CPU s",
    "wall loop",
    "CPU loop",
    "CPU %",
    "peak MiB",
    "target",
    "",
    "note",
)


def table(rows: Sequence[ScaleRow], here: Yardstick) -> str:
    """The yardstick's line, then the rows as an aligned plain-text table (numbers
    right-aligned)."""
    lines = [_HEADER] + [
        (
            r.label,
            f"{r.measure.wall:.2f}",
            f"{r.measure.cpu:.1f}",
            f"{r.measure.wall / here.loop_s:.2f}",
            f"{r.measure.cpu / here.loop_s:.1f}",
            f"{r.measure.utilisation:.0f}",
            f"{r.measure.rss_mib:.0f}",
            r.target.text() if r.target else "",
            r.verdict(here),
            r.note,
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(_HEADER))]
    numeric = range(1, 7)
    text = [
        "  ".join(
            c.rjust(widths[i]) if i in numeric else c.ljust(widths[i]) for i, c in enumerate(line)
        ).rstrip()
        for line in lines
    ]
    text.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join([here.header(), *text])


def breakdown(report: Mapping[str, Any], build: Measure) -> str:
    """Per-phase wall and CPU seconds of a ``build --json`` report, summed over its skills."""
    phases: dict[tuple[int, str], list[float]] = {}
    for skill in report.get("builds", ()):
        for phase in skill.get("phases", ()):
            if phase["status"] in ("cached", "loaded"):
                continue
            totals = phases.setdefault((phase["number"], phase["name"]), [0, 0.0, 0.0])
            totals[0] += 1
            totals[1] += phase["seconds"]
            totals[2] += phase.get("cpu_seconds", 0.0)
    lines = [f"{'phase':<24}  {'skills':>6}  {'wall s (sum)':>12}  {'CPU s (sum)':>11}"]
    for (number, name), (count, wall, cpu) in sorted(phases.items()):
        lines.append(f"{number} {name:<22}  {count:>6.0f}  {wall:>12.1f}  {cpu:>11.1f}")
    in_phases = sum(cpu for _, _, cpu in phases.values())
    lines.append(
        f"{'outside phase threads':<24}  {'':>6}  {'':>12}  {build.cpu - in_phases:>11.1f}"
        "  (test sessions, probes, Node, worker start-up, the batch's own steps)"
    )
    lines.append(
        f"{'whole build':<24}  {'':>6}  {build.wall:>12.1f}  {build.cpu:>11.1f}"
        f"  ({build.utilisation:.0f} % CPU)"
    )
    return "\n".join(lines)


def _sizes(argv: Sequence[str]) -> list[int]:
    text = ",".join(argv) or os.environ.get("BENCH_SCALE_SIZES", "100")
    return [int(part) for part in text.replace(" ", ",").split(",") if part]


def report(sizes: Sequence[int], work: Path) -> str:
    """The whole printout: the yardstick and the table, then the breakdown of the largest cold
    build."""
    here = yardstick.measure()
    rows = rows_for_project(work)
    largest: tuple[int, Measure] | None = None
    for count in sizes:
        found, cold = rows_for_size(count, work, here)
        rows.extend(found)
        if largest is None or count >= largest[0]:
            largest = (count, cold)
        print(f"done: {count} skills", file=sys.stderr, flush=True)
    one, five, fifteen = os.getloadavg()
    parts = [table(rows, here), f"load average after the runs: {one:.2f} {five:.2f} {fifteen:.2f}"]
    if largest is not None:
        count, cold = largest
        parts.append(
            f"\nper phase, cold `build --all` of {count:,} skills (phases run, not cached):"
        )
        parts.append(breakdown(json.loads(cold.stdout), cold))
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table; sizes from the arguments, else ``BENCH_SCALE_SIZES``, else 100."""
    sizes = _sizes(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="mindrian-bench-scale-") as scratch:
        print(report(sizes, Path(scratch)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
