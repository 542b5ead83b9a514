"""``mindrian mcp``: the project's MCP server over stdio or streamable HTTP.

The registry is ``--registry`` (a database file or a ``registry.yaml``), else
Neo4j when ``NEO4J_URI`` is set, else the project's embedded database, else its
``generated/registry.yaml``. The project's skills are served with the Skills
extension (:mod:`mindrian.mcp.skills`) and, with ``--agents``, its agents as
tools (:mod:`mindrian.mcp.agents`).

Over HTTP the rules of ``mindrian serve`` hold: anonymous only on loopback
(:func:`mindrian.serve.exposure_warning`), else ``OS_SECURITY_KEY`` or JWT
verification, checked by AgentOS's own authentication middleware.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.extension import Extension

from mindrian.errors import MindrianError
from mindrian.graph import GraphError, Registry, open_registry
from mindrian.mcp.server import build_server, open_source_registry
from mindrian.mcp.skills import SkillsExtension, catalog_of_project
from mindrian.project import DEFAULT_OUT_DIR, REGISTRY_YAML_NAME, ProjectPaths

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from mindrian.model_choice import ModelChoice

__all__ = [
    "DEFAULT_MCP_PORT",
    "MCP_PATH",
    "REGISTRY_ENV",
    "McpConfig",
    "McpSetupError",
    "PortUnavailableError",
    "configure_logging",
    "http_app",
    "open_project_registry",
    "project_server",
    "run_mcp",
]

#: Environment variable naming the registry to serve (a database file or a registry.yaml).
REGISTRY_ENV = "MINDRIAN_REGISTRY"
#: The port ``--http`` listens on unless told otherwise.
DEFAULT_MCP_PORT = 7778
#: The streamable HTTP endpoint.
MCP_PATH = "/mcp"
_FALLBACK_YAML = Path(DEFAULT_OUT_DIR) / REGISTRY_YAML_NAME


class McpSetupError(MindrianError, LookupError):
    """No registry to serve, or one that cannot be opened."""


class PortUnavailableError(MindrianError, OSError):
    """``--http``'s port is in use, or not ours to take."""


@dataclass(frozen=True)
class McpConfig:
    """What ``mindrian mcp`` was asked for."""

    project: ProjectPaths | None
    """The project whose registry, skills and agents are served; None outside one."""
    registry: str | None = None
    """A database file or registry.yaml; None: ``$MINDRIAN_REGISTRY``, else Neo4j, else the
    project's."""
    neo4j_uri: str | None = None
    """Neo4j to read the registry from; None: ``$NEO4J_URI`` (credentials from the environment)."""
    http: bool = False
    """Streamable HTTP instead of stdio."""
    host: str = "127.0.0.1"
    """Interface to listen on (HTTP)."""
    port: int = DEFAULT_MCP_PORT
    """Port to listen on (HTTP)."""
    insecure: bool = False
    """Serve anonymously beyond loopback anyway (HTTP, as ``serve --insecure``)."""
    agents: bool = False
    """Also serve each registered agent as a tool."""
    model: ModelChoice | None = None
    """The agents' model (``--agents``); None: each agent's own."""
    workspace: Path | None = None
    """Where the agents' host tools work (``--agents``); None: the current folder."""
    approve: tuple[str, ...] = ()
    """Host tool calls approved in advance (``--approve``), as written."""


