"""The ``mindrian`` command line: the Typer application, its global options, and the one place
where a failure becomes what the user sees.

Each command lives in the module of its group (``build``, ``check``, ``skills``, ``review``,
``graph``, ``init``, ``run``, ``workflow``) and is a thin wrapper: it maps its options to the
library's arguments, calls it and prints the report. Heavy modules (the phases, YAML and schema
libraries, Agno) are imported inside the commands, so ``mindrian --help`` only pays for Typer.
Any exception a command raises comes back here: :func:`builder.pipeline.results.problem_of`
turns it into a located problem and an exit status (0 ok, 1 invalid input or failed check,
2 usage, 3 bug; :mod:`builder.pipeline.results`), and :func:`_fail` prints it once, as a line,
a GitHub annotation, an ERROR frame or a JSON object.
"""

from __future__ import annotations

import contextlib
import sys
import traceback
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer

from builder import __version__
from builder.cli.build import register_build_commands
from builder.cli.check import register_check_command
from builder.cli.common import CliState, annotate, display, err, frame, project_root, say
from builder.cli.graph import register_graph_commands
from builder.cli.init import register_init_command
from builder.cli.mcp import register_mcp_command
from builder.cli.review import register_review_commands
from builder.cli.run import register_run_commands
from builder.cli.skills import register_skill_commands
from builder.cli.workflow import workflow_app
from builder.pipeline.results import (
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    Problem,
    problem_of,
)
from mindrian.errors import MindrianWarning

__all__ = ["app", "main", "project_root"]

app = typer.Typer(
    name="mindrian",
    help=(
        "Compile SKILL.md files into Agno agent packages.\n\n"
        "Exit status: 0 success, 1 invalid input or failed check, 2 usage error, "
        "3 internal error (rerun as mindrian --debug COMMAND … for the traceback)."
    ),
    epilog="Run 'mindrian COMMAND --help' for a command's options and examples.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"mindrian {__version__}")
        raise typer.Exit()


@app.callback()
def _global(
    ctx: typer.Context,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the traceback of an internal error.")
    ] = False,
    version: Annotated[
        bool | None,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = None,
) -> None:
    ctx.ensure_object(CliState).debug = debug


register_build_commands(app)
register_skill_commands(app)
register_check_command(app)
register_review_commands(app)
register_graph_commands(app)
app.add_typer(workflow_app)
register_init_command(app)
register_run_commands(app)
register_mcp_command(app)
#: The order ``mindrian --help`` lists the commands in (the groups follow).
_HELP_ORDER = (
    *("build", "validate", "fmt", "explain", "diff", "select", "register", "check", "new"),
    *("init", "run", "serve", "mcp"),
)
app.registered_commands.sort(key=lambda info: _HELP_ORDER.index(info.name or ""))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mindrian`` script; returns the exit status."""
    state = CliState()
    status = _dispatch(list(sys.argv[1:] if argv is None else argv), state)
    if state.frames is not None:
        from builder.pipeline.report import done_frame

        frame(done_frame(state.frames, status))
    return status


def _dispatch(args: list[str], state: CliState) -> int:
    """Run the command; every exception becomes an error line (and an ERROR frame) and an exit
    status."""
    command = typer.main.get_command(app)
    state.json = "--json" in (args[: args.index("--")] if "--" in args else args)
    try:
        with _runtime_warnings_as_lines(state):
            result = command.main(args=args, prog_name="mindrian", standalone_mode=False, obj=state)
    except typer.TyperException as error:  # usage errors found while parsing arguments
        show = getattr(error, "show", None)
        show() if callable(show) else err(f"error: {error.format_message()}")
        problem = Problem("U001", error.format_message(), exit_code=error.exit_code)
        return _fail(state, problem, None)
    except typer.Abort:
        err("aborted")
        return EXIT_FAILED
    except Exception as error:
        problem = problem_of(error, _command_name(command, args))
        if problem.exit_code != EXIT_INTERNAL:
            return _fail(state, problem, problem.render())
        if state.debug:
            traceback.print_exc()
        return _fail(state, problem, None if state.debug else f"internal error: {problem.message}")
    if result == EXIT_INTERRUPTED:  # Typer's answer to KeyboardInterrupt, given without a word
        message = "interrupted; the next build finishes or undoes what was in progress"
        problem = Problem("E001", message, exit_code=EXIT_INTERRUPTED)
        return _fail(state, problem, problem.render())
    return result if isinstance(result, int) else 0


@contextlib.contextmanager
def _runtime_warnings_as_lines(state: CliState) -> Iterator[None]:
    """While a command runs, a warning of the runtime (:class:`mindrian.errors.MindrianWarning`,
    such as ``RoutingBodyWarning``) prints as a located, coded line like the builder's own
    warnings; any other warning keeps Python's form. Outside the command line it stays an
    ordinary Python warning."""
    with warnings.catch_warnings():
        python_form = warnings.showwarning

        def show(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            if isinstance(message, MindrianWarning):
                where = display(Path(message.path), Path.cwd().absolute())
                say(state.frames is not None)(
                    f"{where}: warning[{message.code}]: {message.message}"
                )
            else:
                python_form(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


def _command_name(group: Any, args: Sequence[str]) -> str:
    """The subcommand ``args`` name (``build``), for the ``--debug`` hint; empty when none does."""
    commands = getattr(group, "commands", {})
    return next((a for a in args if a in commands), "")


def _fail(state: CliState, problem: Problem, line: str | None) -> int:
    """Print ``line`` (unless None) and the problem's ERROR frame (--frames) or JSON object
    (--json); returns the exit status."""
    if line is not None:
        say(state.frames is not None)(line)
    if state.github:
        annotate(problem)
    if state.frames is not None:
        from builder.pipeline.report import error_frame

        frame(error_frame(problem))
    elif state.json:
        from builder.pipeline.report import error_json

        typer.echo(error_json(problem))
    return problem.exit_code
