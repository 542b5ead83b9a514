"""A project's agents as MCP tools (``mindrian mcp --agents``).

Each registered agent is one tool, named by its id, taking a ``message`` and an
optional ``session_id`` and returning the agent's
:class:`~mindrian.handoff.HandoffResult` as structured content, with the session
id to continue it. A failed result is a tool error carrying the same content, so
a host sees why.

Host tool calls (Bash, Read, Write...) that need a person's confirmation cannot
be confirmed over MCP: the host that calls the tool is not that person. Only the
calls the skill's own rules or the server's ``--approve`` rules allow run; any
other is denied, the model is told why, and the result lists every call under
``tool_calls`` with its outcome (``ran``, ``denied``, ``refused``).

Over HTTP with JWT verification a session belongs to the token's user: the
same ``session_id`` from two users names two sessions, and each user's host
tools work in a folder of their own under the workspace.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import yaml
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from mindrian.agents import GuidedAgent
from mindrian.errors import MindrianError
from mindrian.handoff import HandoffResult
from mindrian.host import Denying, HostSession, Rule, ToolLog
from mindrian.model_choice import ModelChoice
from mindrian.packages import AgentPackage, registered_packages
from mindrian.project import ProjectPaths
from mindrian.request_limits import MAX_MESSAGE_CHARS
from mindrian.run import handoff, prepared_agent

__all__ = ["MCP_DENIAL", "AgentTool", "AgentToolsConfig", "agent_tools", "register"]

#: A session id as the HTTP routes take it (SESSION_ID_PATTERN), short enough to scope by user.
_SESSION = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"


#: What the model is told of a call no rule allows.
MCP_DENIAL = (
    "it needs the user's approval, which cannot be asked over MCP "
    "(the server's --approve PATTERN rules approve calls in advance)"
)


@dataclass(frozen=True)
class AgentToolsConfig:
    """How the agents run behind their tools."""

    project: ProjectPaths
    """The project whose registered agents are served."""
    model: ModelChoice
    """Their model (None reference: each agent's own)."""
    workspace: Path
    """Where their host tools work (each JWT user in a folder of their own under it)."""
    approved: tuple[Rule, ...] = ()
    """Host tool calls approved in advance (``--approve``), beside each skill's own rules."""


@dataclass(frozen=True)
class AgentTool:
    """One agent served as a tool."""

    package: AgentPackage
    """The agent's package."""
    description: str
    """What the tool says it does: the agent's description."""
    run: Callable[..., Any]
    """The tool function (``message``, ``session_id``, the request's context)."""


def agent_tools(config: AgentToolsConfig) -> tuple[AgentTool, ...]:
    """A tool for every registered agent, in registry order."""
    return tuple(_tool(config, package) for package in registered_packages(config.project))


def _tool(config: AgentToolsConfig, package: AgentPackage) -> AgentTool:
    spec = yaml.safe_load((package.folder / "spec.yaml").read_text(encoding="utf-8")) or {}
    description = (
        f"Run the {package.agent_type} agent {spec.get('name', package.agent_id)}: "
        + str(spec.get("description", ""))
    )

    async def run(
        message: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS)],
        ctx: Context,
        session_id: Annotated[str | None, Field(pattern=_SESSION)] = None,
    ) -> Annotated[CallToolResult, HandoffResult]:
        """Run the agent on ``message``; continue ``session_id`` when given."""
        user = _user(ctx)
        host = HostSession(
            workspace=_workspace(config.workspace, user),
            approver=Denying(denial=MCP_DENIAL),
            approved=config.approved,
            log=ToolLog(),
        )
        try:
            agent = prepared_agent(config.project, package.agent_id, config.model, host)
        except MindrianError as error:
            raise ToolError(f"{package.agent_id} cannot be loaded: {error}") from None
        session = session_id or (uuid.uuid4().hex if isinstance(agent, GuidedAgent) else None)
        scoped = None if session is None else _scoped(session, user)
        result = await handoff(agent, message, scoped)
        return _outcome(result, session, host.log)

    return AgentTool(package, description, run)


def _user(ctx: Context) -> str | None:
    """The authenticated user of an HTTP request (AgentOS's middleware sets it), else None."""
    request = ctx.request_context.request
    state = getattr(request, "state", None)
    user = getattr(state, "user_id", None)
    return user if isinstance(user, str) and user else None


def _scoped(session: str, user: str | None) -> str:
    """The session's id in the agents' state: the user's own when there is a user."""
    return session if user is None else f"{session}.{_user_key(user)}"


def _workspace(workspace: Path, user: str | None) -> Path:
    """Where a user's host tools work: a folder of their own under the workspace."""
    if user is None:
        return workspace
    folder = workspace / _user_key(user)
    folder.mkdir(exist_ok=True)
    return folder


def _user_key(user: str) -> str:
    """A user as a file-name-safe key (a token's ``sub`` may hold any character)."""
    return "u" + hashlib.sha256(user.encode("utf-8")).hexdigest()[:16]


def _outcome(result: HandoffResult, session: str | None, log: ToolLog) -> CallToolResult:
    calls = [record.to_dict() for record in log.records]
    content = {"session_id": session, **result.to_dict(), "tool_calls": calls}
    text = result.output if result.success else f"{result.error_code or 'failed'}: {result.error}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=content,
        is_error=not result.success,
    )


def register(server: Any, tools: Sequence[AgentTool]) -> None:
    """Add ``tools`` to ``server`` (an MCPServer), each named by its agent's id."""
    for tool in tools:
        server.add_tool(tool.run, name=tool.package.agent_id, description=tool.description)
