"""Start-up cost of the command line: ``--help`` and ``validate`` of the PWS skill."""

from __future__ import annotations

from bench.common import Row, median_seconds, mindrian_command, python_baseline

__all__ = ["rows"]

RUNS = 7
HELP_TARGET_MS = 150.0
VALIDATE_TARGET_MS = 400.0
SKILL = "skills/pws/SKILL.md"


def rows() -> list[Row]:
    """Medians of several runs, each beside ``python -c pass`` as a ratio."""
    base = python_baseline(RUNS)
    command = mindrian_command()
    measured = [
        ("mindrian --help", [*command, "--help"], HELP_TARGET_MS),
        (f"mindrian validate {SKILL}", [*command, "validate", SKILL], VALIDATE_TARGET_MS),
    ]
    result = [Row("python -c pass", base * 1000, "ms", None, f"median of {RUNS}")]
    for name, argv, target in measured:
        seconds = median_seconds(argv, RUNS)
        result.append(
            Row(name, seconds * 1000, "ms", target, f"{seconds / base:.1f}x python -c pass")
        )
    return result
