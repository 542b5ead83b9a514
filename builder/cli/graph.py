"""The commands that read the framework registry: ``mindrian select`` (rank the registered
frameworks for a context, or score trigger evals) and the ``mindrian graph`` group (``export``,
``rebuild``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from builder.cli.common import display, err, project_root
from builder.cli.common import report_format as checked_format
from builder.cli.options import FormatOpt, JsonOpt, Neo4jReadOpt, RegistryReadOpt
from builder.pipeline.errors import UsageError
from mindrian.project import ProjectPaths

__all__ = ["graph_app", "register_graph_commands"]


def register_graph_commands(app: typer.Typer) -> None:
    """Add ``select`` and the ``graph`` group to the ``mindrian`` command."""
    app.command(name="select", epilog=_EXAMPLES_SELECT)(select)
    app.add_typer(graph_app)


_EXAMPLES_SELECT = """\
Examples:

\b
  mindrian select "is my startup idea worth building?"
  mindrian select --trigger validate
  mindrian select -t scqa -t structure --problem-type ill-defined --previous pws-validation
  mindrian select --trigger validate --json --limit 10
  mindrian select "is my startup idea worth building?" --explain
  mindrian select --eval skills/pws/evals/trigger-eval.json
  mindrian select --eval ../shared/routing/evals --format json
  NEO4J_USERNAME=neo4j NEO4J_PASSWORD=... mindrian select -t validate --neo4j-uri
  bolt://localhost:7687
