"""The ``mindrian`` command line.

Each command is a thin wrapper: it resolves paths against the project root,
calls one library function and prints the report. Heavy modules (the phases,
YAML and schema libraries, Agno) are imported inside the commands, so
``mindrian --help`` only pays for Typer. Exit statuses are documented in
:mod:`builder.report`: 0 ok, 1 invalid input or failed check, 2 usage, 3 bug.
"""

from __future__ import annotations

import sys
import tomllib
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from builder import __version__
from builder.errors import MindrianError

if TYPE_CHECKING:
    from builder.config import BuildConfig
    from builder.report import BuildReport, PhaseReport, ValidationReport

__all__ = ["app", "main", "project_root"]

_EXAMPLES_BUILD = """\
Examples:

\b
  mindrian build skills/pws/SKILL.md
  mindrian build --all --quiet
  mindrian build skills/pws --from architecture --until tool_assembly
  mindrian build skills/pws/SKILL.md --force --timings
  mindrian build --all --json > build-report.json
"""

app = typer.Typer(
    name="mindrian",
    help=(
        "Compile SKILL.md files into Agno agent packages.\n\n"
        "Exit status: 0 success, 1 invalid input or failed check, 2 usage error, "
        "3 internal error (rerun with --debug for the traceback)."
    ),
    epilog="Run 'mindrian COMMAND --help' for a command's options and examples.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@dataclass
class _State:
    """Global switches, shared with ``main`` so it knows how to report a crash."""

    debug: bool = False
    """Show tracebacks of internal errors."""


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"mindrian {__version__}")
        raise typer.Exit()


@app.callback()
def _global(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an internal error.")] = False,
    version: Annotated[
        Optional[bool],
        typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version and exit."),
    ] = None,
) -> None:
    ctx.ensure_object(_State).debug = debug


