"""``mindrian check``: regenerate every skill in a temporary folder and diff it against
generated/ (:func:`builder.orchestration.check.check`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from builder.cli.common import (
    annotate,
    display,
    frame,
    project_config,
    project_root,
    say,
    use_frames,
)
from builder.cli.common import (
    report_format as checked_format,
)
from builder.cli.extra import require_build_extra
from builder.cli.options import FormatOpt, FramesOpt, JobsOpt, QuietOpt, ShardOpt
from builder.cli.targets import no_skills_note, progress_bar, project_skills
from builder.pipeline.errors import SourceLocation, UsageError
from mindrian.project import ProjectPaths

if TYPE_CHECKING:
    from builder.orchestration.batch import Listener
    from builder.orchestration.check import CheckResult
    from builder.pipeline.results import Problem

__all__ = ["register_check_command"]

_EXAMPLES = (
    "Examples:\n\n\b\n  mindrian check\n  mindrian check --full\n"
    "  mindrian check --shard 2/4\n  mindrian check --jobs 1 --quiet\n  mindrian check --verbose\n"
    "  mindrian check --frames\n"
)


def register_check_command(app: typer.Typer) -> None:
    """Add ``check`` to the ``mindrian`` command."""
    app.command(name="check", epilog=_EXAMPLES)(check)


def check(
    ctx: typer.Context,
    full: Annotated[
        bool,
        typer.Option(
            "--full", help="Also run every generated test suite and phase 7's end-to-end probes."
        ),
    ] = False,
    shard: ShardOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Print each skill's phase lines, as on a terminal, also when stderr is not one.",
        ),
    ] = False,
    frames: FramesOpt = False,
    report_format: FormatOpt = "human",
) -> int:
    """Regenerate every skill in a temporary folder and diff it against generated/.

    Phases 1-6 run from nothing with their own temporary checkpoints: every
    package is rendered, formatted and compiled, and registry.yaml is written
    from phase 5's records; the generated tests and probes are left to 'make
    test'. --full runs phases 1-7 as a build does, tests and probes included,
    with a temporary registry (Neo4j is never used). Every file counts,
    registry.yaml included; a unified diff of what differs is printed on stdout
    (on stderr with --frames, which keeps stdout for frames). Exit status 1 on
    any difference or failed build, 0 when clean. On stderr: each failed build and each
    differing file as a located line, then what was checked and what drifted; the phase lines
    of each skill only on a terminal (a progress bar for several) or with --verbose.
    --format github also prints each failed build and each differing file as an annotation.
    """
    from builder.cli.listeners import ErrorPrinter, FramePrinter, ProgressPrinter
    from builder.orchestration.batch import Target, default_jobs
    from builder.orchestration.check import check as run_check
    from builder.orchestration.check import summary
    from builder.orchestration.shard import Shard
    from builder.pipeline.report import error_frame
    from builder.pipeline.results import DRIFT_CODE, Problem
    from builder.pipeline.terminal import terminal_text

    github = checked_format(ctx, report_format, ("human", "github")) == "github"
    framed = use_frames(ctx, "check", frames)
    require_build_extra("check")
    if quiet and verbose:
        raise UsageError("give --quiet or --verbose, not both", code="U044")
    printed = say(framed)
    root = project_root(Path.cwd())
    skills = project_skills(root, printed).skills
    if not skills:
        printed(no_skills_note(root))
    targets = [Target(path=p, display=display(p, root)) for p in skills]
    chosen = Shard(1, 1) if shard is None else Shard.parse(shard)
    count = len(chosen.select(targets, "display"))
    bar = progress_bar(count, quiet=quiet or verbose, machine=framed)
    committed = ProjectPaths(root).generated
    # Phase lines are progress: a CI log wants the outcome, a person watching wants to see it move.
    phase_lines = verbose or (not quiet and sys.stderr.isatty())
    listener: Listener = (
        ProgressPrinter(printed, prefix="regenerate") if phase_lines else ErrorPrinter(printed)
    )
    if framed:
        listener = FramePrinter(listener, "regenerate", frame)
    try:
        result = run_check(
            root,
            targets,
            project_config(root),
            committed,
            jobs=jobs or default_jobs(),
            listener=bar or listener,
            full=full,
            shard=chosen,
        )
    finally:
        if bar is not None:
            bar.close()
    if result.diff and framed:
        for line in result.diff.removesuffix("\n").split("\n"):
            printed(line)
    elif result.diff:
        typer.echo(terminal_text(result.diff), nl=False)
    for problem in _drift_problems(result):
        printed(problem.render())
    for line in summary(result, display(committed, root)):
        printed(line)
    if github:
        _annotate_check(result)
    if framed and result.drift:
        shown = display(committed, root)
        message = (
            f"{len(result.drift)} file(s) in {shown} differ from a fresh build: "
            f"{', '.join(result.drift)}"
        )
        frame(error_frame(Problem(DRIFT_CODE, message)))
    return 0 if result.clean else 1


def _drift_problems(result: CheckResult) -> list[Problem]:
    """One located D001 problem per file of ``mindrian check`` that drifted."""
    from builder.pipeline.results import DRIFT_CODE, Problem

    message = "differs from a fresh build of its skill (run: mindrian build --all, commit it)"
    return [Problem(DRIFT_CODE, message, SourceLocation(path)) for path in result.drift]


def _annotate_check(result: CheckResult) -> None:
    """Each failed build and each drifted file of ``mindrian check`` as an annotation."""
    for report in result.builds:
        if report.problem is not None:
            annotate(report.problem, report.path)
    for problem in _drift_problems(result):
        annotate(problem)
