"""``make conformance``: every real-world SKILL.md of the corpus through phase 7, as a table.

The corpus (``../shared/corpus`` beside the project or beside its worktrees'
folder, or the folder given as the first argument) holds skills written for
other hosts, untouched. They are built in one ``mindrian build … --jobs 2
--json`` run into a temporary project (its own output folder, checkpoints and
registry; the project's are never touched).
One row per skill: built, or failed with its error code, the phase reached and
the seconds its phases took. Two corpus skills share the name ``skill-creator``,
so the registry would hold two agents with one id: both are refused with B001
before anything is built, and the table counts that refusal as the correct
outcome. The exit status is 1 when any other skill fails, else 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import CORPUS, ROOT

__all__ = ["EXPECTED_REFUSALS", "Outcome", "format_table", "main", "outcomes"]

#: Corpus skills a correct build refuses, by folder path relative to the corpus, with the code.
EXPECTED_REFUSALS: Mapping[str, str] = {
    "anthropics+skills/skills/skill-creator/SKILL.md": "B001",
    "openai+skills/skills/.system/skill-creator/SKILL.md": "B001",
}


@dataclass(frozen=True)
class Outcome:
    """What the build did with one corpus skill."""

    skill: str
    """SKILL.md path relative to the corpus."""
    code: str | None
    """Error code, None when it built."""
    phases: int
    """Phases that ran (7 when built)."""
    seconds: float
    """Time its phases took."""
    message: str = ""
    """The error line, when it failed."""

    @property
    def verdict(self) -> str:
        """``built``, ``refused`` (an expected refusal) or ``FAILED``."""
        if self.code is None:
            return "built"
        return "refused" if EXPECTED_REFUSALS.get(self.skill) == self.code else "FAILED"


def outcomes(report: Mapping[str, Any], corpus: Path) -> list[Outcome]:
    """One outcome per build of a ``mindrian build --json`` report, in its order."""
    rows = []
    for build in report["builds"]:
        error = build["error"]
        rows.append(
            Outcome(
                skill=Path(build["path"]).resolve().relative_to(corpus).as_posix(),
                code=None if error is None else error["code"],
                phases=len(build["phases"]),
                seconds=sum(p["seconds"] for p in build["phases"]),
                message="" if error is None else error["text"],
            )
        )
    return rows


def format_table(rows: Sequence[Outcome], wall_seconds: float) -> str:
    """The table, then the totals and each unexpected failure's error line."""
    header = ("skill", "result", "code", "phases", "seconds")
    cells = [header] + [
        (r.skill, r.verdict, r.code or "", f"{r.phases}/7", f"{r.seconds:.1f}") for r in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    lines = [
        "  ".join(c.rjust(widths[i]) if i >= 3 else c.ljust(widths[i]) for i, c in enumerate(line))
        for line in cells
    ]
    built = sum(r.verdict == "built" for r in rows)
    refused = sum(r.verdict == "refused" for r in rows)
    lines.append("")
    lines.append(
        f"{built} of {len(rows)} built through phase 7, {refused} refused as expected, "
        f"{len(rows) - built - refused} failed; {wall_seconds:.0f} s wall clock"
    )
    lines.extend(f"  {r.message}" for r in rows if r.verdict == "FAILED")
    return "\n".join(lines)


def _build(skills: Sequence[Path], work: Path) -> dict[str, Any]:
    argv = [
        sys.executable, "-m", "builder", "build", *map(str, skills),
        "--out", str(work / "out"), "--checkpoints", str(work / "checkpoints"),
        "--registry", str(work / "registry.lbug"), "--jobs", "2", "--json", "--quiet",
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}  # never Neo4j
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env, check=False)
    if not done.stdout.strip():
        raise RuntimeError(
            f"mindrian build printed no report (exit {done.returncode}): {done.stderr}"
        )
    return json.loads(done.stdout)


def main(argv: Sequence[str] = ()) -> int:
    """Build the corpus, print the table; 1 when a skill fails that should have built."""
    corpus = (Path(argv[0]) if argv else CORPUS).resolve()
    skills = sorted(corpus.rglob("SKILL.md"), key=lambda p: p.relative_to(corpus).as_posix())
    if not skills:
        print(f"no SKILL.md under {corpus}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mindrian-conformance-") as work:
        began = time.perf_counter()
        report = _build(skills, Path(work))
        wall = time.perf_counter() - began
    rows = outcomes(report, corpus)
    print(format_table(rows, wall))
    return 1 if any(r.verdict == "FAILED" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
