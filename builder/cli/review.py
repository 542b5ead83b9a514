"""The commands that look at what was built: ``mindrian explain`` (what each phase decided for
an agent, or its system prompts) and ``mindrian diff`` (what changed in each agent's behaviour
between two git revisions)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from builder.cli.common import project_root
from builder.cli.common import report_format as checked_format
from builder.cli.options import CheckpointsOpt, FormatOpt, JsonOpt, OutOpt
from builder.pipeline.errors import PipelineError, UsageError
from mindrian.project import ProjectPaths

__all__ = ["register_review_commands"]

_EXAMPLES_EXPLAIN = (
    "Examples:\n\n\b\n  mindrian explain pws-validation\n  mindrian explain pws-validation "
    "--json\n  mindrian explain larry --prompt\n"
)
_EXAMPLES_DIFF = (
    "Examples:\n\n\b\n  mindrian diff\n  mindrian diff main HEAD\n"
    "  mindrian diff HEAD~1 HEAD --format json\n"
)


def register_review_commands(app: typer.Typer) -> None:
    """Add ``explain`` and ``diff`` to the ``mindrian`` command."""
    app.command(name="explain", epilog=_EXAMPLES_EXPLAIN)(explain)
    app.command(name="diff", epilog=_EXAMPLES_DIFF)(diff_command)


def explain(
    ctx: typer.Context,
    agent_id: Annotated[
        str, typer.Argument(metavar="ID", help="Agent id, e.g. pws-validation.", show_default=False)
    ],
    checkpoints: CheckpointsOpt = None,
    json_out: JsonOpt = False,
    prompt: Annotated[
        bool,
        typer.Option(
            "--prompt",
            help="Print the exact system prompt of every model acting for the agent, "
            "from its generated package (run offline with scripted models).",
        ),
    ] = False,
    out: OutOpt = None,
    report_format: FormatOpt = "human",
) -> int:
    """Show what each phase decided for an agent, from its checkpoints; or its system prompts."""
    from builder.pipeline.checkpoints import CheckpointStore, valid_agent_id
    from builder.pipeline.report import explain_json, explain_text

    json_out = checked_format(ctx, report_format, ("human", "json")) == "json" or json_out

    if not valid_agent_id(agent_id):
        raise UsageError(
            f"{agent_id!r} is not an agent id (letters, digits, '-', '_', '.')", code="U006"
        )
    if prompt:
        return _explain_prompt(agent_id, out or ProjectPaths(project_root(Path.cwd())).generated)
    folder = checkpoints or ProjectPaths(project_root(Path.cwd())).checkpoints
    found = CheckpointStore(folder).load_all(agent_id)
    if not found:
        raise PipelineError(
            f"no checkpoints for {agent_id!r} under {folder}; build its SKILL.md first", code="P007"
        )
    typer.echo(
        explain_json(agent_id, found) if json_out else explain_text(agent_id, found), nl=json_out
    )
    return 0


def _explain_prompt(agent_id: str, out: Path) -> int:
    from builder.pipeline.terminal import terminal_text
    from mindrian.testing.prompts import (
        PackageNotFoundError,
        agent_class_of,
        render_prompts,
        system_prompts,
    )

    try:
        agent_class = agent_class_of(out, agent_id)
    except PackageNotFoundError as exc:
        raise PipelineError(f"{exc}; build its SKILL.md first", code="P010") from None
    typer.echo(terminal_text(render_prompts(system_prompts(agent_class))), nl=False)
    return 0


def diff_command(
    ctx: typer.Context,
    base: Annotated[
        str | None,
        typer.Argument(
            metavar="[BASE]",
            help="Revision to compare from [default: the merge base of HEAD with the default "
            "branch (origin/HEAD, main or master), else HEAD].",
            show_default=False,
        ),
    ] = None,
    head: Annotated[
        str | None,
        typer.Argument(
            metavar="[HEAD]",
            help="Revision to compare to [default: the working tree].",
            show_default=False,
        ),
    ] = None,
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="FORMAT",
            help="markdown (a pull-request comment) or json.",
        ),
    ] = "markdown",
) -> int:
    """Summarise what changed in each agent's behaviour between two git revisions.

    Reads the generated packages (spec.yaml, instructions.md, workflow.dot) at both revisions
    and names, per agent: agents added, removed or renamed; type; model and settings; prompt
    lines (quoted, with their SKILL.md line); output schema fields and bounds; triggers,
    problem types, chains and weights; tools and MCP servers; the handoff contract; workflow
    nodes and edges. Unchanged agents are left out; the first line is a one-line verdict.
    Exit status 0 whether or not something changed, 1 when git cannot compare (not a
    repository, unknown revision).
    """
    from builder.review import markdown, review, to_json

    # json also makes an error that stops the command a JSON object on stdout, as elsewhere.
    checked_format(ctx, output_format, ("markdown", "json"))
    result = review(project_root(Path.cwd()), base, head)
    typer.echo(to_json(result) if output_format == "json" else markdown(result), nl=False)
    return 0
