"""The ``mindrian`` command line.

Each command is a thin wrapper: it resolves paths against the project root,
calls one library function and prints the report. Heavy modules (the phases,
YAML and schema libraries, Agno) are imported inside the commands, so
``mindrian --help`` only pays for Typer. Exit statuses are documented in
:mod:`builder.pipeline.results`: 0 ok, 1 invalid input or failed check, 2 usage, 3 bug.

``--frames`` (build, register, check) adds control frames for tools that drive
the command in a terminal. The human lines stay on stderr, so a tool reading
stdout sees frames only, one per line; with ``--frames`` those lines pass
through :func:`mindrian.frames.defuse`, so where a terminal merges both streams
no text quoted from a SKILL.md can pose as a frame.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tomllib
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from builder import __version__
from builder.cli.extra import require_build_extra
from builder.cli.options import (
    AllOpt,
    CheckpointsOpt,
    FormatOpt,
    FramesOpt,
    JobsOpt,
    JsonOpt,
    Neo4jReadOpt,
    Neo4jWriteOpt,
    OutOpt,
    PathsArg,
    QuietOpt,
    RegistryReadOpt,
    RegistryWriteOpt,
    ShardOpt,
    TimingsOpt,
)
from builder.cli.workflow import workflow_app
from builder.pipeline.errors import MindrianError
from mindrian.project import ProjectPaths

if TYPE_CHECKING:
    from builder.cli.progress import ProgressBar
    from builder.orchestration.batch import BatchOptions, Listener
    from builder.orchestration.check import CheckResult
    from builder.orchestration.shard import Shard
    from builder.phases.registration import RegistrationPhase
    from builder.pipeline.config import BuildConfig
    from builder.pipeline.results import BuildReport, Problem, ValidationReport
    from mindrian.frames import Frame

__all__ = ["app", "main", "project_root"]

_EXAMPLES_BUILD = """\
Examples:

\b
  mindrian build skills/pws/SKILL.md
  mindrian build --all --quiet
  mindrian build skills/pws --from architecture --until tool_assembly
  mindrian build skills/pws/SKILL.md --force --timings
  mindrian build --all --json > build-report.json
  mindrian build --all --shard 1/4
  mindrian build skills/pws/SKILL.md --frames --quiet
