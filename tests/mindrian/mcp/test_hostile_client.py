"""A hostile client on ``mindrian mcp``'s stdio: raw JSON-RPC lines, every answer an error.

Unknown methods, malformed parameters, huge arguments and path tricks in
``skill://`` URIs each get a JSON-RPC error or a tool error with a reason; the
server stays up, answers the next request, and writes no traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from typing import Any

import pytest
from mcp_clients import MCP_PROGRAM, ROOT

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601

#: Skill URIs that name no served file (the real one is skill://pws/SKILL.md).
PATH_TRICKS = [
    "skill://pws/../larry/SKILL.md",
    "skill://pws/./SKILL.md",
    "skill://pws/%2E%2E/larry/SKILL.md",
    "skill://pws/%53KILL.md",
    "skill://pws//SKILL.md",
    "skill://PWS/SKILL.md",
    "skill://pws/SKILL.md/",
    "skill://pws/SKILL.md?x=1",
    "skill://pws/SKILL.md#frag",
    "skill:///etc/passwd",
    "skill://../../pyproject.toml",
    "skill://pws/..%2F..%2Fpyproject.toml",
    "skill://pws/\\..\\SKILL.md",
    "file:///etc/passwd",
    "skill://pws/SKILL.md\u0000",
    "/work/skills/pws/SKILL.md",
    "skill://pws/evals/../SKILL.md",
    "skill://" + "a" * 3000 + "/SKILL.md",
]

_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "hostile", "version": "0"},
}


def _exchange(
    lines: list[str | dict[str, Any]], expected: set[int]
) -> tuple[dict[int, dict[str, Any]], str]:
    """Send the lines after the handshake; the answers by id (once ``expected`` all came, then
    stdin is closed: the server cancels what is still running at its end) and stderr."""
    sent = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _INIT},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *lines,
    ]
    payload = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in sent)
    process = subprocess.Popen(
        [sys.executable, *MCP_PROGRAM],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdin is not None and process.stdout is not None
    answers: dict[int, dict[str, Any]] = {}

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            message = json.loads(line)
            if message.get("id") is not None:
                answers[message["id"]] = message
            if expected <= set(answers):
                break

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    process.stdin.write(payload.encode())
    process.stdin.flush()
    reader.join(timeout=240)
    _, stderr = process.communicate(timeout=60)
    return answers, stderr.decode()


def _request(ident: int, method: str, params: Any = None) -> dict[str, Any]:
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        request["params"] = params
    return request


@pytest.fixture(scope="module")
def hostile() -> tuple[dict[int, dict[str, Any]], str]:
    lines: list[str | dict[str, Any]] = [
        _request(1, "skills/destroy", {}),
        _request(2, "tools/execute", {}),
        "{not json",
        _request(3, "skills/get", {"uri": 42}),
        _request(4, "skills/get", {}),
        # Not a JSON-RPC request the SDK's reader accepts (params must be an object): dropped.
        _request(5, "skills/get", []),
        _request(6, "skills/list", {"cursor": "999999"}),
        _request(7, "skills/list", {"cursor": {"x": 1}}),
        _request(8, "tools/call", {"name": "select_frameworks", "arguments": ["x"]}),
        _request(9, "tools/call", {"name": "no_such_tool", "arguments": {}}),
        _request(
            10,
            "tools/call",
            {"name": "select_frameworks", "arguments": {"limit": 10**12, "triggers": ["x"]}},
        ),
        _request(
            11,
            "tools/call",
            {"name": "select_frameworks", "arguments": {"context": "idea " * 400_000}},
        ),
        _request(12, "tools/call", {"name": "get_framework", "arguments": {"id": "x" * 1_000_000}}),
        _request(
            13,
            "tools/call",
            {
                "name": "read_neo4j_cypher",
                "arguments": {"cypher_query": "MATCH (n) RETURN n " * 50_000},
            },
        ),
        _request(14, "resources/read", {"uri": None}),
    ]
    for offset, uri in enumerate(PATH_TRICKS):
        lines.append(_request(100 + offset, "resources/read", {"uri": uri}))
        lines.append(_request(200 + offset, "skills/get", {"uri": uri}))
    lines.append(_request(999, "ping"))
    sent = {m["id"] for m in lines if isinstance(m, dict)}
    return _exchange(lines, sent - {5})


def test_unknown_methods_are_method_not_found(hostile: tuple[dict[int, Any], str]) -> None:
    answers, _ = hostile
    assert answers[1]["error"]["code"] == METHOD_NOT_FOUND
    assert answers[2]["error"]["code"] == METHOD_NOT_FOUND


@pytest.mark.parametrize("ident", [3, 4, 6, 7, 8, 14])
def test_malformed_params_are_invalid_params(
    hostile: tuple[dict[int, Any], str], ident: int
) -> None:
    answers, _ = hostile
    assert answers[ident]["error"]["code"] == INVALID_PARAMS, answers[ident]


@pytest.mark.parametrize("ident", [9, 10, 11, 12, 13])
def test_bad_and_huge_tool_arguments_are_tool_errors_with_a_reason(
    hostile: tuple[dict[int, Any], str], ident: int
) -> None:
    answers, _ = hostile
    answer = answers[ident]
    result = answer.get("result")
    if result is None:  # refused before the tool, as a protocol error
        assert answer["error"]["code"] == INVALID_PARAMS
        return
    assert result["isError"] is True
    assert result["content"][0]["text"].strip()


@pytest.mark.parametrize("offset", range(len(PATH_TRICKS)))
def test_path_tricks_in_skill_uris_find_nothing(
    hostile: tuple[dict[int, Any], str], offset: int
) -> None:
    answers, _ = hostile
    for ident in (100 + offset, 200 + offset):
        assert "result" not in answers[ident], answers[ident]
        assert answers[ident]["error"]["code"] == INVALID_PARAMS


def test_the_server_stays_up_and_writes_no_traceback(hostile: tuple[dict[int, Any], str]) -> None:
    answers, stderr = hostile
    assert answers[999]["result"] == {}
    # The SDK drops a line that is not JSON-RPC (no id to answer, or params not an object).
    assert 5 not in answers
    assert "Traceback" not in stderr
    assert all(line.startswith("mindrian mcp: ") for line in stderr.splitlines()), stderr
