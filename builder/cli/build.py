"""``mindrian build`` and ``mindrian register``: each maps its options to one
:class:`BatchRequest` and runs it through :func:`builder.orchestration.batch.build_many`,
printing as it goes.

``--frames`` adds control frames for tools that drive the command in a terminal. The human
lines stay on stderr, so a tool reading stdout sees frames only, one per line; with
``--frames`` those lines pass through :func:`mindrian.frames.defuse`, so where a terminal
merges both streams no text quoted from a SKILL.md can pose as a frame.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from builder.cli.common import (
    CliState,
    annotate,
    annotate_warning,
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
from builder.cli.options import (
    AllOpt,
    CheckpointsOpt,
    FormatOpt,
    FramesOpt,
    JobsOpt,
    JsonOpt,
    Neo4jWriteOpt,
    OutOpt,
    PathsArg,
    QuietOpt,
    RegistryWriteOpt,
    ShardOpt,
    TimingsOpt,
)
from builder.cli.targets import no_skills_note, progress_bar, targets
from builder.pipeline.errors import CompilerError, UsageError
from mindrian.project import ProjectPaths

if TYPE_CHECKING:
    from builder.orchestration.batch import BatchOptions, Listener
    from builder.phases.registration import RegistrationPhase
    from builder.pipeline.build_results import BuildReport
    from builder.pipeline.config import BuildConfig

__all__ = ["BatchRequest", "register_build_commands", "run_request"]

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

_EXAMPLES_REGISTER = """\
Examples:

\b
  mindrian register skills/pws/SKILL.md
  mindrian register --all
  NEO4J_USERNAME=neo4j NEO4J_PASSWORD=... mindrian register --all --neo4j-uri bolt://localhost:7687