"""

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


@dataclass
class _State:
    """Global switches, shared with ``main`` so it knows how to report a crash."""

    debug: bool = False
    """Show tracebacks of internal errors."""
    frames: str | None = None
    """Stage named by the closing DONE frame (``build``, ``register``, ``check``); None without
    ``--frames``."""
    json: bool = False
    """``--json`` is among the arguments: an error that stops the command before its report is
    also printed as a JSON object on stdout, so a script always gets one."""
    github: bool = False
    """``--format github``: every problem is also printed as a GitHub annotation on stdout."""


def _report_format(ctx: typer.Context, value: str, allowed: tuple[str, ...]) -> str:
    """Check ``--format`` against what the command offers and note it for error reporting."""
    from builder.pipeline.errors import UsageError

    if value not in allowed:
        raise UsageError(
            f"--format {value!r}: this command prints {', '.join(allowed)}", code="U041"
        )
    state = ctx.ensure_object(_State)
    state.github = value == "github"
    state.json = state.json or value == "json"
    return value


def _annotate(problem: Problem, path: str | None = None) -> None:
    """Print ``problem`` as a GitHub annotation on stdout (at ``path`` when it has no place)."""
    from builder.pipeline.annotations import Annotation, github_line
    from builder.pipeline.errors import SourceLocation

    where = problem.location or (SourceLocation(path) if path else None)
    typer.echo(github_line(Annotation(problem.code, problem.message, where)))


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
    ctx.ensure_object(_State).debug = debug


def project_root(start: Path) -> Path:
    """The nearest folder from ``start`` upwards whose pyproject.toml has ``[tool.mindrian]``,
    else ``start``."""
    for folder in (start, *start.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                table = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            tool = table.get("tool")
            if isinstance(tool, dict) and "mindrian" in tool:
                return folder
    return start


def _display(path: Path, root: Path) -> str:
    """How a path appears in messages and generated headers: relative to the root when inside it."""
    from builder.cli.listeners import display_path

    return display_path(path, root)


def _skill_file(path: Path) -> Path:
    from builder.skill.chain_layout import skill_file

    return skill_file(path)


def _err(line: str) -> None:
    """Print one human line on stderr (control characters escaped: it may quote a skill)."""
    from builder.pipeline.terminal import terminal_line

    typer.echo(terminal_line(line), err=True)


def _out(line: str) -> None:
    """Print one human line on stdout, escaped like :func:`_err`."""
    from builder.pipeline.terminal import terminal_line

    typer.echo(terminal_line(line))


def _defused_err(line: str) -> None:
    from mindrian.frames import defuse

    _err(defuse(line))


def _say(frames: bool) -> Callable[[str], None]:
    """How human lines are printed: defused when frames share the terminal."""
    return _defused_err if frames else _err


def _frame(frame: Frame) -> None:
    typer.echo(frame.to_text())


def _use_frames(ctx: typer.Context, stage: str, frames: bool, json_out: bool = False) -> bool:
    """Switch ``--frames`` on for ``stage``; ``--json`` cannot share stdout with it."""
    from builder.pipeline.errors import UsageError

    if frames:
        ctx.ensure_object(_State).frames = stage
        if json_out:
            raise UsageError(
                "give --json or --frames, not both: each needs stdout to itself", code="U014"
            )
    return frames


def _config(root: Path, **switches: object) -> BuildConfig:
    from builder.orchestration.project import load_config

    return load_config(root).with_switches(**switches)


@app.command(epilog=_EXAMPLES_BUILD)
def build(
    ctx: typer.Context,
    paths: PathsArg = None,
    all_skills: AllOpt = False,
    out: OutOpt = None,
    checkpoints: CheckpointsOpt = None,
    from_phase: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="PHASE",
            help="Re-run from this phase (name or number); earlier ones come from checkpoints.",
        ),
    ] = None,
    until_phase: Annotated[
        str | None, typer.Option("--until", metavar="PHASE", help="Stop after this phase.")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Run every phase even when its checkpoint is current.")
    ] = False,
    json_out: JsonOpt = False,
    timings: TimingsOpt = False,
    connect: Annotated[
        bool,
        typer.Option(
            "--connect",
            help="Phase 4 connects to MCP servers instead of checking their configuration.",
        ),
    ] = False,
    neo4j_uri: Neo4jWriteOpt = None,
    registry: RegistryWriteOpt = None,
    shard: ShardOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    frames: FramesOpt = False,
    report_format: FormatOpt = "human",
) -> int:
    """Build SKILL.md files through the seven phases.

    Each phase is skipped when its inputs are unchanged since its last
    passing checkpoint; a failed check stops the build (exit status 1) and
    the next build resumes at that phase. Phases 1-6 of different skills run
    in parallel (--jobs); phase 7 registers them one by one in the given order.
    A failing skill does not stop the others.
    """
    from builder.orchestration.runner import phase_range
    from builder.phases import PHASE_NAMES

    json_out = _report_format(ctx, report_format, ("human", "github", "json")) == "json" or json_out
    framed = _use_frames(ctx, "build", frames, json_out)
    require_build_extra("build")
    phase_range(from_phase, until_phase)
    root = project_root(Path.cwd())
    chosen = _shard(shard)
    targets = [p for p in _targets(paths, all_skills, root) if chosen.owns(_display(p, root))]
    out_dir = (out or ProjectPaths(root).generated).absolute()
    options = _batch_options(
        root,
        out_dir,
        checkpoints,
        jobs,
        from_phase=from_phase,
        until_phase=until_phase,
        force=force,
        debug=ctx.ensure_object(_State).debug,
    )
    config = _config(root, connect=connect, neo4j_uri=neo4j_uri, out_dir=str(out_dir))
    # Only a build of every skill through phase 7 can tell a framework whose skill is gone.
    whole = all_skills and shard is None and from_phase is None
    return _run_batch(
        root,
        targets,
        config,
        options,
        registry,
        quiet=quiet,
        timings=timings,
        json_out=json_out,
        frames=framed,
        retire=whole and phase_range(None, until_phase)[1] == len(PHASE_NAMES),
        publish=phase_range(None, until_phase)[1] == PHASE_NAMES.index("code_generation") + 1,
        annotate=report_format == "github",
    )


def _shard(text: str | None) -> Shard:
    from builder.orchestration.shard import Shard

    return Shard(1, 1) if text is None else Shard.parse(text)


def _batch_options(
    root: Path,
    out_dir: Path,
    checkpoints: Path | None,
    jobs: int | None,
    *,
    from_phase: str | None = None,
    until_phase: str | None = None,
    force: bool = False,
    reregister: bool = False,
    debug: bool = False,
) -> BatchOptions:
    from builder.orchestration.batch import BatchOptions, default_jobs

    return BatchOptions(
        checkpoints_dir=(checkpoints or ProjectPaths(root).checkpoints).absolute(),
        out_dir=out_dir,
        jobs=jobs or default_jobs(),
        from_phase=from_phase,
        until_phase=until_phase,
        force=force,
        reregister=reregister,
        debug=debug,
    )


def _run_batch(
    root: Path,
    paths: Sequence[Path],
    config: BuildConfig,
    options: BatchOptions,
    registry: Path | None,
    *,
    quiet: bool,
    timings: bool,
    json_out: bool,
    frames: bool = False,
    prefix: str = "build",
    retire: bool = False,
    publish: bool = False,
    annotate: bool = False,
) -> int:
    """Build (or register) ``paths`` through :func:`builder.orchestration.batch.build_many` and
    print as it goes; ``retire`` then removes what skills no longer in ``paths`` left installed;
    ``publish`` (a build stopped after phase 6) installs the tested packages, unregistered."""
    from builder.cli.listeners import FramePrinter, ProgressPrinter
    from builder.orchestration.batch import Target, build_many
    from builder.orchestration.runner import phase_range
    from builder.phases import PHASE_NAMES
    from builder.pipeline.errors import UsageError
    from builder.pipeline.report import build_json
    from builder.pipeline.transaction import output_lock, publish_ready

    if registry is not None and config.neo4j_uri:
        raise UsageError("give --registry or --neo4j-uri, not both", code="U008")
    _refuse_unusable(config, options)
    targets = [Target(path=p, display=_display(p, root)) for p in paths]
    bar = _progress_bar(len(targets), quiet=quiet or timings, machine=json_out or frames)
    listener: Listener = bar or ProgressPrinter(
        _say(frames), quiet=quiet, timings=timings, options=options, prefix=prefix
    )
    if frames:
        listener = FramePrinter(listener, prefix, _frame)
    output = ProjectPaths(root, options.out_dir)
    # Phases 1-5 write only checkpoints (atomically); phase 6 on stages the output's packages.
    writes = phase_range(None, options.until_phase)[1] > PHASE_NAMES.index("code_generation")
    held = output_lock(output, lambda line: _say(frames)(f"note: {line}"))
    with held if writes else contextlib.nullcontext():
        try:
            reports = build_many(
                targets, config, options, listener=listener, registration=_registration(registry)
            )
        finally:
            if bar is not None:
                bar.close()
        if publish:
            built = {r.agent_id for r in reports if r.agent_id and not r.problem}
            publish_ready(output, built)
        removed = _retire(reports, config, _registration(registry)) if retire else ()
    for framework_id in removed:
        _say(frames)(f"removed {framework_id}: its skill is gone (unregistered, package deleted)")
    if len(reports) > 1 and not quiet:
        failed = sum(1 for r in reports if r.problem)
        _say(frames)(f"{len(reports) - failed} built, {failed} failed")
    if json_out:
        typer.echo(build_json(reports, removed))
    for report in reports if annotate else ():
        if report.problem is not None:
            _annotate(report.problem, report.path)
    return max(r.exit_code for r in reports)


def _retire(
    reports: Sequence[BuildReport], config: BuildConfig, registration: RegistrationPhase | None
) -> tuple[str, ...]:
    """Retire what skills no longer in the batch left installed; the ids removed.

    A retire failing with a problem a skill's phase 7 already printed (a registry.yaml that
    cannot be read stops both alike) removes nothing and is not printed again: that skill's
    report already carries the problem and its exit status.
    """
    from builder.orchestration.batch import retire_removed
    from builder.pipeline.results import problem_of

    try:
        return retire_removed(reports, config, registration)
    except MindrianError as error:
        if problem_of(error) not in {r.problem for r in reports}:
            raise
        return ()


def _progress_bar(count: int, *, quiet: bool, machine: bool) -> ProgressBar | None:
    """A progress bar for several skills when stderr is a terminal; None for line output.

    ``quiet`` (``--quiet``, ``--timings``) and ``machine`` (``--json``, ``--frames``)
    ask for lines, as does a single skill, whose phase lines say as much.
    """
    if count < 2 or quiet or machine or not sys.stderr.isatty():
        return None
    from builder.cli.progress import ProgressBar

    return ProgressBar(count, sys.stderr)


def _refuse_unusable(config: BuildConfig, options: BatchOptions) -> None:
    """Refuse before building: credentials in a Neo4j URI, an output folder that is a file."""
    from builder.pipeline.errors import UsageError

    uri = config.neo4j_uri or os.environ.get("NEO4J_URI")
    if uri:
        # Only with a URI: the graph commands import the registries' drivers.
        from builder.graph.commands import uri_credentials_problem

        problem = uri_credentials_problem(uri)
        if problem:
            raise UsageError(problem, code="U009")
    if options.out_dir.exists() and not options.out_dir.is_dir():
        raise UsageError(f"--out {options.out_dir} exists and is not a folder", code="U016")


def _registration(registry: Path | None) -> RegistrationPhase | None:
    """Phase 7 writing to ``registry`` when given, else None (the default registry)."""
    if registry is None:
        return None
    from builder.phases.registration import RegistrationPhase

    return RegistrationPhase(registry.absolute())


def _targets(paths: list[Path] | None, all_skills: bool, root: Path) -> list[Path]:
    from builder.pipeline.errors import UsageError

    if all_skills and paths:
        raise UsageError("give SKILL.md paths or --all, not both", code="U004")
    if all_skills:
        from builder.orchestration.batch import discover

        found = list(discover(root))
        if not found:
            raise UsageError(f"no skills/**/SKILL.md under {root}", code="U007")
        return found
    if not paths:
        raise UsageError("give at least one SKILL.md path, or --all", code="U005")
    return [file for p in paths for file in _expanded(p, root)]


def _expanded(path: Path, root: Path) -> list[Path]:
    """The files to build for one path: a plugin root's contents, else its skill or chain file."""
    from builder.pipeline.errors import UsageError
    from builder.skill.plugin import PLUGIN_PARTS, is_plugin_root, plugin_contents

    if not is_plugin_root(path):
        return [_skill_file(path)]
    contents = plugin_contents(path)
    if not contents:
        parts = ", ".join(f"{p}/" for p in PLUGIN_PARTS)
        where = f"the plugin {path.as_posix()!r}"
        raise UsageError(f"{where} has nothing to build in {parts}", code="U007")
    return list(contents)


