"""``mindrian validate``: phase 1 of each named skill, nothing written, and the lines it prints.

Kept apart from the runner (:mod:`builder.orchestration.runner`), whose checkpoints, digests
and stamps a validation never touches, so checking one skill imports only phase 1 and what
it reads. The command (:mod:`builder.cli.skills`) prints :func:`validation_outputs` as they
come; the script's entry point (:mod:`builder.entry`) runs the same function without the
command line application when the arguments are plain enough.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from builder.phases import PHASE_NAMES, load_phase
from builder.phases.outputs import AnyPhase, Outputs
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import PhaseInput, PhaseResult
from builder.pipeline.errors import CompilerError, SourceLocation
from builder.pipeline.paths import display as display_path
from builder.pipeline.paths import refuse_outside_link
from builder.pipeline.results import Problem, ValidationReport, check_failure, problem_of
from builder.pipeline.terminal import terminal_line

__all__ = ["Line", "PathOutput", "located", "validate", "validation_outputs"]


@dataclass(frozen=True)
class Line:
    """One line ``mindrian validate`` prints."""

    text: str
    """The line, without its newline, ready to print (human lines escaped)."""
    err: bool
    """On stderr (human lines); False: on stdout (``ok`` lines, GitHub annotations)."""


@dataclass(frozen=True)
class PathOutput:
    """What ``mindrian validate`` prints for one named path, and its exit status."""

    lines: tuple[Line, ...]
    """In the order printed."""
    exit_code: int
    """0 when the skill is valid, else its worst problem's status."""


def located(problem: Problem, path: str) -> Problem:
    """Problems without a place point at the SKILL.md being built, so every error line names a
    file."""
    return problem if problem.location else replace(problem, location=SourceLocation(path))


def validate(
    path: str | Path,
    config: BuildConfig,
    *,
    display: str | None = None,
    phases: Any = None,
) -> ValidationReport:
    """Run phase 1 only, writing nothing: every failed check or the error raised. ``phases``
    loads a phase by name (default: the shipped phases)."""
    from builder.skill.source import load_source

    shown = display or Path(path).as_posix()
    load: Any = phases or load_phase
    try:
        source = load_source(Path(path), display=shown, digest=False)  # nothing is kept
        phase: AnyPhase = load(PHASE_NAMES[0])
        result: PhaseResult[Any] = phase.run(
            PhaseInput(source=source, config=config, previous=Outputs())
        )
    except CompilerError as error:
        return ValidationReport(path=shown, problems=(located(problem_of(error), shown),))
    failures = tuple(
        located(check_failure(1, phase.name, c), shown) for c in result.checks if not c.passed
    )
    if failures:
        return ValidationReport(path=shown, problems=failures)
    return ValidationReport(
        path=shown,
        agent_id=result.output.id,
        agent_type=result.output.type,
        warnings=result.warnings,
    )


def validation_outputs(
    paths: Iterable[Path], root: Path, config: BuildConfig, *, quiet: bool, github: bool
) -> Iterator[PathOutput]:
    """Validate each path in turn (a SKILL.md or its folder) and yield what the command prints
    for it; a path the command refuses (a link out of the project) raises."""
    from builder.pipeline.report import validation_line, warning_line
    from builder.skill.chain_layout import skill_file

    if github:  # only GitHub annotations need their patterns and record
        from builder.pipeline.annotations import Annotation, github_line, warning_annotation

    for path in paths:
        refuse_outside_link(path, root)
        target = skill_file(path)
        report = validate(target, config, display=display_path(target, root))
        lines: list[Line] = []
        for problem in report.problems:
            lines.append(Line(terminal_line(problem.render()), err=True))
            if github:
                where = problem.location or SourceLocation(report.path)
                lines.append(
                    Line(github_line(Annotation(problem.code, problem.message, where)), err=False)
                )
        if not report.problems and not quiet:
            for warning in report.warnings:
                line = warning_line(warning, report.path)
                lines.append(Line(terminal_line(line), err=True))
                found = warning_annotation(line) if github else None
                if found is not None:
                    lines.append(Line(github_line(found), err=False))
            lines.append(Line(terminal_line(validation_line(report)), err=False))
        yield PathOutput(tuple(lines), report.exit_code)
