"""MCP servers of an agent: toolkits built from plain specs, connected and checked for each run.

Agno's ``MCPTools`` connects on the first run and, when a server cannot be
reached, only logs the error and leaves the toolkit out: the agent then runs
without those tools and nobody is told. So the agent bases connect every MCP
toolkit themselves before a run (:func:`connected_servers`), check that each
server the spec marks required answered and offers the tools the spec asked
for, fail the run with :class:`McpUnavailableError` when one did not, log a
warning for optional ones, and close the connections after the run.

Agno leaves toolkits that are already connected alone (it neither reconnects
nor closes them), so the connection made here is the one the run uses.
Toolkits are often shared (a generated agent class holds them, every instance
and every member or step agent uses the same objects), so connections are
counted per toolkit: the first run connects, the last one to finish closes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import weakref
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mindrian.agents.errors import AgentRunError

if TYPE_CHECKING:
    from agno.tools.mcp import MCPTools

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "McpServerSpec",
    "McpUnavailableError",
    "connected_servers",
    "is_mcp_toolkit",
    "mcp_toolkit",
]

logger = logging.getLogger(__name__)

#: Commands meaning "a Python interpreter": run under the agent's own, which has the project
#: installed.
_PYTHON_COMMANDS = frozenset({"python", "python3"})
#: Environment variables passed to every stdio server, whatever its spec declares.
_PROJECT_ENV_PREFIX = "MINDRIAN_"
#: Seconds Agno's MCP client waits for each answer (handshake, tool list, tool call). A stdio
#: server is a new interpreter importing the MCP SDK and the registry: on a busy machine its
#: handshake took over 10 s (Agno's own default), and the agent then ran without its tools.
DEFAULT_TIMEOUT_SECONDS = 30


class McpUnavailableError(AgentRunError):
    """A required MCP server could not be connected or lacks a tool the agent needs."""


@dataclass(frozen=True)
class McpServerSpec:
    """One MCP server of an agent, as a generated package's ``spec.yaml`` describes it."""

    name: str
    """Catalog name; also the name of the agent's toolkit for this server."""
    required: bool = True
    """Whether the agent must not run without it."""
    tools: tuple[str, ...] = ()
    """Names of the server's tools the agent uses."""
    transport: str = "stdio"
    """stdio, streamable-http or sse."""
    command: str = ""
    """Executable starting a stdio server."""
    args: tuple[str, ...] = ()
    """Its arguments."""
    env: tuple[str, ...] = ()
    """Names of environment variables passed on to a stdio server."""
    url: str = ""
    """Address of an HTTP server."""

    @classmethod
    def from_plain(cls, data: Mapping[str, Any]) -> McpServerSpec:
        """Read a plain dict (unknown keys, such as ``package``, are ignored)."""
        return cls(
            name=str(data["name"]),
            required=bool(data.get("required", True)),
            tools=tuple(data.get("tools") or ()),
            transport=str(data.get("transport") or "stdio"),
            command=str(data.get("command") or ""),
            args=tuple(data.get("args") or ()),
            env=tuple(data.get("env") or ()),
            url=str(data.get("url") or ""),
        )


def mcp_toolkit(
    server: Mapping[str, Any], *, timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS
) -> MCPTools:
    """An unconnected Agno ``MCPTools`` for ``server``, named after it, limited to its requested
    tools.

    A stdio command is given to Agno as a program and an argument list, never
    as one string to re-split, so arguments reach the server exactly as written.
    """
    from agno.tools.mcp import MCPTools

    spec = McpServerSpec.from_plain(server)
    include = list(spec.tools) or None
    if spec.transport != "stdio":
        return MCPTools(
            name=spec.name,
            url=spec.url,
            transport=spec.transport,  # type: ignore[arg-type]
            include_tools=include,
            timeout_seconds=timeout_seconds,
        )
    return MCPTools(
        name=spec.name,
        server_params=_stdio_parameters(spec),
        transport="stdio",
        include_tools=include,
        timeout_seconds=timeout_seconds,
    )


def _stdio_parameters(spec: McpServerSpec) -> Any:
    from mcp import StdioServerParameters
    from mcp.client.stdio import get_default_environment

    command = sys.executable if spec.command in _PYTHON_COMMANDS else spec.command
    passed = {name: os.environ[name] for name in spec.env if name in os.environ}
    # The project's own settings (MINDRIAN_REGISTRY, ...) reach every server it starts.
    passed.update({k: v for k, v in os.environ.items() if k.startswith(_PROJECT_ENV_PREFIX)})
    # The MCP SDK gives a server only a minimal environment; declared variables are added to it.
    env = {**get_default_environment(), **passed} if passed else None
    return StdioServerParameters(command=command, args=list(spec.args), env=env)


def is_mcp_toolkit(tool: Any) -> bool:
    """Whether ``tool`` is an Agno ``MCPTools`` (checked by class name, as Agno does, to avoid
    importing it)."""
    return any(c.__name__ == "MCPTools" for c in type(tool).__mro__)


# -- connecting for a run ---------------------------------------------------------