@app.command(
    epilog="Examples:\n\n\b\n  mindrian validate skills/pws/SKILL.md\n  mindrian validate "
    "skills/*/SKILL.md --quiet\n"
)
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
    from builder.orchestration.runner import validate as validate_one
    from builder.pipeline.errors import UsageError
    from builder.pipeline.report import validation_line, warning_line

    annotate = _report_format(ctx, report_format, ("human", "github")) == "github"
    require_build_extra("validate")
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
            if annotate:
                _annotate(problem, report.path)
        if not report.problems and not quiet:
            for warning in report.warnings:
                _err(warning_line(warning, report.path))
            _out(validation_line(report))
        status = max(status, report.exit_code)
    return status


@app.command(
    name="fmt",
    epilog="Examples:\n\n\b\n  mindrian fmt skills\n  mindrian fmt --check skills/pws/SKILL.md\n",
)
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
    from builder.pipeline.errors import UsageError
    from builder.pipeline.results import problem_of
    from builder.skill.fmt import FormatError, format_file, skill_files

    annotate = _report_format(ctx, report_format, ("human", "github")) == "github"
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
            _err(error.render())
            if annotate:
                _annotate(problem_of(error))
            status = 1
            continue
        if result.changed:
            status = max(status, 1 if check else 0)
            if not quiet:
                _err(f"{'would reformat' if check else 'formatted'} {path}")
            if check and annotate:
                _annotate(_reformat_problem(path))
    return status