def project_root(start: Path) -> Path:
    """The nearest folder from ``start`` upwards whose pyproject.toml has ``[tool.mindrian]``, else ``start``."""
    for folder in (start, *start.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                table = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if "mindrian" in table.get("tool", {}):
                return folder
    return start


def _display(path: Path, root: Path) -> str:
    """How a path appears in messages and generated headers: relative to the root when inside it."""
    absolute = path.absolute()
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _skill_file(path: Path) -> Path:
    return path / "SKILL.md" if path.is_dir() else path


def _err(line: str) -> None:
    typer.echo(line, err=True)


def _config(root: Path, **switches: object) -> BuildConfig:
    from builder.config import load_config

    return load_config(root).with_switches(**switches)


_PathsArg = Annotated[
    Optional[list[Path]],
    typer.Argument(metavar="PATH...", help="SKILL.md files, or skill folders containing one.", show_default=False),
]
_QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print errors only.")]


@app.command(epilog=_EXAMPLES_BUILD)
def build(
    paths: _PathsArg = None,
    all_skills: Annotated[bool, typer.Option("--all", help="Build every skills/**/SKILL.md of the project.")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", metavar="DIR", help="Output folder [default: generated/].")] = None,
    checkpoints: Annotated[
        Optional[Path],
        typer.Option("--checkpoints", metavar="DIR", help="Checkpoint folder [default: .mindrian/checkpoints/]."),
    ] = None,
    from_phase: Annotated[
        Optional[str],
        typer.Option("--from", metavar="PHASE", help="Re-run from this phase (name or number); earlier ones come from checkpoints."),
    ] = None,
    until_phase: Annotated[Optional[str], typer.Option("--until", metavar="PHASE", help="Stop after this phase.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Run every phase even when its checkpoint is current.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print a machine-readable report on stdout.")] = False,
    timings: Annotated[bool, typer.Option("--timings", help="Show how long each phase took.")] = False,
    connect: Annotated[bool, typer.Option("--connect", help="Phase 4 connects to MCP servers instead of checking their configuration.")] = False,
    neo4j_uri: Annotated[
        Optional[str], typer.Option("--neo4j-uri", metavar="URI", help="Register in Neo4j at URI instead of the embedded registry.")
    ] = None,
    quiet: _QuietOpt = False,
) -> int:
    """Build SKILL.md files through the seven phases.

    Each phase is skipped when its inputs are unchanged since its last
    passing checkpoint; a failed check stops the build (exit status 1) and
    the next build resumes at that phase.
    """
    from builder.report import build_json
    from builder.runner import build as build_one
    from builder.runner import phase_range

    phase_range(from_phase, until_phase)
    root = project_root(Path.cwd())
    targets = _targets(paths, all_skills, root)
    config = _config(root, connect=connect, neo4j_uri=neo4j_uri)
    out_dir = out or root / "generated"
    checkpoints_dir = checkpoints or root / ".mindrian" / "checkpoints"
    reports = []
    for target in targets:
        display = _display(target, root)
        if not quiet:
            _err(f"build {display}")
        report = build_one(
            target,
            config,
            checkpoints_dir=checkpoints_dir,
            out_dir=out_dir,
            display=display,
            from_phase=from_phase,
            until_phase=until_phase,
            force=force,
            progress=None if quiet else _progress_printer(timings),
        )
        _print_outcome(report, quiet)
        reports.append(report)
    if len(reports) > 1 and not quiet:
        failed = sum(1 for r in reports if r.problem)
        _err(f"{len(reports) - failed} built, {failed} failed")
    if json_out:
        typer.echo(build_json(reports))
    return max(r.exit_code for r in reports)


def _targets(paths: list[Path] | None, all_skills: bool, root: Path) -> list[Path]:
    from builder.errors import UsageError

    if all_skills and paths:
        raise UsageError("give SKILL.md paths or --all, not both", code="U004")
    if all_skills:
        found = sorted((root / "skills").glob("**/SKILL.md"), key=lambda p: p.relative_to(root).as_posix())
        if not found:
            raise UsageError(f"no skills/**/SKILL.md under {root}", code="U007")
        return found
    if not paths:
        raise UsageError("give at least one SKILL.md path, or --all", code="U005")
    return [_skill_file(p) for p in paths]


def _progress_printer(timings: bool):  # noqa: ANN202 - a closure over the flag
    from builder.phases import PHASE_NAMES
    from builder.report import progress_line

    def show(report: PhaseReport) -> None:
        _err(progress_line(report, len(PHASE_NAMES), timings=timings))

    return show


def _print_outcome(report: BuildReport, quiet: bool) -> None:
    if report.problem is not None:
        _err(report.problem.render())
    elif not quiet:
        _err(f"built {report.agent_id} ({report.path}): {len(report.phases)} phase(s) ok")


@app.command(epilog="Examples:\n\n\b\n  mindrian validate skills/pws/SKILL.md\n  mindrian validate skills/*/SKILL.md --quiet\n")
def validate(paths: _PathsArg = None, quiet: _QuietOpt = False) -> int:
    """Check SKILL.md files (phase 1 only); nothing is written.

    Prints 'ok PATH (id, type)' for each valid file and a
    PATH:LINE:COL: error[CODE]: message line for each problem.
    """
    from builder.errors import UsageError
    from builder.report import validation_line
    from builder.runner import validate as validate_one

    if not paths:
        raise UsageError("give at least one SKILL.md path", code="U005")
    root = project_root(Path.cwd())
    config = _config(root)
    status = 0
    for path in paths:
        target = _skill_file(path)
        report: ValidationReport = validate_one(target, config, display=_display(target, root))
        for problem in report.problems:
            _err(problem.render())
        if not report.problems and not quiet:
            typer.echo(validation_line(report))
        status = max(status, report.exit_code)
    return status


@app.command(epilog="Examples:\n\n\b\n  mindrian explain pws-validation\n  mindrian explain pws-validation --json\n")
def explain(
    agent_id: Annotated[str, typer.Argument(metavar="ID", help="Agent id, e.g. pws-validation.", show_default=False)],
    checkpoints: Annotated[
        Optional[Path],
        typer.Option("--checkpoints", metavar="DIR", help="Checkpoint folder [default: .mindrian/checkpoints/]."),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the checkpoints' verdicts as JSON.")] = False,
) -> int:
    """Show what each phase decided for an agent, from its checkpoints."""
    from builder.checkpoints import CheckpointStore, valid_agent_id
    from builder.errors import PipelineError, UsageError
    from builder.report import explain_json, explain_text

    if not valid_agent_id(agent_id):
        raise UsageError(f"{agent_id!r} is not an agent id (letters, digits, '-', '_', '.')", code="U006")
    folder = checkpoints or project_root(Path.cwd()) / ".mindrian" / "checkpoints"
    found = CheckpointStore(folder).load_all(agent_id)
    if not found:
        raise PipelineError(f"no checkpoints for {agent_id!r} under {folder}; build its SKILL.md first", code="P007")
    typer.echo(explain_json(agent_id, found) if json_out else explain_text(agent_id, found), nl=json_out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mindrian`` script; returns the exit status."""
    state = _State()
    command = typer.main.get_command(app)
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result = command.main(args=args, prog_name="mindrian", standalone_mode=False, obj=state)
    except typer.TyperException as error:  # usage errors found while parsing arguments
        show = getattr(error, "show", None)
        show() if callable(show) else _err(f"error: {error.format_message()}")
        return error.exit_code
    except typer.Abort:
        from builder.report import EXIT_FAILED

        _err("aborted")
        return EXIT_FAILED
    except MindrianError as error:
        from builder.report import exit_code_of

        _err(error.render())
        return exit_code_of(error)
    except Exception as error:  # noqa: BLE001 - the last line of defence
        from builder.report import EXIT_INTERNAL, internal_error_line

        if state.debug:
            traceback.print_exc()
        else:
            _err(internal_error_line(error))
        return EXIT_INTERNAL
    return result if isinstance(result, int) else 0