class _Lease:
    """How many runs hold one toolkit, so that only the last to finish closes it."""

    def __init__(self) -> None:
        self.users = 0
        """Runs holding the toolkit right now."""
        self.owned = False
        """True when we opened the connection (one opened by someone else is never closed here)."""
        self.loop: asyncio.AbstractEventLoop | None = None
        """Event loop of the runs holding it."""
        self.lock: asyncio.Lock | None = None
        """Serialises connecting and closing within that loop."""

    def guard(self) -> asyncio.Lock:
        """The lock of the running event loop (a toolkit's connection lives in one loop)."""
        loop = asyncio.get_running_loop()
        if self.loop is not loop:
            if self.users:
                raise RuntimeError("an MCP toolkit is in use by a run in another event loop")
            self.loop, self.lock = loop, asyncio.Lock()
        assert self.lock is not None
        return self.lock


_LEASES: weakref.WeakKeyDictionary[Any, _Lease] = weakref.WeakKeyDictionary()


@asynccontextmanager
async def connected_servers(
    tools: Iterable[Any], servers: Sequence[Mapping[str, Any]] = ()
) -> AsyncIterator[None]:
    """Hold every MCP toolkit in ``tools`` connected for the duration of the block.

    ``servers`` are the plain specs; a toolkit is matched to its spec by name.
    Raises :class:`McpUnavailableError` naming each required server that could
    not be connected or lacks a requested tool (nothing stays connected then);
    an optional server (or a toolkit without a spec) that fails is logged as a
    warning and the run goes on without it.
    """
    toolkits = [t for t in tools if is_mcp_toolkit(t)]
    specs = {s.name: s for s in map(McpServerSpec.from_plain, servers)}
    if not toolkits and not specs:
        yield
        return
    held: list[Any] = []
    try:
        problems = await _hold_all(toolkits, specs, held)
        fatal = [
            f"MCP server {name!r} is unavailable: {why}"
            for name, why in problems
            if _required(specs.get(name))
        ]
        for name, why in problems:
            if not _required(specs.get(name)):
                logger.warning(
                    "optional MCP server %r is unavailable, running without it: %s",
                    name,
                    why,
                )
        if fatal:
            raise McpUnavailableError("; ".join(fatal))
        yield
    finally:
        for toolkit in reversed(held):
            await _release(toolkit)


def _required(spec: McpServerSpec | None) -> bool:
    return spec is not None and spec.required


async def _hold_all(
    toolkits: Sequence[Any], specs: Mapping[str, McpServerSpec], held: list[Any]
) -> list[tuple[str, str]]:
    """Connect each toolkit (recording those held); returns (server, reason) of every failure."""
    problems: list[tuple[str, str]] = []
    names = {t.name for t in toolkits}
    for spec in specs.values():
        if spec.name not in names:
            problems.append((spec.name, "the agent has no MCP toolkit named after it"))
    for toolkit in toolkits:
        why = await _acquire(toolkit)
        if not why:
            held.append(toolkit)
            why = _missing_tools(toolkit, specs.get(toolkit.name))
        if why:
            problems.append((toolkit.name, why))
    return problems


def _missing_tools(toolkit: Any, spec: McpServerSpec | None) -> str:
    if spec is None:
        return ""
    prefix = f"{toolkit.tool_name_prefix}_" if toolkit.tool_name_prefix else ""
    missing = [name for name in spec.tools if prefix + name not in toolkit.functions]
    if not missing:
        return ""
    offered = ", ".join(sorted(toolkit.functions)) or "nothing"
    return f"it does not offer {', '.join(missing)} (offers: {offered})"


async def _acquire(toolkit: Any) -> str:
    """Count one more user of ``toolkit``, connecting it if needed; returns why that failed, or
    ""."""
    lease = _LEASES.setdefault(toolkit, _Lease())
    async with lease.guard():
        if lease.users == 0 and toolkit.initialized:
            lease.owned = False  # connected by its owner, who also closes it
        elif not toolkit.initialized:
            why = await _open(toolkit)
            if why:
                return why
            lease.owned = True
        lease.users += 1
        return ""


async def _release(toolkit: Any) -> None:
    lease = _LEASES[toolkit]
    async with lease.guard():
        lease.users -= 1
        if lease.users == 0 and lease.owned:
            lease.owned = False
            await _discard(toolkit)


async def _open(toolkit: Any) -> str:
    """Connect ``toolkit``; returns why it is unusable ("" when it is ready), never leaving a server
    running."""
    try:
        # Unlike connect(), entering the toolkit raises the connection error instead of only logging
        # it.
        await toolkit.__aenter__()
    except Exception as exc:
        await _discard(toolkit)
        return _describe(exc)
    except BaseException:  # cancelled while connecting
        await _discard(toolkit)
        raise
    if toolkit.initialized:
        return ""
    # Connected, but Agno could not list or filter the tools (it logs that and stays uninitialised).
    why = await _listing_problem(toolkit)
    await _discard(toolkit)
    return why


async def _listing_problem(toolkit: Any) -> str:
    try:
        listed = await toolkit.session.list_tools()
    except Exception as exc:
        return f"listing its tools failed: {_describe(exc)}"
    offered = [t.name for t in (listed if isinstance(listed, list) else listed.tools)]
    missing = [n for n in toolkit.include_tools or () if n not in offered]
    if missing:
        return (
            f"it does not offer {', '.join(missing)} (offers: "
            f"{', '.join(sorted(offered)) or 'nothing'})"
        )
    return "its tools could not be registered"


async def _discard(toolkit: Any) -> None:
    # Exiting works whatever state the toolkit is in, unlike close(), which skips uninitialised
    # ones.
    with suppress(Exception):
        await toolkit.__aexit__(None, None, None)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    text = str(exc) or "no details"
    return f"{type(exc).__name__}: {text}"
