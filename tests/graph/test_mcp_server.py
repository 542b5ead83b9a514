"""The registry MCP server, spoken to by the official client over a real stdio pipe."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from graph_factories import SIX, by_id

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mindrian.graph import write_registry_yaml

ROOT = Path(__file__).resolve().parents[2]


async def _session_calls(
    registry_path: Path, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[Any, ...]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mindrian.mcp", "--registry", str(registry_path)],
        cwd=ROOT,
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            results = [
                await session.call_tool(name, arguments) for name, arguments in calls
            ]
    return init, tools, results


@pytest.fixture(scope="module")
def exchange(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, ...]:
    path = tmp_path_factory.mktemp("mcp") / "registry.yaml"
    write_registry_yaml(SIX, path)
    calls = [
        (
            "select_frameworks",
            {
                "triggers": ["scqa"],
                "problem_types": ["ill-defined"],
                "previous": ["pws"],
            },
        ),
        ("select_frameworks", {"triggers": ["scqa"], "limit": 1}),
        ("get_framework", {"id": "jtbd"}),
        ("get_framework", {"id": "missing"}),
    ]
    return anyio.run(_session_calls, path, calls)


def test_handshake_names_the_server(exchange: tuple[Any, ...]) -> None:
    init, _, _ = exchange
    assert init.server_info.name == "mindrian-registry"


def test_lists_both_tools_with_schemas(exchange: tuple[Any, ...]) -> None:
    _, tools, _ = exchange
    by_name = {tool.name: tool for tool in tools.tools}
    assert sorted(by_name) == ["get_framework", "select_frameworks"]
    assert by_name["select_frameworks"].input_schema["required"] == ["triggers"]
    assert by_name["get_framework"].input_schema["required"] == ["id"]


def test_select_returns_scored_frameworks(exchange: tuple[Any, ...]) -> None:
    _, _, (full, limited, _, _) = exchange
    assert not full.is_error
    chosen = full.structured_content["frameworks"]
    assert [c["id"] for c in chosen] == ["minto", "scenario", "csio", "pws", "trending"]
    assert [c["score"] for c in chosen] == pytest.approx([1.27, 1.09, 0.6, 0.4, 0.4])
    assert [c["id"] for c in limited.structured_content["frameworks"]] == ["csio"]


def test_get_framework_returns_the_record_or_not_found(
    exchange: tuple[Any, ...],
) -> None:
    _, _, (_, _, found, missing) = exchange
    assert found.structured_content == {
        "found": True,
        "framework": by_id("jtbd").to_plain(),
    }
    assert missing.structured_content == {"found": False, "framework": None}