def configure_logging() -> None:
    """One plain line per record on stderr (the SDK's own handler wraps a record over several)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("mindrian mcp: %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    # A refused tool call or resource read is one INFO line from the SDK's server module.
    logging.getLogger("mcp.server.mcpserver").setLevel(logging.INFO)
    logging.getLogger("mindrian").setLevel(logging.INFO)


def open_project_registry(config: McpConfig, env: Mapping[str, str]) -> Registry:
    """The registry ``config`` names (see the module's docstring for the order)."""
    try:
        source = config.registry or env.get(REGISTRY_ENV)
        if source:
            return open_source_registry(source)
        if config.neo4j_uri or env.get("NEO4J_URI"):
            return open_registry(config.neo4j_uri, None, env=env, read_only=True)
        project = config.project
        if project is not None:
            for candidate in (project.embedded_registry, project.registry_yaml):
                if candidate.exists():
                    return open_source_registry(candidate)
    except GraphError as error:
        raise McpSetupError(str(error)) from error
    raise McpSetupError(
        f"no registry: no mindrian project with a built registry ({_FALLBACK_YAML}) above the "
        f"working directory; pass --registry, set {REGISTRY_ENV} or NEO4J_URI"
    )


def project_server(config: McpConfig, registry: Registry) -> MCPServer:
    """The server: the registry's tools, the project's skills and, asked for, its agents."""
    extensions: list[Extension] = []
    if config.project is not None and config.project.registry_yaml.is_file():
        extensions.append(SkillsExtension(catalog_of_project(config.project)))
    server = build_server(registry, extensions=extensions)
    if config.agents:
        # Only here: the agents bring Agno, which the registry's tools do without.
        from mindrian.host import RuleError, parse_rules
        from mindrian.mcp.agents import AgentToolsConfig, agent_tools, register
        from mindrian.model_choice import choose_model
        from mindrian.packages import PackageError

        if config.project is None:
            raise McpSetupError("--agents needs a mindrian project")
        try:
            agents = AgentToolsConfig(
                config.project,
                config.model or choose_model(None),
                (config.workspace or Path.cwd()).resolve(),
                parse_rules(config.approve),
            )
            register(server, agent_tools(agents))
        except (PackageError, RuleError) as error:
            raise McpSetupError(str(error)) from error
    return server


def http_app(server: MCPServer, config: McpConfig, env: Mapping[str, str]) -> Any:
    """The streamable HTTP app, behind AgentOS's authentication when ``env`` configures one."""
    from mindrian.serve import JWT_ALGORITHM_ENV, AuthMode, auth_mode

    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=config.host)
    mode = auth_mode(env)
    if mode is AuthMode.NONE:
        return app
    from agno.os.middleware.jwt import AuthMiddleware

    # Nothing is excluded: AgentOS's defaults let /, /health and /docs through unauthenticated.
    if mode is AuthMode.SECURITY_KEY:
        options: dict[str, Any] = {"security_key": env["OS_SECURITY_KEY"]}
    else:
        options = {"algorithm": env.get(JWT_ALGORITHM_ENV) or "RS256", "user_isolation": True}
    app.add_middleware(AuthMiddleware, excluded_route_paths=[], **options)
    return app


def run_mcp(config: McpConfig, env: Mapping[str, str] | None = None) -> None:
    """Serve until stdin closes (stdio) or the process is interrupted (HTTP).

    Raises, before anything is served: :class:`McpSetupError` without a registry,
    :class:`mindrian.serve.ExposedWithoutAuthError` for anonymous HTTP beyond loopback,
    :class:`PortUnavailableError` for a port that cannot be listened on.
    """
    environ = os.environ if env is None else env
    configure_logging()
    if not config.http:
        with open_project_registry(config, environ) as registry:
            project_server(config, registry).run("stdio")
        return
    # Only here: serve's module brings Agno, which stdio does without.
    from mindrian.serve import exposure_warning, listen, run_server

    warning = exposure_warning(config.host, config.insecure, environ)
    try:
        sock = listen(config.host, config.port)
    except OSError as error:
        reason = error.strerror or str(error)
        raise PortUnavailableError(
            f"cannot listen on {config.host}:{config.port}: {reason} "
            "(another server holds it? try --port)"
        ) from None
    with sock, open_project_registry(config, environ) as registry:
        app = http_app(project_server(config, registry), config, environ)
        if warning is not None:
            logging.getLogger("mindrian.mcp").warning("%s", warning)
        run_server(app, sock)