def _reformat_problem(path: Path) -> Problem:
    from builder.pipeline.errors import SourceLocation
    from builder.pipeline.results import Problem

    message = "mindrian fmt would reformat this file (run: mindrian fmt PATH)"
    return Problem("M002", message, SourceLocation(path.as_posix()))


@app.command(
    epilog="Examples:\n\n\b\n  mindrian explain pws-validation\n  mindrian explain pws-validation "
    "--json\n"
    "  mindrian explain larry --prompt\n"
)
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
    from builder.pipeline.errors import PipelineError, UsageError
    from builder.pipeline.report import explain_json, explain_text

    json_out = _report_format(ctx, report_format, ("human", "json")) == "json" or json_out

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
    from builder.pipeline.errors import PipelineError
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


@app.command(
    "diff",
    epilog="Examples:\n\n\b\n  mindrian diff\n  mindrian diff main HEAD\n"
    "  mindrian diff HEAD~1 HEAD --format json\n",
)
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
    _report_format(ctx, output_format, ("markdown", "json"))
    result = review(project_root(Path.cwd()), base, head)
    typer.echo(to_json(result) if output_format == "json" else markdown(result), nl=False)
    return 0


@app.command(epilog=_EXAMPLES_SELECT)
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
    from builder.pipeline.errors import UsageError

    json_out = _report_format(ctx, report_format, ("human", "json")) == "json" or json_out
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
    opened = open_project_registry(root, registry, neo4j_uri, display=lambda p: _display(p, root))
    if opened.note:
        _err(opened.note)
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
        _err(f"no registered framework matches (registry {opened.where})")
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
    from builder.pipeline.errors import UsageError

    if text or triggers or explain:
        raise UsageError("--eval takes no sentence, --trigger or --explain", code="U026")
    root = project_root(Path.cwd())
    cases = read_evals(path if path.is_absolute() else Path.cwd() / path, _folder_id(root))
    opened = open_project_registry(root, registry, neo4j_uri, display=lambda p: _display(p, root))
    if opened.note:
        _err(opened.note)
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
app.add_typer(graph_app)
app.add_typer(workflow_app)

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
    from builder.pipeline.errors import UsageError

    if fmt not in EXPORT_FORMATS:
        raise UsageError(
            f"unknown format {fmt!r}; expected one of {', '.join(EXPORT_FORMATS)}", code="U010"
        )
    root = project_root(Path.cwd())
    opened = open_project_registry(root, registry, neo4j_uri, display=lambda p: _display(p, root))
    if opened.note:
        _err(opened.note)
    with opened.registry as graph:
        records = graph.export()
    typer.echo(export_text(records, fmt), nl=False)
    return 0


