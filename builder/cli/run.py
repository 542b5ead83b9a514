"""``mindrian run`` and ``mindrian serve``: thin wrappers over mindrian.run and mindrian.serve."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from builder.cli.common import workspace_folder
from builder.cli.options import (
    ApproveOpt,
    BaseUrlOpt,
    HostOpt,
    InsecureOpt,
    MaxTokensOpt,
    ModelOpt,
    NoThinkingOpt,
    PortOpt,
    RecordOpt,
    TemperatureOpt,
    WorkspaceOpt,
)
from builder.pipeline.errors import AgentCommandError, UsageError

if TYPE_CHECKING:
    import socket

    from mindrian.model_choice import ModelChoice
    from mindrian.model_settings import SettingsOverride
    from mindrian.project import ProjectPaths
    from mindrian.recording import Recording
    from mindrian.serve import ServeConfig

__all__ = ["register_run_commands"]

_EXAMPLES_RUN = """\
Examples:

\b
  mindrian run pws-validation "Lab equipment resale" --model scripted:examples/pws.yaml
  mindrian run larry "I want to validate my startup idea" --session founder-1
  mindrian run lean-canvas "Office coffee subscription" --session c1   # answer steps on stdin
  mindrian run lean-canvas --session c1                                # resume it later
  MINDRIAN_MODEL=openai:gpt-4o mindrian run deep-research "EV charging in rural France" --json
  mindrian run deep-research "EV charging" --model openai-chat:smollm2 \\
      --base-url http://127.0.0.1:8080/v1 --max-tokens 256 --no-thinking
"""

_EXAMPLES_SERVE = """\
Examples:

\b
  mindrian serve
  mindrian serve --port 8000 --model scripted:examples/pws.yaml
  mindrian serve --model openai-chat:qwen2.5 --base-url http://127.0.0.1:11434/v1
  OS_SECURITY_KEY=... mindrian serve --db postgresql+psycopg://db:5432/mindrian --host 0.0.0.0
  JWT_VERIFICATION_KEY="$(cat public.pem)" mindrian serve --host 0.0.0.0
  curl -X POST localhost:7777/agents/pws-validation/runs -F message='Validate ...' -F stream=false
