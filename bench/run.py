"""``make bench``: run every ``bench/bench_*.py`` and print one table.

Each module exposes ``rows() -> list[Row]``. The machine's yardstick (:mod:`bench.yardstick`)
is measured and printed first; every timing row is also given as a multiple of it, and a
row with a target is ``ok`` when its figure, in those units, is at or under the target
(set on the machine ``bench/yardstick.yaml`` records), ``MISS`` otherwise. The exit status
is 0 either way: benchmarks inform, tests decide.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path

from bench import yardstick
from bench.common import Row
from bench.yardstick import Yardstick

__all__ = ["format_table", "main", "modules"]

_HEADER = ("benchmark", "value", "unit", "in yardsticks", "target", "", "note")


def modules() -> list[str]:
    """Dotted names of the benchmark modules, sorted."""
    here = Path(__file__).resolve().parent
    return [f"bench.{path.stem}" for path in sorted(here.glob("bench_*.py"))]


def _cells(row: Row, here: Yardstick) -> tuple[str, ...]:
    target, verdict = yardstick.verdict(row.value, row.unit, row.target, row.per, here)
    multiples = here.multiples(row.value, row.unit)
    return (row.name, f"{row.value:.1f}", row.unit, multiples, target, verdict, row.note)


def format_table(rows: Sequence[Row], here: Yardstick) -> str:
    """The yardstick's line, then the rows as an aligned plain-text table (numbers
    right-aligned)."""
    table = [_HEADER, *(_cells(r, here) for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(_HEADER))]
    lines = []
    for line in table:
        cells = [
            cell.rjust(widths[i]) if i in (1, 3) else cell.ljust(widths[i])
            for i, cell in enumerate(line)
        ]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join([here.header(), *lines])


def main() -> int:
    """Measure the yardstick, collect every module's rows and print the table."""
    here = yardstick.measure()
    rows: list[Row] = []
    for name in modules():
        rows.extend(importlib.import_module(name).rows())
    print(format_table(rows, here))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
