"""The yardstick every bench table prints first, and how targets are judged in its units (never
its timings: figures are for the bench, not for tests)."""

from __future__ import annotations

import re

from bench import run, yardstick
from bench.common import Row
from bench.yardstick import Yardstick


def test_the_workload_is_fixed() -> None:
    assert yardstick.workload(1000) == sum(range(1000))
    assert yardstick.LOOP_STEPS == 10_000_000


def test_the_reference_machine_is_recorded() -> None:
    reference = yardstick.reference()
    assert 0 < reference.start_s < reference.loop_s


def test_multiples_of_a_time_and_of_nothing_else() -> None:
    stick = Yardstick(loop_s=0.5, start_s=0.02)
    assert stick.multiples(80.0, "ms") == "4.0 start, 0.16 loop"
    assert stick.multiples(1.0, "s") == "50.0 start, 2.00 loop"
    assert stick.multiples(12.0, "MiB") == ""


def test_a_target_in_seconds_gives_the_same_verdict_on_a_fast_and_a_slow_machine() -> None:
    """A row that takes twice as long on a machine whose loop takes twice as long."""
    reference = yardstick.reference()
    slow = Yardstick(reference.loop_s * 2, reference.start_s * 2)
    target = 5.0  # seconds, set on the reference machine
    assert yardstick.verdict(4.0, "s", target, "", reference)[1] == "ok"
    assert yardstick.verdict(8.0, "s", target, "", slow)[1] == "ok"
    assert yardstick.verdict(6.0, "s", target, "", reference)[1] == "MISS"
    assert yardstick.verdict(12.0, "s", target, "", slow)[1] == "MISS"
    shown, _ = yardstick.verdict(4.0, "s", target, "", reference)
    assert re.fullmatch(r"< 5 s = \d+\.\d\d loop", shown)


def test_a_target_in_starts_and_one_not_of_time() -> None:
    stick = Yardstick(loop_s=0.5, start_s=0.02)
    assert yardstick.verdict(79.0, "ms", 4.0, "start", stick) == ("< 4 start", "ok")
    assert yardstick.verdict(81.0, "ms", 4.0, "start", stick) == ("< 4 start", "MISS")
    assert yardstick.verdict(1.2, "ratio", 1.5, "", stick) == ("< 1.5 ratio", "ok")


def test_the_bench_table_prints_the_yardstick_first_and_multiples_per_row() -> None:
    stick = Yardstick(loop_s=0.5, start_s=0.02)
    rows = [
        Row("one-shot", 60.0, "ms", 4.0, "note", per="start"),
        Row("memory", 12.0, "MiB", None),
    ]
    first, header, _, one_shot, memory = run.format_table(rows, stick).splitlines()
    assert first.startswith("yardstick: loop 0.500 s") and "start 20.0 ms" in first
    assert header.split()[:5] == ["benchmark", "value", "unit", "in", "yardsticks"]
    assert "3.0 start, 0.12 loop" in one_shot and "< 4 start  ok" in one_shot
    assert "start" not in memory
