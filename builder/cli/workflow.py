"""``mindrian workflow validate|render|run FILE.dot``: thin wrappers over :mod:`mindrian.workflow`.

Findings print in compiler style on stderr (``PATH:LINE:COL: error[L002]: ...``);
exit 1 when a file cannot be read or parsed or breaks an error-severity rule,
warnings alone keep exit 0. ``run`` walks the graph with dry-run handlers (no
model call, no shell command), answering from ``--outcome NODE=OUTCOME``; with
``--model`` (``scripted:PATH`` included) a model answers the LLM steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from builder.cli.options import QuietOpt, RecordOpt
from builder.pipeline.terminal import terminal_line, terminal_text

if TYPE_CHECKING:
    from mindrian.recording import Recording
    from mindrian.workflow.engine import Handler
    from mindrian.workflow.model import ThoughtGraph

__all__ = ["workflow_app"]

_EXAMPLES = """\
Examples:

\b
  mindrian workflow validate generated/lean_canvas/workflow.dot
  mindrian workflow render pipeline.dot > canonical.dot
  mindrian workflow run pipeline.dot --outcome review=reject --outcome review=approve
  mindrian workflow run pipeline.dot --model scripted:answers.yaml
"""

workflow_app = typer.Typer(
    name="workflow",
    help="Check, render and run DOT thought graphs (seed 003, Attractor vocabulary).",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

_FileArg = Annotated[Path, typer.Argument(metavar="FILE.dot", help="A DOT thought graph.")]


def _err(line: str) -> None:
    """Print one human line on stderr (control characters escaped: graphs quote skills)."""
    typer.echo(terminal_line(line), err=True)


def _out(line: str) -> None:
    """Print one human line on stdout, escaped like :func:`_err`."""
    typer.echo(terminal_line(line))


def _load(file: Path, *, show_warnings: bool) -> tuple[ThoughtGraph | None, int]:
    from mindrian.workflow.command import check_file
    from mindrian.workflow.validate import ERROR

    graph, findings = check_file(file, file.as_posix())
    for finding in findings:
        if show_warnings or finding.severity == ERROR:
            _err(finding.render())
    failed = graph is None or any(f.severity == ERROR for f in findings)
    return graph, 1 if failed else 0


@workflow_app.command("validate", epilog=_EXAMPLES)
def validate_command(
    files: Annotated[list[Path], typer.Argument(metavar="FILE.dot...", help="Graphs to check.")],
    quiet: QuietOpt = False,
) -> int:
    """Parse and lint each file; exit 1 if any has an error (warnings are reported only).

    Each finding is coded: L001 the file cannot be read, L002 it is not a thought graph,
    L1nn a lint rule, whose name follows the code (error[L105]: reachable: ...).
    """
    status = 0
    for file in files:
        _, failed = _load(file, show_warnings=not quiet)
        status = max(status, failed)
        if not failed and not quiet:
            _err(f"{file.as_posix()}: ok")
    return status


@workflow_app.command("render", epilog=_EXAMPLES)
def render_command(file: _FileArg) -> int:
    """Print the canonical DOT of a graph: subgraphs flattened, attributes sorted."""
    from mindrian.workflow.command import check_file
    from mindrian.workflow.dot import render

    graph, findings = check_file(file, file.as_posix())
    if graph is None:
        for finding in findings:
            _err(finding.render())
        return 1
    typer.echo(terminal_text(render(graph)), nl=False)
    return 0


@workflow_app.command("run", epilog=_EXAMPLES)
def run_command(
    file: _FileArg,
    outcome: Annotated[
        list[str] | None,
        typer.Option(
            "--outcome",
            metavar="NODE=OUTCOME",
            help="What NODE answers, in turn (repeat); unscripted nodes succeed.",
        ),
    ] = None,
    state: Annotated[
        Path | None,
        typer.Option("--state", metavar="PATH", help="Save (and resume) the run state here."),
    ] = None,
    max_steps: Annotated[int, typer.Option(help="Stop a run that loops longer than this.")] = 1000,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            metavar="MODEL",
            help="Answer LLM steps with PROVIDER:ID or scripted:PATH (default $MINDRIAN_MODEL; "
            "without either they succeed without a model).",
        ),
    ] = None,
    record: RecordOpt = None,
) -> int:
    """Walk a graph; exit 0 when it reaches an exit, 1 when it fails.

    Nodes that need a handler succeed without doing anything unless --outcome
    scripts them; with --model (or $MINDRIAN_MODEL) a model answers the LLM steps.
    A run that cannot go on (step limit, timeout, unusable model) is error[L003].
    """
    from mindrian.agents.errors import AgentRunError
    from mindrian.model_choice import ModelScriptError
    from mindrian.providers import ModelUnavailableError
    from mindrian.recording import Recording
    from mindrian.workflow.command import RUN_CODE, dry_run_handlers, parse_outcome_script
    from mindrian.workflow.engine import run
    from mindrian.workflow.model import WorkflowError

    graph, failed = _load(file, show_warnings=False)
    if failed or graph is None:
        return 1
    recording = Recording() if record is not None else None
    try:
        handlers = dry_run_handlers(graph, parse_outcome_script(outcome or ()), _out)
        handlers.update(_model_handlers(graph, model, recording))
        result = run(graph, handlers, state, max_steps=max_steps, base_dir=file.parent)
    except (WorkflowError, ModelScriptError, ModelUnavailableError, AgentRunError) as exc:
        _err(f"{file.as_posix()}: error[{RUN_CODE}]: {getattr(exc, 'message', exc)}")
        return 1
    finally:
        if recording is not None and record is not None:
            recording.write(record)
    path = " -> ".join(result.visited)
    if result.status == "failed":
        _err(f"{file.as_posix()}: workflow {graph.name} failed: {result.failure_reason}")
        _err(f"path: {path}")
        return 1
    _out(f"workflow {graph.name} {result.status} in {len(result.history)} steps: {path}")
    return 0


def _model_handlers(
    graph: ThoughtGraph, option: str | None, recording: Recording | None
) -> dict[str, Handler]:
    """Handlers asking the chosen model (nothing when no model is chosen)."""
    from agno.models.base import Model

    from mindrian.model_choice import choose_model
    from mindrian.model_settings import ModelSettings
    from mindrian.providers import run_model
    from mindrian.workflow.command import model_handlers

    chosen = choose_model(option, base=Path.cwd(), recording=recording).model_for(graph.name)
    if chosen is None:
        return {}
    model = chosen if isinstance(chosen, Model) else run_model(chosen, ModelSettings(), warn=_err)
    return dict(model_handlers(graph, model, _out))
