"""``mindrian mcp``: a thin wrapper over :mod:`mindrian.mcp.command`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from builder.cli.common import workspace_folder
from builder.cli.options import (
    ApproveOpt,
    BaseUrlOpt,
    HostOpt,
    InsecureOpt,
    ModelOpt,
    Neo4jReadOpt,
    PortOpt,
    RegistryReadOpt,
    WorkspaceOpt,
)
from builder.pipeline.errors import AgentCommandError, UsageError

__all__ = ["register_mcp_command"]

_EXAMPLES = """\
Examples:

\b
  mindrian mcp                                   # stdio, for an MCP host to start
  mindrian mcp --http --port 7778                # streamable HTTP on http://127.0.0.1:7778/mcp
  mindrian mcp --agents --model scripted:examples/pws.yaml
  OS_SECURITY_KEY=... mindrian mcp --http --host 0.0.0.0
"""


def register_mcp_command(app: typer.Typer) -> None:
    """Add ``mcp`` to the ``mindrian`` command."""
    app.command(name="mcp", epilog=_EXAMPLES)(mcp)


def mcp(
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP (at /mcp) instead of stdio.")
    ] = False,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 7778,
    registry: RegistryReadOpt = None,
    neo4j_uri: Neo4jReadOpt = None,
    agents: Annotated[
        bool,
        typer.Option(
            "--agents",
            help="Also serve each registered agent as a tool (a message, an optional session id).",
        ),
    ] = False,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    workspace: WorkspaceOpt = None,
    approve: ApproveOpt = None,
    insecure: InsecureOpt = False,
) -> int:
    """Serve the project to an MCP host: framework selection, its skills, and its agents.

    Tools: select_frameworks, get_framework, read_neo4j_cypher (guarded), and with
    --agents one tool per registered agent (host tool calls that no rule of the
    skill or --approve allows are denied: nobody can be asked over MCP). Every
    skill of the project is served with the MCP Skills extension (skills/list,
    skills/get, skill:// resources).
    Over --http the rules of 'mindrian serve' hold: anonymous on loopback only,
    else OS_SECURITY_KEY or JWT_VERIFICATION_KEY / JWT_JWKS_FILE.
    """
    from mindrian.host import RuleError, parse_rules
    from mindrian.mcp.command import McpConfig, McpSetupError, PortUnavailableError, run_mcp
    from mindrian.model_choice import ModelScriptError, choose_model
    from mindrian.project import ProjectPaths, find_project_root
    from mindrian.serve import ExposedWithoutAuthError

    try:
        parse_rules(approve or ())
    except RuleError as error:
        raise UsageError(f"--approve {error}", code="X008") from error
    root = find_project_root(Path.cwd())
    project = ProjectPaths(root) if root is not None else None
    try:
        choice = choose_model(model, base=Path.cwd(), base_url=base_url) if agents else None
    except ModelScriptError as error:
        raise AgentCommandError(str(error), code="X002") from error
    config = McpConfig(
        project,
        str(registry) if registry is not None else None,
        neo4j_uri=neo4j_uri,
        http=http,
        host=host,
        port=port,
        insecure=insecure,
        agents=agents,
        model=choice,
        workspace=workspace_folder(workspace) if agents else None,
        approve=tuple(approve or ()),
    )
    try:
        run_mcp(config)
    except ExposedWithoutAuthError as error:
        raise AgentCommandError(str(error), code="X006") from error
    except PortUnavailableError as error:
        raise AgentCommandError(str(error), code="X010") from error
    except McpSetupError as error:
        raise AgentCommandError(str(error), code="X011") from error
    return 0
