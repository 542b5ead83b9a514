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

Beside mindrian's verdict, each skill folder goes through the Agent Skills reference
validator (``agentskills validate DIR``, package skills-ref): its findings are listed
under the table as warnings where mindrian is more lenient (it built a skill the
specification refuses). They never change the exit status: the skills are as their
authors publish them.
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

__all__ = ["EXPECTED_REFUSALS", "Outcome", "format_table", "main", "outcomes", "spec_findings"]

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
    spec: tuple[str, ...] = ()
    """``agentskills validate``'s findings on the skill's folder (empty: valid)."""

    @property
    def verdict(self) -> str:
        """``built``, ``refused`` (an expected refusal) or ``FAILED``."""
        if self.code is None:
            return "built"
        return "refused" if EXPECTED_REFUSALS.get(self.skill) == self.code else "FAILED"


def outcomes(
    report: Mapping[str, Any], corpus: Path, spec: Mapping[str, tuple[str, ...]] | None = None
) -> list[Outcome]:
    """One outcome per build of a ``mindrian build --json`` report, in its order.

    ``spec`` holds the reference validator's findings by skill (path relative to the corpus).
    """
    rows = []
    for build in report["builds"]:
        error = build["error"]
        skill = Path(build["path"]).resolve().relative_to(corpus).as_posix()
        rows.append(
            Outcome(
                skill=skill,
                code=None if error is None else error["code"],
                phases=len(build["phases"]),
                seconds=sum(p["seconds"] for p in build["phases"]),
                message="" if error is None else error["text"],
                spec=(spec or {}).get(skill, ()),
            )
        )
    return rows


def spec_findings(folder: Path) -> tuple[str, ...]:
    """``agentskills validate folder``'s findings, the first line of each; () when valid."""
    validator = Path(sys.executable).parent / "agentskills"
    done = subprocess.run(
        [str(validator), "validate", str(folder)], capture_output=True, text=True, check=False
    )
    if done.returncode == 0:
        return ()
    # Each finding is a "  - " line; YAML errors continue on further lines, left out here.
    findings = [
        line.removeprefix("  - ").strip()
        for line in (done.stdout + done.stderr).splitlines()
        if line.startswith("  - ")
    ]
    return tuple(findings) or (f"exit status {done.returncode}",)


def format_table(rows: Sequence[Outcome], wall_seconds: float) -> str:
    """The table, then the totals and each unexpected failure's error line."""
    header = ("skill", "result", "code", "phases", "seconds", "agentskills")
    cells = [header] + [
        (
            r.skill,
            r.verdict,
            r.code or "",
            f"{r.phases}/7",
            f"{r.seconds:.1f}",
            f"{len(r.spec)} finding(s)" if r.spec else "valid",
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    lines = [
        "  ".join(
            c.rjust(widths[i]) if i in (3, 4) else c.ljust(widths[i]) for i, c in enumerate(line)
        ).rstrip()
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
    lenient = [r for r in rows if r.spec and r.verdict != "FAILED"]
    lines.append(
        f"{sum(not r.spec for r in rows)} of {len(rows)} pass agentskills validate; "
        f"{len(lenient)} the specification refuses and mindrian accepts:"
    )
    lines.extend(f"  warning: {r.skill}: {finding}" for r in lenient for finding in r.spec)
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
    spec = {s.relative_to(corpus).as_posix(): spec_findings(s.parent) for s in skills}
    rows = outcomes(report, corpus, spec)
    print(format_table(rows, wall))
    return 1 if any(r.verdict == "FAILED" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
