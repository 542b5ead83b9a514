"""The commands that write and check skills before they are built: ``mindrian validate``
(phase 1 only), ``mindrian fmt`` (Mindrian fields under ``metadata.mindrian``) and
``mindrian new`` (a skill folder to fill in)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from builder.cli.common import (
    annotate,
    display,
    err,
    out,
    project_config,
    project_root,
)
from builder.cli.common import report_format as checked_format
from builder.cli.extra import require_build_extra
from builder.cli.options import FormatOpt, PathsArg, QuietOpt
from builder.pipeline.errors import SourceLocation, UsageError
from builder.pipeline.results import Problem, problem_of
from mindrian.agent_types import AGENT_TYPE_NAMES

__all__ = ["register_skill_commands"]

#: The types ``new --type`` takes, as its help lists them ("operator, role … or guided").
_TYPE_LIST = f"{', '.join(AGENT_TYPE_NAMES[:-1])} or {AGENT_TYPE_NAMES[-1]}"

_EXAMPLES_VALIDATE = (
    "Examples:\n\n\b\n  mindrian validate skills/pws/SKILL.md\n  mindrian validate "
    "skills/*/SKILL.md --quiet\n"
)
_EXAMPLES_FMT = (
    "Examples:\n\n\b\n  mindrian fmt skills\n  mindrian fmt --check skills/pws/SKILL.md\n"
)
_EXAMPLES_NEW = (
    "Examples:\n\n\b\n  mindrian new pricing-check --type operator\n  mindrian new "
    "interview-coach --type role --description 'Coaches a founder through customer interviews.'\n"
)


def register_skill_commands(app: typer.Typer) -> None:
    """Add ``validate``, ``fmt`` and ``new`` to the ``mindrian`` command."""
    app.command(name="validate", epilog=_EXAMPLES_VALIDATE)(validate)
    app.command(name="fmt", epilog=_EXAMPLES_FMT)(fmt_command)
    app.command(name="new", epilog=_EXAMPLES_NEW)(new)


def validate(
    ctx: typer.Context,
    paths: PathsArg = None,
    quiet: QuietOpt = False,
    report_format: FormatOpt = "human",
) -> int:
    """Check SKILL.md files (phase 1 only); nothing is written.

    Prints 'ok PATH (id, type)' for each valid file and a
    PATH:LINE:COL: error[CODE]: message line for each problem (--format github:
    also an annotation on stdout). Every warning of
    phase 1 is printed as build prints it, and so is each place where the Agent
    Skills specification is stricter than mindrian (name and folder, name form,
    description length); warnings keep exit status 0.
    """
    from builder.orchestration.validation import validation_outputs

    github = checked_format(ctx, report_format, ("human", "github")) == "github"
    require_build_extra("validate")
    if not paths:
        raise UsageError("give at least one SKILL.md path", code="U005")
    root = project_root(Path.cwd())
    config = project_config(root)
    status = 0
    for output in validation_outputs(paths, root, config, quiet=quiet, github=github):
        for line in output.lines:
            typer.echo(line.text, err=line.err)
        status = max(status, output.exit_code)
    return status


def fmt_command(
    ctx: typer.Context,
    paths: PathsArg = None,
    check: Annotated[
        bool,
        typer.Option("--check", help="Change nothing; exit 1 when a file would be reformatted."),
    ] = False,
    quiet: QuietOpt = False,
    report_format: FormatOpt = "human",
) -> int:
    """Move Mindrian fields under metadata.mindrian, in block style, keeping comments and order.

    The skill then stays a valid Agent Skill (agentskills validate) and builds
    the same agent. Folders are searched for SKILL.md files and chains (CHAIN.md,
    then its stage files). Prints 'formatted PATH' (or 'would reformat PATH' with
    --check) for each file that changes;
    --format github also prints each of those and each error as an annotation on stdout.
    """
    from builder.skill.fmt import FormatError, format_file, skill_files

    github = checked_format(ctx, report_format, ("human", "github")) == "github"
    require_build_extra("fmt")
    if not paths:
        raise UsageError("give at least one SKILL.md file or folder", code="U005")
    files = skill_files(paths)
    missing = [p for p in files if not p.is_file()]
    if missing:
        raise UsageError(f"no such SKILL.md: {missing[0]}", code="U005")
    status = 0
    for path in files:
        try:
            result = format_file(path, write=not check)
        except FormatError as error:
            err(error.render())
            if github:
                annotate(problem_of(error))
            status = 1
            continue
        if result.changed:
            status = max(status, 1 if check else 0)
            if not quiet:
                err(f"{'would reformat' if check else 'formatted'} {path}")
            if check and github:
                annotate(_reformat_problem(path))
    return status


def _reformat_problem(path: Path) -> Problem:
    message = "mindrian fmt would reformat this file (run: mindrian fmt PATH)"
    return Problem("M002", message, SourceLocation(path.as_posix()))


def new(
    name: Annotated[
        str,
        typer.Argument(
            metavar="NAME",
            help="Skill name: lowercase words joined by hyphens.",
            show_default=False,
        ),
    ],
    agent_type: Annotated[
        str,
        typer.Option(
            "--type",
            metavar="TYPE",
            help=f"{_TYPE_LIST} (any case).",
        ),
    ] = "operator",
    description: Annotated[
        str | None, typer.Option("--description", metavar="TEXT", help="One-line description.")
    ] = None,
    dest: Annotated[
        Path | None,
        typer.Option("--dest", metavar="DIR", help="Parent folder [default: skills/]."),
    ] = None,
) -> int:
    """Create a new skill folder with a SKILL.md to fill in (never overwrites).

    Prints the SKILL.md path. Exit status 2 for a bad name, type or
    description; 1 when the skill folder already exists.
    """
    require_build_extra("new")
    from builder.codegen.scaffold import new_skill  # Jinja: only once the extra is known there

    root = project_root(Path.cwd())
    # Seed 000 spells the types in capitals (OPERATOR); the template's choices are lowercase.
    created = new_skill(name, agent_type.lower(), dest or root / "skills", description)
    out(display(created, root))
    return 0
