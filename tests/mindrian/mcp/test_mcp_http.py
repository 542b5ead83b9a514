"""``mindrian mcp --http``: the SDK client over streamable HTTP, with ``serve``'s auth rules."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import jwt
import pytest
from mcp_clients import MCP_PROGRAM, ROOT, http_client, mcp_http, raw

_KEY = "a-security-key-for-the-tests"
_SECRET = "a-shared-secret-of-at-least-32-bytes!"
_NO_AUTH = {"OS_SECURITY_KEY": "", "JWT_VERIFICATION_KEY": "", "JWT_JWKS_FILE": ""}
_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
_HEADERS = {"Accept": "application/json, text/event-stream"}


async def _use(url: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    async with http_client(url, headers) as client:
        chosen = await client.call_tool(
            "select_frameworks", {"context": "is my startup idea worth building"}
        )
        listing = await raw(client, "skills/list", {})
        read = await client.read_resource("skill://pws/SKILL.md")
        return {
            "version": client.server_info.version if client.server_info else None,
            "first": chosen.structured_content["frameworks"][0]["id"],
            "skills": len(listing["skills"]),
            "pws": getattr(read.contents[0], "text", ""),
        }


def _status(url: str, token: str | None) -> int:
    headers = {**_HEADERS, **({"Authorization": f"Bearer {token}"} if token else {})}
    return httpx.post(url, json=_INIT, headers=headers, timeout=30).status_code


def test_anonymous_on_loopback(tmp_path: Path) -> None:
    with mcp_http(log=tmp_path / "mcp.log", env=_NO_AUTH) as url:
        seen = anyio.run(_use, url)
    assert seen["first"] == "pws-validation"
    assert seen["skills"] == 8
    assert seen["pws"].encode() == (ROOT / "skills" / "pws" / "SKILL.md").read_bytes()


def test_a_security_key_is_required_when_set(tmp_path: Path) -> None:
    env = {**_NO_AUTH, "OS_SECURITY_KEY": _KEY}
    with mcp_http(log=tmp_path / "mcp.log", env=env) as url:
        statuses = (_status(url, None), _status(url, "wrong"), _status(url, _KEY))
        seen = anyio.run(_use, url, {"Authorization": f"Bearer {_KEY}"})
    assert statuses == (401, 401, 200)
    assert seen["first"] == "pws-validation"


def test_jwts_are_verified_when_configured(tmp_path: Path) -> None:
    env = {**_NO_AUTH, "JWT_VERIFICATION_KEY": _SECRET, "MINDRIAN_JWT_ALGORITHM": "HS256"}
    claims = {"sub": "carol", "scopes": [], "exp": int(time.time()) + 600}
    good = jwt.encode(claims, _SECRET, algorithm="HS256")
    forged = jwt.encode(claims, "another-secret-of-at-least-32-bytes!!", algorithm="HS256")
    expired = jwt.encode({**claims, "exp": int(time.time()) - 600}, _SECRET, algorithm="HS256")
    with mcp_http(log=tmp_path / "mcp.log", env=env) as url:
        statuses = tuple(_status(url, token) for token in (None, forged, expired, good))
        seen = anyio.run(_use, url, {"Authorization": f"Bearer {good}"})
    assert statuses == (401, 401, 401, 200)
    assert seen["skills"] == 8


@pytest.mark.parametrize("host", ["0.0.0.0", "example.org"])
def test_anonymous_beyond_loopback_is_refused_before_listening(host: str) -> None:
    done = subprocess.run(
        [sys.executable, *MCP_PROGRAM, "--http", "--host", host, "--port", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**_env(), **_NO_AUTH},
    )
    assert done.returncode == 1, done.stderr
    assert "X006" in done.stderr and "refusing to serve" in done.stderr


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_a_port_in_use_is_x010_before_serving() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, *MCP_PROGRAM, "--http", "--port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            env={**_env(), **_NO_AUTH},
        )
    assert done.returncode == 1, done.stderr
    assert "X010" in done.stderr and "Traceback" not in done.stderr
