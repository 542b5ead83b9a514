"""Checking MCP servers: by configuration, or by a real MCP handshake.

This is the only I/O of phase 4, kept here so the phase stays a pure function
of the skill, the catalog and the probe's answers. ``check_configuration``
looks at the machine (command on PATH, well-formed URL); ``HandshakeProbe``
starts or contacts the server with the official ``mcp`` SDK, runs
``initialize`` and ``tools/list`` under a timeout, and reports the tools the
server really offers or the error it gave.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlparse

from builder.mcp.catalog import CatalogEntry
from builder.skill.spec import ToolDefinition

__all__ = [
    "DEFAULT_TIMEOUT",
    "HandshakeProbe",
    "Probe",
    "ProbeResult",
    "check_configuration",
]

#: Seconds a handshake (start, initialize, tools/list) may take.
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class ProbeResult:
    """What checking one server found."""

    server: str
    """Catalog name."""
    ok: bool
    """Whether the server is usable."""
    detail: str
    """What was found, or the error, in one line."""
    handshake: bool = False
    """True when a real MCP session was opened."""
    tools: tuple[ToolDefinition, ...] = ()
    """Tools the server reported (handshake only), in its order."""


#: A probe takes a catalog entry and reports on it.
Probe = Callable[[CatalogEntry], ProbeResult]


#: Commands meaning "a Python interpreter", as the runtime's ``mindrian.agents.mcp`` reads them.
_PYTHON_COMMANDS = frozenset({"python", "python3"})


def _command(entry: CatalogEntry) -> str:
    # The project's own servers run under the builder's interpreter, which has the project
    # installed.
    return sys.executable if entry.command in _PYTHON_COMMANDS else entry.command


def check_configuration(entry: CatalogEntry) -> ProbeResult:
    """Whether the server could be started or reached, without contacting it."""
    if entry.command:
        found = shutil.which(_command(entry))
        if found is None:
            return ProbeResult(entry.name, False, f"command {entry.command!r} is not on PATH")
        return ProbeResult(entry.name, True, f"command {entry.command!r} found on PATH")
    parts = urlparse(entry.url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ProbeResult(entry.name, False, f"URL {entry.url!r} is not a well-formed http(s) URL")
    return ProbeResult(entry.name, True, f"URL {entry.url} is well-formed")


def _stderr_tail(log: TextIO) -> str:
    log.flush()
    log.seek(0)
    lines = [line.strip() for line in log.read().splitlines() if line.strip()]
    return " | ".join(lines[-3:])


class HandshakeProbe:
    """Opens a real MCP session per server: initialize, list tools, close."""

    def __init__(self, root: str | Path = ".", timeout: float = DEFAULT_TIMEOUT) -> None:
        self._root = Path(root)
        self._timeout = timeout

    def __call__(self, entry: CatalogEntry) -> ProbeResult:
        """Contact the server; any failure becomes a ``ProbeResult`` carrying the server's error."""
        import anyio  # the MCP SDK costs ~0.4 s to import; only ``--connect`` needs it

        with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
            try:
                tools = anyio.run(self._list_tools, entry, log)
            except Exception as exc:
                tail = _stderr_tail(log)
                message = _describe(exc) + (f"; server stderr: {tail}" if tail else "")
                return ProbeResult(entry.name, False, message, handshake=True)
        names = ", ".join(t.name for t in tools)
        return ProbeResult(
            entry.name,
            True,
            f"handshake ok, offers {names}",
            handshake=True,
            tools=tools,
        )

    async def _list_tools(self, entry: CatalogEntry, log: TextIO) -> tuple[ToolDefinition, ...]:
        import anyio
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client

        with anyio.fail_after(self._timeout):
            if entry.command:
                params = StdioServerParameters(
                    command=_command(entry),
                    args=list(entry.args),
                    env={name: os.environ[name] for name in entry.env if name in os.environ},
                    cwd=self._root,
                )
                async with stdio_client(params, errlog=log) as (read, write):
                    return await _session_tools(read, write, self._timeout)
            async with streamable_http_client(entry.url) as (read, write):
                return await _session_tools(read, write, self._timeout)


async def _session_tools(read: Any, write: Any, timeout: float) -> tuple[ToolDefinition, ...]:
    from mcp.client.session import ClientSession
    from mcp_types import PaginatedRequestParams

    async with ClientSession(read, write, read_timeout_seconds=timeout) as session:
        await session.initialize()
        tools, cursor = [], None
        while True:
            params: PaginatedRequestParams | None = (
                None if cursor is None else PaginatedRequestParams(cursor=cursor)
            )
            page = await session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
    return tuple(
        ToolDefinition(
            name=t.name,
            description=t.description or "",
            parameters=dict(t.input_schema),
        )
        for t in tools
    )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "no answer within the timeout"
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"
