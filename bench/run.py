"""``make bench``: run every ``bench/bench_*.py`` and print one table.

Each module exposes ``rows() -> list[Row]``. A row with a target is ``ok`` when
its value is at or under the target, ``MISS`` otherwise. The exit status is 0
either way: benchmarks inform, tests decide.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path

from bench.common import Row

__all__ = ["format_table", "main", "modules"]

_HEADER = ("benchmark", "value", "unit", "target", "", "note")


def modules() -> list[str]:
    """Dotted names of the benchmark modules, sorted."""
    here = Path(__file__).resolve().parent
    return [f"bench.{path.stem}" for path in sorted(here.glob("bench_*.py"))]


def _cells(row: Row) -> tuple[str, ...]:
    verdict = "" if row.target is None else "ok" if row.value <= row.target else "MISS"
    target = "" if row.target is None else f"< {row.target:g}"
    return (row.name, f"{row.value:.1f}", row.unit, target, verdict, row.note)


def format_table(rows: Sequence[Row]) -> str:
    """Rows as an aligned plain-text table (numbers right-aligned)."""
    table = [_HEADER, *(_cells(r) for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(_HEADER))]
    lines = []
    for line in table:
        cells = [
            cell.rjust(widths[i]) if i == 1 else cell.ljust(widths[i])
            for i, cell in enumerate(line)
        ]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main() -> int:
    """Collect every module's rows and print the table."""
    rows: list[Row] = []
    for name in modules():
        rows.extend(importlib.import_module(name).rows())
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