"""


def register_run_commands(app: typer.Typer) -> None:
    """Add ``run`` and ``serve`` to the ``mindrian`` command."""
    app.command(name="run", epilog=_EXAMPLES_RUN)(run)
    app.command(name="serve", epilog=_EXAMPLES_SERVE)(serve)


def run(
    ctx: typer.Context,
    agent_id: Annotated[
        str,
        typer.Argument(metavar="AGENT_ID", help="Id of a registered agent.", show_default=False),
    ],
    message: Annotated[
        str | None,
        typer.Argument(
            metavar="[MESSAGE]",
            help="The task; for an open guided session, the answer to its step.",
            show_default=False,
        ),
    ] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    max_tokens: MaxTokensOpt = None,
    temperature: TemperatureOpt = None,
    no_thinking: NoThinkingOpt = False,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            metavar="ID",
            help="Session to continue (role history, guided progress, pipeline checkpoints).",
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the HandoffResult as JSON.")
    ] = False,
    clarity: Annotated[
        float,
        typer.Option(
            "--clarity",
            metavar="N",
            min=0.0,
            max=1.0,
            help="How clear the problem is (what, who, success; 0-1); agents refuse a handoff "
            "below their minimum with needs_clarification.",
        ),
    ] = 1.0,
    frames: Annotated[
        bool,
        typer.Option(
            "--frames",
            help="Also print control frames on stdout: READY when the agent starts, "
            "HANDOFF/ERROR/READY for each handoff it makes.",
        ),
    ] = False,
    record: RecordOpt = None,
    workspace: WorkspaceOpt = None,
    approve: ApproveOpt = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="Approve every host tool call without asking.")
    ] = False,
) -> int:
    """Run a generated agent and print its output; exit status 1 when the result failed.

    The agent is loaded by id from generated/registry.yaml. Guided agents ask
    each step's question on stderr and read the answer from stdin ('back' and
    'skip' work); at the end of input the session waits, resumable with --session.
    Pipeline agents report each phase on stderr. Host tool calls that no rule of
    the skill allows are asked about on the terminal (y/N); each call is shown on
    stderr, and --json lists them under tool_calls.
    """
    from mindrian.host import RuleError, parse_rules
    from mindrian.request_limits import SESSION_ID_PATTERN
    from mindrian.run import RunRequest, run_agent

    if session is not None and not SESSION_ID_PATTERN.fullmatch(session):
        # The rule of the HTTP routes (400 there): a session id names files in the state folder.
        raise UsageError(
            f"--session {session[:80]!r}: 1-128 letters, digits, '.', '_' or '-', starting with "
            "a letter or digit",
            code="U043",
        )
    try:
        parse_rules(approve or ())
    except RuleError as error:
        raise UsageError(f"--approve {error}", code="X008") from error
    if not getattr(ctx.obj, "debug", False):
        _quiet_agno()
    from mindrian.recording import Recording

    override = _override(max_tokens, temperature, no_thinking)
    recording = Recording() if record is not None else None
    project, choice = _project_and_model(model, base_url, override, recording)
    request = RunRequest(
        project, agent_id, message, choice, session, json_out, frames=frames, clarity=clarity,
        workspace=workspace_folder(workspace), approve=tuple(approve or ()), approve_all=yes,
    )  # fmt: skip
    try:
        return run_agent(request, stdin=sys.stdin, stdout=sys.stdout, stderr=sys.stderr)
    except LookupError as error:  # unknown agent id, missing package
        raise AgentCommandError(str(error), code="X001") from error
    finally:
        if recording is not None and record is not None:
            recording.write(record)


def serve(
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 7777,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            metavar="URL",
            help="Session database: postgresql+psycopg://... or sqlite:///... "
            "[default: $MINDRIAN_DB_URL, else .mindrian/sessions.db].",
        ),
    ] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    max_tokens: MaxTokensOpt = None,
    temperature: TemperatureOpt = None,
    no_thinking: NoThinkingOpt = False,
    insecure: InsecureOpt = False,
    host_tools: Annotated[
        bool | None,
        typer.Option(
            "--host-tools/--no-host-tools",
            help="Give agents the host tools their packages grant (Bash, Read…), each user in a "
            "folder of their own under --workspace; calls no rule allows wait for the client "
            "[default: host-tools in [tool.mindrian.serve], else off].",
            show_default=False,
        ),
    ] = None,
    workspace: WorkspaceOpt = None,
) -> int:
    """Serve every registered agent with AgentOS (FastAPI) until interrupted.

    Each agent keeps its guarantees behind AgentOS's routes: a schema-breaking
    answer is a failed run, a missing required MCP server refuses the run, a
    failed pipeline phase stops it, and a guided run pauses at every step
    (continue it with POST /agents/ID/runs/RUN_ID/continue).

    Authentication is AgentOS's: OS_SECURITY_KEY (one bearer key), or
    JWT_VERIFICATION_KEY / JWT_JWKS_FILE (the user is the token's sub; each user
    sees only their own sessions, the agent_os:admin scope sees all;
    MINDRIAN_JWT_ALGORITHM=HS256 for a shared secret, default RS256). A --host
    other than loopback is refused without one of them, unless --insecure.
    """
    import os

    from builder.orchestration.serve_settings import load_serve_settings
    from mindrian.serve import (
        ExposedWithoutAuthError,
        ServeConfig,
        check_exposure,
        host_tool_warnings,
        run_server,
        unusable_models,
    )

    override = _override(max_tokens, temperature, no_thinking)
    project, choice = _project_and_model(model, base_url, override)
    if host_tools is None:
        host_tools = load_serve_settings(project.root).host_tools
    config = ServeConfig(
        project, choice, db_url=db, host=host, port=port, insecure=insecure,
        host_tools=host_tools, workspace=workspace_folder(workspace),
    )  # fmt: skip
    try:
        warning = check_exposure(config, os.environ)
    except ExposedWithoutAuthError as error:
        raise AgentCommandError(str(error), code="X006") from error
    if warning is not None:
        typer.echo(warning, err=True)
    # First: a port in use is known before anything is built or written.
    sock = _listening(host, port)
    try:
        app = _app(config)
    except BaseException:
        sock.close()
        raise
    for line in unusable_models(config):
        typer.echo(f"warning: {line}", err=True)
    for line in host_tool_warnings(config):
        typer.echo(line, err=True)
    typer.echo(f"serving {config.project.root} on http://{host}:{port}", err=True)
    run_server(app, sock)
    return 0


def _listening(host: str, port: int) -> socket.socket:
    """The socket ``serve`` will listen on; X010 when the port is in use or not ours to take."""
    from mindrian.serve import listen

    try:
        return listen(host, port)
    except OSError as error:
        reason = error.strerror or str(error)
        raise AgentCommandError(
            f"cannot listen on {host}:{port}: {reason} (another server holds it? try --port)",
            code="X010",
        ) from None


def _app(config: ServeConfig) -> Any:
    """The AgentOS app of ``config``; what stops it as a coded error."""
    from mindrian.serve import DatabaseUnusableError, build_app

    try:
        return build_app(config)
    except LookupError as error:
        raise AgentCommandError(str(error), code="X001") from error
    except ValueError as error:  # a database URL of another kind
        raise AgentCommandError(str(error), code="X003") from error
    except DatabaseUnusableError as error:
        raise AgentCommandError(str(error), code="X007") from error


def _quiet_agno() -> None:
    """Agno's warnings (a failed parse, an errored run) repeat what the result's error says; its
    errors go to stderr (without a terminal Agno writes them to stdout, where --json is)."""
    import logging  # only agent commands pay for it, not every command line

    # A filter, not a level: Agno sets its loggers back to INFO at the start of every run.
    for name in ("agno", "agno-team", "agno-workflow"):
        logger = logging.getLogger(name)
        logger.addFilter(lambda record: record.levelno >= logging.ERROR)
        for handler in logger.handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream is sys.stdout:
                handler.setStream(sys.stderr)


def _override(
    max_tokens: int | None, temperature: float | None, no_thinking: bool
) -> SettingsOverride:
    from mindrian.model_settings import SettingsOverride

    return SettingsOverride(temperature, max_tokens, no_thinking)


def _project_and_model(
    model: str | None,
    base_url: str | None,
    override: SettingsOverride,
    recording: Recording | None = None,
) -> tuple[ProjectPaths, ModelChoice]:
    from mindrian.model_choice import ModelScriptError, choose_model
    from mindrian.project import ProjectNotFoundError, ProjectPaths

    try:
        project = ProjectPaths.locate(Path.cwd())
        choice = choose_model(
            model, base=Path.cwd(), base_url=base_url, override=override, recording=recording
        )
        return project, choice
    except ProjectNotFoundError as error:
        raise AgentCommandError(str(error), code="X001") from error
    except ModelScriptError as error:
        raise AgentCommandError(str(error), code="X002") from error