@graph_app.command("rebuild")
def graph_rebuild() -> int:
    """Rebuild the embedded registry database from generated/registry.yaml.

    The fix when a command reports the database empty, damaged or from another
    version (G012): registry.yaml is the reviewed source of truth, the database
    an index built from it.
    """
    from builder.graph.commands import rebuild_registry

    root = project_root(Path.cwd())
    _err(rebuild_registry(ProjectPaths(root), display=lambda p: _display(p, root)))
    return 0


_EXAMPLES_REGISTER = """\
Examples:

\b
  mindrian register skills/pws/SKILL.md
  mindrian register --all
  NEO4J_USERNAME=neo4j NEO4J_PASSWORD=... mindrian register --all --neo4j-uri bolt://localhost:7687
"""


@app.command(epilog=_EXAMPLES_REGISTER)
def register(
    ctx: typer.Context,
    paths: PathsArg = None,
    all_skills: AllOpt = False,
    neo4j_uri: Neo4jWriteOpt = None,
    registry: RegistryWriteOpt = None,
    out: OutOpt = None,
    checkpoints: CheckpointsOpt = None,
    json_out: JsonOpt = False,
    timings: TimingsOpt = False,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    frames: FramesOpt = False,
    report_format: FormatOpt = "human",
) -> int:
    """Run phase 7 (registration) again, even when its checkpoint is current.

    Phases 1-6 are taken from their checkpoints when current; a skill whose
    checkpoints are missing or out of date is built first, as by 'build'.
    Registration then always runs, in the given order, so this is how a
    registry (embedded, or Neo4j) is brought back in sync; generated/registry.yaml
    is rewritten from it.
    """
    json_out = _report_format(ctx, report_format, ("human", "json")) == "json" or json_out
    framed = _use_frames(ctx, "register", frames, json_out)
    require_build_extra("register")
    root = project_root(Path.cwd())
    targets = _targets(paths, all_skills, root)
    out_dir = (out or ProjectPaths(root).generated).absolute()
    options = _batch_options(
        root, out_dir, checkpoints, jobs, reregister=True, debug=ctx.ensure_object(_State).debug
    )
    config = _config(root, neo4j_uri=neo4j_uri, out_dir=str(out_dir))
    return _run_batch(
        root,
        targets,
        config,
        options,
        registry,
        quiet=quiet,
        timings=timings,
        json_out=json_out,
        frames=framed,
        prefix="register",
    )


