"""A project's agents as MCP tools (``mindrian mcp --agents``).

Each registered agent is one tool, named by its id, taking a ``message`` and an
optional ``session_id`` and returning the agent's
:class:`~mindrian.handoff.HandoffResult` as structured content, with the session
id to continue it. A failed result is a tool error carrying the same content, so
a host sees why.

A tool call an agent makes that needs a person's confirmation cannot be
confirmed over MCP: an MCP host is not the person. The :data:`Approver` decides
which such calls are approved in advance; the default, :func:`deny_all`,
approves none, and a run that stops for one reports that it was refused.

Over HTTP with JWT verification a session belongs to the token's user: the
same ``session_id`` from two users names two sessions.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import yaml
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from mindrian.agents import GuidedAgent
from mindrian.errors import MindrianError
from mindrian.handoff import HandoffResult
from mindrian.model_choice import ModelChoice
from mindrian.packages import AgentPackage, registered_packages
from mindrian.project import ProjectPaths
from mindrian.request_limits import MAX_MESSAGE_CHARS
from mindrian.run import handoff, prepared_agent

__all__ = [
    "AgentTool",
    "Approver",
    "ConfirmationRequest",
    "agent_tools",
    "deny_all",
]

#: A session id as the HTTP routes take it (SESSION_ID_PATTERN), short enough to scope by user.
_SESSION = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"


@dataclass(frozen=True)
class ConfirmationRequest:
    """A tool call an agent wants to make that needs a person's confirmation."""

    agent_id: str
    """The agent making the call."""
    tool_name: str
    """The tool it calls."""
    arguments: Mapping[str, Any]
    """The call's arguments."""


#: Whether a confirmation-needing call is approved in advance (over MCP nobody is asked).
Approver = Callable[[ConfirmationRequest], bool]


def deny_all(request: ConfirmationRequest) -> bool:
    """No call is approved in advance: every one that needs confirmation is refused."""
    return False


@dataclass(frozen=True)
class AgentTool:
    """One agent served as a tool."""

    package: AgentPackage
    """The agent's package."""
    description: str
    """What the tool says it does: the agent's description."""
    run: Callable[..., Any]
    """The tool function (``message``, ``session_id``, the request's context)."""


def agent_tools(
    project: ProjectPaths, model: ModelChoice, approver: Approver = deny_all
) -> tuple[AgentTool, ...]:
    """A tool for every registered agent, in registry order."""
    return tuple(
        _tool(project, package, model, approver) for package in registered_packages(project)
    )


def _tool(
    project: ProjectPaths, package: AgentPackage, model: ModelChoice, approver: Approver
) -> AgentTool:
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
        try:
            agent = prepared_agent(project, package.agent_id, model)
        except MindrianError as error:
            raise ToolError(f"{package.agent_id} cannot be loaded: {error}") from None
        session = session_id or (uuid.uuid4().hex if isinstance(agent, GuidedAgent) else None)
        scoped = None if session is None else _scoped(session, _user(ctx))
        result = await handoff(agent, message, scoped)
        return _outcome(result, session)

    return AgentTool(package, description, run)


def _user(ctx: Context) -> str | None:
    """The authenticated user of an HTTP request (AgentOS's middleware sets it), else None."""
    request = ctx.request_context.request
    state = getattr(request, "state", None)
    user = getattr(state, "user_id", None)
    return user if isinstance(user, str) and user else None


def _scoped(session: str, user: str | None) -> str:
    """The session's id in the agents' state: the user's own when there is a user."""
    if user is None:
        return session
    return f"{session}.u{hashlib.sha256(user.encode('utf-8')).hexdigest()[:16]}"


def _outcome(result: HandoffResult, session: str | None) -> CallToolResult:
    content = {"session_id": session, **result.to_dict()}
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
