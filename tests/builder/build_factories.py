"""Factories for the runner, checkpoint and CLI tests: fake phases, sources, temp projects.

A module of its own (not conftest.py) so that tests import it by a name no other folder uses.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from builder.orchestration.runner import build_source
from builder.phases import PHASE_NAMES, phase_number
from builder.phases.keys import load_key
from builder.phases.outputs import Outputs
from builder.pipeline.build_results import BuildReport
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import CheckResult, PhaseHooks, PhaseInput, PhaseResult, SkillSource
from builder.pipeline.errors import CompilerError, SourceLocation


@dataclass(frozen=True)
class Trail:
    """Output of a fake phase: the agent id and the phases that contributed, in order."""

    id: str
    steps: tuple[str, ...]
    note: str = ""
    identifier: str | None = None
    """The package identifier, as phase 1's SkillDefinition has one (None: not asked for)."""
    field_lines: dict[str, int] = field(default_factory=dict)
    """Front matter lines by field, as phase 1's SkillDefinition has them (none: line 0)."""


class FakePhase(PhaseHooks[Outputs, "Trail"]):
    """A phase whose behaviour a test sets: pass, fail a check, raise, add to the digest."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.number = phase_number(name)
        # Scheduled as the real phase is, but starts no child (no warm worker, no session).
        self.traits = replace(load_key(name).traits, tests="none")
        self.checks = (f"{name}_done", "consistent")
        self.output_type = Trail
        self.calls = 0
        self.failing: str | None = None
        self.error: CompilerError | None = None
        self.note = ""
        self.warnings: tuple[str, ...] = ()
        self.seen: list[PhaseInput] = []
        self.returned_checks: tuple[str, ...] | None = None

    def run(self, inputs: PhaseInput) -> PhaseResult[Trail]:
        self.calls += 1
        self.seen.append(inputs)
        if self.error is not None:
            raise self.error
        if self.number == 1:
            before = Trail(id=inputs.source.path.split("/")[-2], steps=())
        else:
            before = _handed_over(inputs.previous, self.number - 1)
        output = Trail(id=before.id, steps=(*before.steps, self.name), note=self.note)
        checks = tuple(self._verdict(c, inputs) for c in self.returned_checks or self.checks)
        return PhaseResult(output=output, checks=checks, warnings=self.warnings)

    def _verdict(self, check: str, inputs: PhaseInput) -> CheckResult:
        if check == self.failing:
            return CheckResult(
                check, False, f"{check} does not hold", SourceLocation(inputs.source.path, 3, 5)
            )
        return CheckResult(check, True, f"{check} holds")


def _handed_over(outputs: Outputs, number: int) -> Trail:
    """What the hand-over carries to phase ``number + 1``: the latest output it holds (a phase
    without a field in ``Outputs`` hands nothing over), found without naming phase numbers."""
    for read in (outputs.package, outputs.graph, outputs.spec, outputs.skill):
        try:
            return read()  # type: ignore[return-value]  # fake phases hand over a Trail
        except LookupError:  # not filled yet: an earlier phase's is the latest
            continue
    raise LookupError(f"nothing handed over to phase {number + 1}")


@dataclass
class FakePipeline:
    """Fake phases by name, one for every phase of the pipeline."""

    phases: dict[str, FakePhase] = field(default_factory=dict)

    def load(self, name: str) -> FakePhase:
        return self.phases[name]

    def __getitem__(self, name: str) -> FakePhase:
        return self.phases[name]

    def calls(self) -> dict[str, int]:
        """How often each phase ran."""
        return {name: phase.calls for name, phase in self.phases.items()}


def make_pipeline() -> FakePipeline:
    """A fake phase for every phase of the pipeline."""
    return FakePipeline({name: FakePhase(name) for name in PHASE_NAMES})


def make_source(
    text: str = "---\nname: demo\n---\nbody\n", path: str = "skills/demo/SKILL.md"
) -> SkillSource:
    """A SkillSource with its digest, as ``load_source`` would give it."""
    data = text.encode("utf-8")
    return SkillSource(path=path, data=data, digest=hashlib.sha256(data).hexdigest())


def run_build(
    tmp_path: Path,
    pipeline: FakePipeline,
    source: SkillSource | None = None,
    config: BuildConfig | None = None,
    **options: Any,
) -> BuildReport:
    """``build_source`` with the fake pipeline and checkpoints under ``tmp_path/checkpoints``."""
    return build_source(
        source or make_source(),
        config or BuildConfig(root=str(tmp_path)),
        checkpoints_dir=tmp_path / "checkpoints",
        phases=pipeline.load,
        **options,
    )


def trail_steps(names: tuple[str, ...] = PHASE_NAMES) -> tuple[str, ...]:
    """The steps the fake trail of a run through ``names`` records: every phase whose output
    the hand-over carries on (a phase without a field in ``Outputs`` hands nothing over, so
    the next one starts from the latest that did), and the last one."""
    empty = Outputs()
    carried = [name for name in names[:-1] if empty.after(name, lambda: None) is not empty]
    return (*carried, names[-1])


def split_at(name: str, before: str, at: str, after: str | None = None) -> list[str]:
    """Per-phase statuses: ``before`` for the phases before ``name``, ``at`` for it, and
    ``after`` (default ``at``) for the later ones, whatever the pipeline's length."""
    index = PHASE_NAMES.index(name)
    rest = len(PHASE_NAMES) - index - 1
    return [before] * index + [at] + [at if after is None else after] * rest


def statuses(report: BuildReport) -> list[str]:
    """Phase statuses of a report, in order."""
    return [p.status for p in report.phases]


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative POSIX path, with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def skill_text(
    name: str = "demo-skill", description: str = "Checks a plan for gaps.", **fields: str
) -> str:
    """A small valid SKILL.md in the Mindrian format."""
    extra = "".join(f"{key}: {value}\n" for key, value in fields.items())
    return (
        f"---\nname: {name}\ndescription: {description}\ntype: operator\n{extra}---\n"
        "# Demo\n\n## Methodology\n\nAsk what is missing.\n"
    )


def make_project(root: Path, skills: dict[str, str]) -> Path:
    """A project folder with ``[tool.mindrian]`` and ``skills/<name>/SKILL.md`` files."""
    (root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n\n[tool.mindrian]\n', encoding="utf-8"
    )
    for name, text in skills.items():
        folder = root / "skills" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return root


@dataclass(frozen=True)
class CliResult:
    """Exit status and captured output of one in-process CLI run."""

    code: int
    out: str
    err: str
