"""``mindrian mcp`` in a subprocess, spoken to by the official ``mcp`` SDK client."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TextIO

import httpx2
import mcp_types as types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter

from mindrian.testing.served import listening, server_process

__all__ = ["ROOT", "http_client", "mcp_http", "raw", "stdio_client_of", "stdio_params"]

ROOT = Path(__file__).resolve().parents[3]
#: ``python`` arguments that run ``mindrian mcp``.
MCP_PROGRAM = ("-m", "builder", "mcp")
_ANY = TypeAdapter(dict[str, Any])


class _Raw(types.Request[dict[str, Any] | None, str]):
    """Any request, for the methods the SDK has no helper for (``skills/list``...)."""

    method: str
    params: dict[str, Any] | None = None


def stdio_params(
    *args: str, cwd: Path = ROOT, env: Mapping[str, str] | None = None
) -> StdioServerParameters:
    """``mindrian mcp ARGS`` as the SDK starts a stdio server."""
    return StdioServerParameters(
        command=sys.executable,
        args=[*MCP_PROGRAM, *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def stdio_client_of(params: StdioServerParameters, errlog: TextIO) -> Client:
    """The SDK's high-level client over stdio (protocol negotiated), stderr to ``errlog``."""
    return Client(stdio_client(params, errlog=errlog))


def http_client(url: str, headers: Mapping[str, str] | None = None) -> Client:
    """The SDK's high-level client over streamable HTTP, with ``headers`` on every request."""
    http = httpx2.AsyncClient(headers=dict(headers or {}), timeout=60.0)
    return Client(streamable_http_client(url, http_client=http))


async def raw(client: Client, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC request by method name; the result as plain data (errors raise MCPError)."""
    return await client.session.send_request(_Raw(method=method, params=params), _ANY)


@contextmanager
def mcp_http(
    args: Sequence[str] = (), *, log: Path, env: Mapping[str, str] | None = None, cwd: Path = ROOT
) -> Iterator[str]:
    """``mindrian mcp --http --port FREE ARGS`` until the block ends; yields the endpoint URL."""
    with server_process(
        ("--http", *args),
        cwd=cwd,
        log=log,
        env={"PYTHONPATH": str(ROOT), **(env or {})},
        program=MCP_PROGRAM,
        ready=listening,
    ) as (url, _process):
        yield f"{url}/mcp"


@asynccontextmanager
async def opened(client: Client) -> AsyncIterator[Client]:
    """``client`` connected for the block."""
    async with client:
        yield client