"""


def select(
    ctx: typer.Context,
    text: Annotated[
        str | None,
        typer.Argument(
            metavar="[SENTENCE]",
            help="The context in the user's words, ranked by text relevance over each "
            "framework's name, description, triggers and problem types (instead of --trigger).",
        ),
    ] = None,
    triggers: Annotated[
        list[str] | None,
        typer.Option("--trigger", "-t", metavar="T", help="A word of the context (repeatable)."),
    ] = None,
    problem_types: Annotated[
        list[str] | None,
        typer.Option(
            "--problem-type", "-p", metavar="P", help="A problem type of the context (repeatable)."
        ),
    ] = None,
    previous: Annotated[
        list[str] | None,
        typer.Option(
            "--previous", metavar="F", help="Id of a framework already used (repeatable)."
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="How many frameworks to list.")] = 5,
    json_out: JsonOpt = False,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="For a sentence: each candidate's score parts and matched terms (with field "
            "and weight), and why the runner-up lost.",
        ),
    ] = False,
    evals: Annotated[
        Path | None,
        typer.Option(
            "--eval",
            metavar="PATH",
            help="Route every query of a skill-creator trigger-eval file (or of each *.json in "
            "a folder) and print top-1, top-3, abstention and false-trigger rates per skill "
            "and overall, with the worst misses.",
        ),
    ] = None,
    registry: RegistryReadOpt = None,
    neo4j_uri: Neo4jReadOpt = None,
    report_format: FormatOpt = "human",
) -> int:
    """Rank the registered frameworks for a context.

    A sentence: 1.0 x text relevance (BM25F over name, description, triggers, problem
    types and the SKILL.md body's prose, 0..1; clauses such as "not for ..." count
    against) + 0.4 x the GOOD_FOR confidence of a problem type given or wholly named + 0.3
    x CHAINS_TO weight from the --previous frameworks + 0.2 x (observed success rate -
    0.5); a framework with relevance at most 0.02 and no matching problem type is no
    match (README, Selection, gives the weights). --trigger: 0.6 for
    a trigger match (+0.1 per further one, up to three) instead of the text part. Ties
    go to the higher relevance, then the id.
    """
    from builder.graph.commands import open_project_registry, select_json, select_table

    json_out = checked_format(ctx, report_format, ("human", "json")) == "json" or json_out
    if text is not None and triggers:
        raise UsageError("give a sentence or --trigger, not both", code="U015")
    if evals is not None:
        return _select_eval(evals, json_out, limit, registry, neo4j_uri, text, triggers, explain)
    if explain and not text:
        raise UsageError("--explain needs a sentence", code="U026")
    if not text and not triggers and not problem_types:
        raise UsageError(
            "give a sentence, or at least one --trigger or --problem-type", code="U005"
        )
    root = project_root(Path.cwd())
    opened = open_project_registry(root, registry, neo4j_uri, display=lambda p: display(p, root))
    if opened.note:
        err(opened.note)
    with opened.registry as graph:
        if text and explain:
            from builder.graph.explain import explain_text

            ranked = graph.rank_text(text, problem_types or (), previous or (), limit, True)
            typer.echo(explain_text(ranked) if ranked else "no registered framework matches\n")
            return 0
        if text:
            found = graph.select_text(text, problem_types or (), previous or (), limit)
        else:
            found = graph.select(triggers or (), problem_types or (), previous or (), limit)
    if json_out:
        typer.echo(
            select_json(
                found,
                opened.where,
                triggers or (),
                problem_types or (),
                previous or (),
                limit,
                text=text,
            )
        )
    elif found:
        typer.echo(select_table(found), nl=False)
    else:
        err(f"no registered framework matches (registry {opened.where})")
    return 0


def _select_eval(
    path: Path,
    json_out: bool,
    limit: int,
    registry: Path | None,
    neo4j_uri: str | None,
    text: str | None,
    triggers: list[str] | None,
    explain: bool,
) -> int:
    """``select --eval``: route every query of the trigger evals, print the rates."""
    import json

    from builder.graph.commands import open_project_registry
    from builder.graph.route_eval import read_evals, run_evals

    if text or triggers or explain:
        raise UsageError("--eval takes no sentence, --trigger or --explain", code="U026")
    root = project_root(Path.cwd())
    cases = read_evals(path if path.is_absolute() else Path.cwd() / path, _folder_id(root))
    opened = open_project_registry(root, registry, neo4j_uri, display=lambda p: display(p, root))
    if opened.note:
        err(opened.note)
    with opened.registry as graph:
        report = run_evals(cases, lambda query: graph.select_text(query, limit=max(limit, 3)))
    if json_out:
        typer.echo(json.dumps(report.plain(), indent=2, ensure_ascii=False))
    else:
        typer.echo(report.table(), nl=False)
    return 0


def _folder_id(root: Path) -> Callable[[Path], str | None]:
    """The agent id phase 1 gives the skill in a folder (None when none builds there), so
    ``skills/pws/evals/*.json`` is scored against ``pws-validation``, the id pws builds to."""
    from builder.orchestration.project import load_config
    from builder.orchestration.runner import identity
    from builder.phases import load_phase
    from builder.pipeline.errors import SkillError
    from builder.skill.source import load_source

    config = load_config(root)

    def agent_id(folder: Path) -> str | None:
        if not any((folder / name).is_file() for name in ("SKILL.md", "CHAIN.md")):
            return None
        try:
            known = identity(load_source(folder), config, store=None, phases=load_phase)
        except SkillError:
            return None
        return known[0] if known is not None else None

    return agent_id


graph_app = typer.Typer(
    name="graph",
    help="Work with the framework registry graph.",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

_EXAMPLES_EXPORT = """\
Examples:

\b
  mindrian graph export > registry.yaml
  mindrian graph export --format json
  mindrian graph export --format cypher | cypher-shell -u neo4j
"""


@graph_app.command("export", epilog=_EXAMPLES_EXPORT)
def graph_export(
    fmt: Annotated[
        str, typer.Option("--format", "-f", metavar="FORMAT", help="yaml, json or cypher.")
    ] = "yaml",
    registry: RegistryReadOpt = None,
    neo4j_uri: Neo4jReadOpt = None,
) -> int:
    """Print every registered framework and its relationships.

    yaml and json have the layout of generated/registry.yaml; cypher is a
    parameter-free script (values as escaped literals) that re-creates the graph.
    """
    from builder.graph.commands import open_project_registry
    from builder.graph.export import EXPORT_FORMATS, export_text

    if fmt not in EXPORT_FORMATS:
        raise UsageError(
            f"unknown format {fmt!r}; expected one of {', '.join(EXPORT_FORMATS)}", code="U010"
        )
    root = project_root(Path.cwd())
    opened = open_project_registry(root, registry, neo4j_uri, display=lambda p: display(p, root))
    if opened.note:
        err(opened.note)
    with opened.registry as graph:
        records = graph.export()
    typer.echo(export_text(records, fmt), nl=False)
    return 0


@graph_app.command("rebuild")
def graph_rebuild() -> int:
    """Rebuild the registry database from generated/registry.yaml (Neo4j when NEO4J_URI is set).

    The fix when a command reports the database empty, damaged or from another
    version (G012): registry.yaml is the reviewed source of truth, the database
    an index built from it.
    """
    from builder.graph.commands import rebuild_registry

    root = project_root(Path.cwd())
    err(rebuild_registry(ProjectPaths(root), display=lambda p: display(p, root)))
    return 0
