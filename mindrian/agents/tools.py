"""Tool wiring of a generated agent, from the ``tools`` block of its ``spec.yaml``.

Custom functions are imported on first call, so importing a package never runs
tool code; MCP toolkits are created unconnected: the agent connects them before
each run and refuses to run while a required server is unavailable (see
:mod:`mindrian.agents.mcp`). Global actions are told to the model as a short
guide appended to the instructions.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agno.tools.function import Function

from mindrian.host.gate import HostGrant

__all__ = ["ToolWiring"]


def _lazy(dotted: str) -> Callable[..., Any]:
    """A callable that imports ``dotted`` on first use and forwards the call."""
    module_name, _, attribute = dotted.rpartition(".")

    def call(**arguments: Any) -> Any:
        return getattr(importlib.import_module(module_name), attribute)(**arguments)

    call.__name__ = attribute
    return call


@dataclass(frozen=True)
class ToolWiring:
    """Every tool an agent is given, as plain data from its spec."""

    mcp_servers: tuple[Mapping[str, Any], ...] = ()
    """MCP servers: how to reach each, whether it is required, which of its tools are used."""
    custom_tools: tuple[Mapping[str, Any], ...] = ()
    """Custom tools: name, dotted function path and the definition (description, JSON schema)."""
    global_actions: tuple[Mapping[str, Any], ...] = ()
    """Actions available in every step, each bound to a tool."""
    host: HostGrant = field(default_factory=HostGrant)
    """The host tools granted (``tools.host``): given to the agent only by a run that sets up a
    workspace for them (:class:`mindrian.host.HostSession`)."""

    @classmethod
    def from_spec(cls, tools: Mapping[str, Any] | None) -> ToolWiring:
        """The wiring of a spec's ``tools`` mapping (None or empty: no tools)."""
        tools = tools or {}
        return cls(
            mcp_servers=tuple(tools.get("mcp_servers") or ()),
            custom_tools=tuple(tools.get("custom_tools") or ()),
            global_actions=tuple(tools.get("global_actions") or ()),
            host=HostGrant.from_spec(tools.get("host")),
        )

    @property
    def definitions(self) -> tuple[Mapping[str, Any], ...]:
        """Tool definitions known at build time: custom tools, then MCP tools a handshake gave."""
        custom = tuple(t["definition"] for t in self.custom_tools)
        described = tuple(d for s in self.mcp_servers for d in s.get("definitions") or ())
        return custom + described

    @property
    def guide(self) -> str:
        """Text appended to the instructions naming the tool that performs each global action."""
        if not self.global_actions:
            return ""
        lines = [
            f"- {a['action']}: use the tool `{a['tool']}`. {a.get('description', '')}".rstrip()
            for a in self.global_actions
        ]
        return "\n\nGlobal actions (available in every step):\n" + "\n".join(lines) + "\n"

    def custom_functions(self) -> tuple[Function, ...]:
        """The custom tools as Agno functions whose schema is the one checked at build time."""
        return tuple(
            Function(
                name=tool["name"],
                description=tool["definition"]["description"],
                parameters=dict(tool["definition"]["parameters"]),
                entrypoint=_lazy(tool["function"]),
                skip_entrypoint_processing=True,
            )
            for tool in self.custom_tools
        )

    def mcp_toolkits(self) -> tuple[Any, ...]:
        """One unconnected Agno ``MCPTools`` per server, limited to the tools the agent uses."""
        if not self.mcp_servers:
            return ()
        # Imported here: the MCP client stack is only needed by agents that have servers.
        from mindrian.agents.mcp import mcp_toolkit

        return tuple(mcp_toolkit(server) for server in self.mcp_servers)

    def all_tools(self) -> tuple[Any, ...]:
        """Every tool the agent is given: custom functions first, then MCP toolkits."""
        return self.custom_functions() + self.mcp_toolkits()