@app.command(
    epilog="Examples:\n\n\b\n  mindrian check\n  mindrian check --full\n"
    "  mindrian check --shard 2/4\n  mindrian check --jobs 1 --quiet\n  mindrian check --verbose\n"
    "  mindrian check --frames\n"
)
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
    from builder.orchestration.batch import Target, default_jobs, discover
    from builder.orchestration.check import check as run_check
    from builder.orchestration.check import summary
    from builder.pipeline.errors import UsageError
    from builder.pipeline.report import error_frame
    from builder.pipeline.results import DRIFT_CODE, Problem
    from builder.pipeline.terminal import terminal_text

    annotate = _report_format(ctx, report_format, ("human", "github")) == "github"
    framed = _use_frames(ctx, "check", frames)
    require_build_extra("check")
    if quiet and verbose:
        raise UsageError("give --quiet or --verbose, not both", code="U044")
    say = _say(framed)
    root = project_root(Path.cwd())
    skills = discover(root)
    if not skills:
        raise UsageError(f"no skills/**/SKILL.md under {root}", code="U007")
    targets = [Target(path=p, display=_display(p, root)) for p in skills]
    committed = root / "generated"
    chosen = _shard(shard)
    count = len(chosen.select(targets, "display"))
    bar = _progress_bar(count, quiet=quiet or verbose, machine=framed)

    committed = ProjectPaths(root).generated
    # Phase lines are progress: a CI log wants the outcome, a person watching wants to see it move.
    phase_lines = verbose or (not quiet and sys.stderr.isatty())
    listener: Listener = (
        ProgressPrinter(say, prefix="regenerate") if phase_lines else ErrorPrinter(say)
    )
    if framed:
        listener = FramePrinter(listener, "regenerate", _frame)
    try:
        result = run_check(
            root,
            targets,
            _config(root),
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
            say(line)
    elif result.diff:
        typer.echo(terminal_text(result.diff), nl=False)
    for problem in _drift_problems(result):
        say(problem.render())
    for line in summary(result, _display(committed, root)):
        say(line)
    if annotate:
        _annotate_check(result)
    if framed and result.drift:
        shown = _display(committed, root)
        message = (
            f"{len(result.drift)} file(s) in {shown} differ from a fresh build: "
            f"{', '.join(result.drift)}"
        )
        _frame(error_frame(Problem(DRIFT_CODE, message)))
    return 0 if result.clean else 1


def _drift_problems(result: CheckResult) -> list[Problem]:
    """One located D001 problem per file of ``mindrian check`` that drifted."""
    from builder.pipeline.errors import SourceLocation
    from builder.pipeline.results import DRIFT_CODE, Problem

    message = "differs from a fresh build of its skill (run: mindrian build --all, commit it)"
    return [Problem(DRIFT_CODE, message, SourceLocation(path)) for path in result.drift]


def _annotate_check(result: CheckResult) -> None:
    """Each failed build and each drifted file of ``mindrian check`` as an annotation."""
    for report in result.builds:
        if report.problem is not None:
            _annotate(report.problem, report.path)
    for problem in _drift_problems(result):
        _annotate(problem)


@app.command(
    epilog="Examples:\n\n\b\n  mindrian new pricing-check --type operator\n  mindrian new "
    "interview-coach --type role --description 'Coaches a founder through customer interviews.'\n"
)
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
            help="operator, role, collaborative, pipeline or guided (any case).",
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
    _out(_display(created, root))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mindrian`` script; returns the exit status."""
    state = _State()
    status = _dispatch(list(sys.argv[1:] if argv is None else argv), state)
    if state.frames is not None:
        from builder.pipeline.report import done_frame

        _frame(done_frame(state.frames, status))
    return status


def _dispatch(args: list[str], state: _State) -> int:
    """Run the command; every exception becomes an error line (and an ERROR frame) and an exit
    status."""
    command = typer.main.get_command(app)
    state.json = "--json" in (args[: args.index("--")] if "--" in args else args)
    try:
        with _runtime_warnings_as_lines(state):
            result = command.main(args=args, prog_name="mindrian", standalone_mode=False, obj=state)
    except typer.TyperException as error:  # usage errors found while parsing arguments
        from builder.pipeline.results import Problem

        show = getattr(error, "show", None)
        show() if callable(show) else _err(f"error: {error.format_message()}")
        problem = Problem("U001", error.format_message(), exit_code=error.exit_code)
        return _fail(state, problem, None)
    except typer.Abort:
        from builder.pipeline.results import EXIT_FAILED

        _err("aborted")
        return EXIT_FAILED
    except MindrianError as error:
        from builder.pipeline.results import problem_of

        problem = problem_of(error)
        return _fail(state, problem, problem.render())
    except OSError as error:  # the environment (disk full, read-only, name too long), not a bug
        from builder.pipeline.results import environment_problem

        problem = environment_problem(error)
        return _fail(state, problem, problem.render())
    except Exception as error:
        from builder.pipeline.report import internal_problem
        from builder.pipeline.results import EXIT_INTERNAL, exit_code_of, graph_problem

        if exit_code_of(error) != EXIT_INTERNAL:  # a registry database failure, not a bug
            problem = graph_problem(error, secrets=(os.environ.get("NEO4J_PASSWORD"),))
            return _fail(state, problem, problem.render())
        problem = internal_problem(error, _command_name(command, args))
        line = f"internal error: {problem.message}"
        if state.debug:
            traceback.print_exc()
        return _fail(state, problem, None if state.debug else line)
    from builder.pipeline.results import EXIT_INTERRUPTED, Problem

    if result == EXIT_INTERRUPTED:  # Typer's answer to KeyboardInterrupt, given without a word
        message = "interrupted; the next build finishes or undoes what was in progress"
        problem = Problem("E001", message, exit_code=EXIT_INTERRUPTED)
        return _fail(state, problem, problem.render())
    return result if isinstance(result, int) else 0


@contextlib.contextmanager
def _runtime_warnings_as_lines(state: _State) -> Iterator[None]:
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
            from mindrian.errors import MindrianWarning

            if isinstance(message, MindrianWarning):
                where = _display(Path(message.path), Path.cwd().absolute())
                _say(state.frames is not None)(
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


def _fail(state: _State, problem: Problem, line: str | None) -> int:
    """Print ``line`` (unless None) and the problem's ERROR frame (--frames) or JSON object
    (--json); returns the exit status."""
    if line is not None:
        _say(state.frames is not None)(line)
    if state.github:
        _annotate(problem)
    if state.frames is not None:
        from builder.pipeline.report import error_frame

        _frame(error_frame(problem))
    elif state.json:
        from builder.pipeline.report import error_json

        typer.echo(error_json(problem))
    return problem.exit_code


from builder.cli.init import register_init_command  # noqa: E402  (commands of their own module)
from builder.cli.mcp import register_mcp_command  # noqa: E402  (commands of their own module)
from builder.cli.run import register_run_commands  # noqa: E402  (commands of their own module)

register_init_command(app)
register_run_commands(app)
register_mcp_command(app)
