"""Start-up cost of the command line: ``--help`` and ``validate`` of the PWS skill (issue 39,
item 4: each within 3 × ``python -c pass``, the yardstick's start, measured beside them)."""

from __future__ import annotations

from bench.common import Row, median_seconds, mindrian_command, python_baseline

__all__ = ["rows"]

RUNS = 20
#: Issue 39: ``mindrian --help`` and ``validate`` of one skill, in starts of the interpreter.
HELP_TARGET_STARTS = 3.0
VALIDATE_TARGET_STARTS = 3.0
SKILL = "skills/pws/SKILL.md"


def rows() -> list[Row]:
    """Medians of several runs, each beside ``python -c pass`` measured just before as a ratio
    (the table's own yardstick was measured earlier, under perhaps another load)."""
    command = mindrian_command()
    measured = [
        ("mindrian --help", [*command, "--help"], HELP_TARGET_STARTS),
        (f"mindrian validate {SKILL}", [*command, "validate", SKILL], VALIDATE_TARGET_STARTS),
    ]
    base = python_baseline(RUNS)
    result = [Row("python -c pass", base * 1000, "ms", None, f"median of {RUNS}")]
    for name, argv, target in measured:
        seconds = median_seconds(argv, RUNS)
        note = f"median of {RUNS}; {seconds / base:.1f}x python -c pass"
        result.append(Row(name, seconds * 1000, "ms", target, note, per="start"))
    return result
