"""How fast this machine is, so every bench table can be read on any machine.

Two figures, printed first by every table (``make bench``, ``make bench-scale``,
``make routing-bench``):

* **loop**: seconds of a fixed pure-Python workload (:func:`workload`, ten million
  additions in a function's locals), the speed of the interpreter on this CPU;
* **start**: seconds of ``python -c pass`` in a new process, the floor every command pays.

Each timing row is also printed as a multiple of them, and a row's target is judged in
those units: a target set in seconds was set on the machine recorded in
``bench/yardstick.yaml`` (:data:`REFERENCE`), so it is converted to multiples of that
machine's yardstick, and a figure measured here is compared in multiples of this machine's.
The same code then gets the same verdict on a fast and on a slow machine. A target can also
be stated in yardstick units directly (``per="start"`` for a one-shot command, ``"loop"``).
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench.common import median_seconds

__all__ = [
    "LOOP_STEPS",
    "REFERENCE",
    "Yardstick",
    "describe",
    "measure",
    "reference",
    "verdict",
    "workload",
]

#: Steps of the pure-Python workload.
LOOP_STEPS = 10_000_000
#: Where the yardstick of the machine the targets were set on is recorded.
REFERENCE = Path(__file__).with_name("yardstick.yaml")
# Runs of the workload (median) and of `python -c pass` (median, after one untimed run).
_LOOP_RUNS = 3
_START_RUNS = 9
_TIME_UNITS = {"s": 1.0, "ms": 0.001}


def workload(steps: int = LOOP_STEPS) -> int:
    """The fixed pure-Python workload: the sum of ``range(steps)`` by one addition a step."""
    total = 0
    for i in range(steps):
        total += i
    return total


@dataclass(frozen=True)
class Yardstick:
    """One machine's speed, in the two units every timing row is also given in."""

    loop_s: float
    """Seconds of :func:`workload` (:data:`LOOP_STEPS` steps), median."""
    start_s: float
    """Seconds of ``python -c pass`` in a new process, median."""

    def seconds(self, per: str) -> float:
        """The yardstick ``per`` names (``loop`` or ``start``), in seconds."""
        return {"loop": self.loop_s, "start": self.start_s}[per]

    def multiples(self, value: float, unit: str) -> str:
        """``value`` (in ``unit``) as ``× start`` and ``× loop``; empty for a unit not of time."""
        factor = _TIME_UNITS.get(unit)
        if factor is None:
            return ""
        seconds = value * factor
        return f"{seconds / self.start_s:.1f} start, {seconds / self.loop_s:.2f} loop"

    def header(self) -> str:
        """The line a table prints first."""
        return (
            f"yardstick: loop {self.loop_s:.3f} s ({LOOP_STEPS:,} Python additions), "
            f"start {1000 * self.start_s:.1f} ms (python -c pass); reference machine "
            f"(targets set there, {REFERENCE.name}): {describe(reference())}"
        )


def describe(stick: Yardstick) -> str:
    """``loop 0.52 s, start 18.0 ms``."""
    return f"loop {stick.loop_s:.3f} s, start {1000 * stick.start_s:.1f} ms"


def measure() -> Yardstick:
    """This machine's yardstick, measured now (about ``3 × loop + 10 × start``)."""
    loops = []
    for _ in range(_LOOP_RUNS):
        began = time.perf_counter()
        workload()
        loops.append(time.perf_counter() - began)
    start = median_seconds([sys.executable, "-c", "pass"], _START_RUNS)
    return Yardstick(statistics.median(loops), start)


def reference() -> Yardstick:
    """The yardstick of the machine the targets in seconds were set on (``yardstick.yaml``)."""
    data = yaml.safe_load(REFERENCE.read_text(encoding="utf-8"))["reference"]
    return Yardstick(float(data["loop_s"]), float(data["start_s"]))


def verdict(
    value: float, unit: str, target: float | None, per: str, here: Yardstick
) -> tuple[str, str]:
    """(target as printed, ``ok``/``MISS``/empty) for a figure measured on ``here``.

    ``per`` empty: ``target`` is in ``unit`` as set on the reference machine; a time is
    judged in multiples of the loop on both machines, anything else as it is. ``per``
    ``loop`` or ``start``: ``target`` is already that multiple.
    """
    if target is None:
        return "", ""
    factor = _TIME_UNITS.get(unit)
    if factor is None:
        return f"< {target:g} {unit}", "ok" if value <= target else "MISS"
    scale = per or "loop"
    bound = target if per else target * factor / reference().seconds(scale)
    figure = value * factor / here.seconds(scale)
    shown = f"< {target:g} {scale}" if per else f"< {target:g} {unit} = {bound:.2f} {scale}"
    return shown, "ok" if figure <= bound else "MISS"