"""


def register_build_commands(app: typer.Typer) -> None:
    """Add ``build`` and ``register`` to the ``mindrian`` command."""
    app.command(name="build", epilog=_EXAMPLES_BUILD)(build)
    app.command(name="register", epilog=_EXAMPLES_REGISTER)(register)


@dataclass(frozen=True)
class BatchRequest:
    """What ``build`` or ``register`` asks for, mapped from its command line."""

    paths: tuple[Path, ...] = ()
    """The SKILL.md files, skill folders or plugin roots named."""
    all_skills: bool = False
    """``--all``: every skill of the project."""
    out: Path | None = None
    """``--out``: the output folder [default: the project's generated/]."""
    checkpoints: Path | None = None
    """``--checkpoints``: the checkpoint folder [default: the project's]."""
    from_phase: str | None = None
    """``--from``: re-run from this phase."""
    until_phase: str | None = None
    """``--until``: stop after this phase."""
    force: bool = False
    """``--force``: run every phase even when its checkpoint is current."""
    reregister: bool = False
    """``register``: phase 7 runs even when its checkpoint is current."""
    connect: bool = False
    """``--connect``: phase 4 connects to MCP servers."""
    neo4j_uri: str | None = None
    """``--neo4j-uri``: phase 7 writes to Neo4j."""
    registry: Path | None = None
    """``--registry``: phase 7 writes to this embedded database."""
    shard: str | None = None
    """``--shard K/N``: only this shard of the skills."""
    jobs: int | None = None
    """``--jobs``: parallel processes [default: one per core]."""
    quiet: bool = False
    """``--quiet``: only failures and the summary."""
    timings: bool = False
    """``--timings``: each phase's time."""
    json_out: bool = False
    """``--json`` (or ``--format json``): the report as JSON on stdout."""
    frames: bool = False
    """``--frames``: control frames on stdout."""
    github: bool = False
    """``--format github``: each failed skill also as an annotation."""
    stage: str = "build"
    """The command, as progress lines and frames name it."""


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
    shown = checked_format(ctx, report_format, ("human", "github", "json"))
    request = BatchRequest(
        paths=tuple(paths or ()),
        all_skills=all_skills,
        out=out,
        checkpoints=checkpoints,
        from_phase=from_phase,
        until_phase=until_phase,
        force=force,
        connect=connect,
        neo4j_uri=neo4j_uri,
        registry=registry,
        shard=shard,
        jobs=jobs,
        quiet=quiet,
        timings=timings,
        json_out=json_out or shown == "json",
        frames=frames,
        github=shown == "github",
    )
    return run_request(ctx, request)


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
    shown = checked_format(ctx, report_format, ("human", "json"))
    request = BatchRequest(
        paths=tuple(paths or ()),
        all_skills=all_skills,
        out=out,
        checkpoints=checkpoints,
        reregister=True,
        neo4j_uri=neo4j_uri,
        registry=registry,
        jobs=jobs,
        quiet=quiet,
        timings=timings,
        json_out=json_out or shown == "json",
        frames=frames,
        stage="register",
    )
    return run_request(ctx, request)


def run_request(ctx: typer.Context, request: BatchRequest) -> int:
    """Build (or register) what ``request`` names and print as it goes; the exit status."""
    from builder.orchestration.runner import phase_range
    from builder.orchestration.shard import Shard
    from builder.phases import PHASE_NAMES

    framed = use_frames(ctx, request.stage, request.frames, request.json_out)
    require_build_extra(request.stage)
    phase_range(request.from_phase, request.until_phase)
    root = project_root(Path.cwd())
    chosen = Shard(1, 1) if request.shard is None else Shard.parse(request.shard)
    found, outside = targets(list(request.paths), request.all_skills, root, say(framed))
    if not found:
        say(framed)(no_skills_note(root))
    chosen_paths = [p for p in found if chosen.owns(display(p, root))]
    out_dir = (request.out or ProjectPaths(root).generated).absolute()
    options = _batch_options(root, out_dir, request, ctx.ensure_object(CliState).debug)
    config = project_config(
        root, connect=request.connect, neo4j_uri=request.neo4j_uri, out_dir=str(out_dir)
    )
    last = phase_range(None, request.until_phase)[1]
    # Only a build of every skill through phase 7 can tell a framework whose skill is gone.
    whole = request.all_skills and request.shard is None and request.from_phase is None
    return _run_batch(
        root,
        chosen_paths,
        config,
        options,
        request,
        framed=framed,
        # A skill behind a link out of the project exists: its package must not be retired.
        retire=not request.reregister and whole and not outside and last == len(PHASE_NAMES),
        publish=not request.reregister and last == PHASE_NAMES.index("code_generation") + 1,
    )


def _batch_options(root: Path, out_dir: Path, request: BatchRequest, debug: bool) -> BatchOptions:
    from builder.orchestration.batch import BatchOptions, default_jobs

    return BatchOptions(
        checkpoints_dir=(request.checkpoints or ProjectPaths(root).checkpoints).absolute(),
        out_dir=out_dir,
        jobs=request.jobs or default_jobs(),
        from_phase=request.from_phase,
        until_phase=request.until_phase,
        force=request.force,
        reregister=request.reregister,
        debug=debug,
    )


def _run_batch(
    root: Path,
    paths: Sequence[Path],
    config: BuildConfig,
    options: BatchOptions,
    request: BatchRequest,
    *,
    framed: bool,
    retire: bool,
    publish: bool,
) -> int:
    """Build ``paths`` and print as it goes; ``retire`` then removes what skills no longer in
    ``paths`` left installed; ``publish`` (a build stopped after phase 6) installs the tested
    packages, unregistered."""
    from builder.cli.listeners import FramePrinter, ProgressPrinter
    from builder.orchestration.batch import Target, build_many
    from builder.orchestration.runner import phase_range
    from builder.phases import PHASE_NAMES
    from builder.pipeline.report import build_json, warning_lines
    from builder.pipeline.transaction import output_lock, publish_ready

    if request.registry is not None and config.neo4j_uri:
        raise UsageError("give --registry or --neo4j-uri, not both", code="U008")
    _refuse_unusable(config, options)
    batch = [Target(path=p, display=display(p, root)) for p in paths]
    printed = say(framed)
    machine = request.json_out or framed
    bar = progress_bar(len(batch), quiet=request.quiet or request.timings, machine=machine)
    listener: Listener = bar or ProgressPrinter(
        printed,
        quiet=request.quiet,
        timings=request.timings,
        options=options,
        prefix=request.stage,
    )
    if framed:
        listener = FramePrinter(listener, request.stage, frame)
    output = ProjectPaths(root, options.out_dir)
    registration = _registration(request.registry)
    # Phases 1-5 write only checkpoints (atomically); phase 6 on stages the output's packages.
    writes = phase_range(None, options.until_phase)[1] > PHASE_NAMES.index("code_generation")
    held = output_lock(output, lambda line: printed(f"note: {line}"))
    with held if writes else contextlib.nullcontext():
        try:
            reports = build_many(
                batch, config, options, listener=listener, registration=registration
            )
        finally:
            if bar is not None:
                bar.close()
        if publish:
            built = {r.agent_id for r in reports if r.agent_id and not r.problem}
            publish_ready(output, built)
        removed = _retire(reports, config, registration, printed) if retire else ()
    for framework_id in removed:
        printed(f"removed {framework_id}: its skill is gone (unregistered, package deleted)")
    if len(reports) > 1 and not request.quiet:
        failed = sum(1 for r in reports if r.problem)
        printed(f"{len(reports) - failed} built, {failed} failed")
    if request.json_out:
        typer.echo(build_json(reports, removed))
    for report in reports if request.github else ():
        if report.problem is not None:
            annotate(report.problem, report.path)
        warnings = (w for phase in report.phases for w in phase.warnings)
        for line in warning_lines(warnings, report.path):
            annotate_warning(line)
    return max((r.exit_code for r in reports), default=0)


def _retire(
    reports: Sequence[BuildReport],
    config: BuildConfig,
    registration: RegistrationPhase | None,
    printed: Callable[[str], None],
) -> tuple[str, ...]:
    """Retire what skills no longer in the batch left installed; the ids removed.

    A retire failing with a problem a skill's phase 7 already printed (a registry.yaml that
    cannot be read stops both alike) removes nothing and is not printed again: that skill's
    report already carries the problem and its exit status.
    """
    from builder.orchestration.batch import retire_removed, retire_waits
    from builder.pipeline.results import problem_of

    if retire_waits(reports, config):
        printed(
            "note: packages of skills no longer here stay installed until every skill gets past "
            "phase 1 (a failing skill might be their owner); the next such build --all retires them"
        )
    try:
        return retire_removed(reports, config, registration)
    except CompilerError as error:
        if problem_of(error) not in {r.problem for r in reports}:
            raise
        return ()


def _refuse_unusable(config: BuildConfig, options: BatchOptions) -> None:
    """Refuse before building: credentials in a Neo4j URI, an output folder that is a file."""
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
