"""The registry MCP server, spoken to by the official client over a real stdio pipe."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import neo4j
import pytest
from graph_factories import SIX, by_id
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mindrian.graph import EmbeddedRegistry, GraphError, Neo4jRegistry, write_registry_yaml
from mindrian.mcp.server import _plain
from mindrian.testing.neo4j_server import Neo4jServer

ROOT = Path(__file__).resolve().parents[3]


async def _session_calls(
    registry_path: Path | None,
    calls: list[tuple[str, dict[str, Any]]],
    env: dict[str, str] | None = None,
) -> tuple[Any, ...]:
    """Initialise, list the tools, then make ``calls``; the server reads ``registry_path``, or
    without one what ``env`` names (``NEO4J_*``)."""
    chosen = [] if registry_path is None else ["--registry", str(registry_path)]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mindrian.mcp", *chosen], cwd=ROOT, env=env
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return init, tools, results


#: What the tests ask the server, in order.
EXCHANGE_CALLS: list[tuple[str, dict[str, Any]]] = [
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
    (
        "read_neo4j_cypher",
        {
            "cypher_query": "MATCH (f:Framework)-[c:CHAINS_TO]->(t:Framework {id: $target}) "
            "WHERE f.id > $last_seen_id "
            "RETURN f.id AS id, c.weight AS weight ORDER BY id LIMIT 2",
            "parameters": {"target": "pws", "last_seen_id": ""},
        },
    ),
    ("read_neo4j_cypher", {"cypher_query": "MATCH (f:Framework) DETACH DELETE f"}),
]


@pytest.fixture(scope="module")
def exchange(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, ...]:
    path = tmp_path_factory.mktemp("mcp") / "registry.yaml"
    write_registry_yaml(SIX, path)
    return anyio.run(_session_calls, path, EXCHANGE_CALLS)


def test_handshake_names_the_server(exchange: tuple[Any, ...]) -> None:
    init, _, _ = exchange
    assert init.server_info.name == "mindrian-registry"


def test_lists_both_tools_with_schemas(exchange: tuple[Any, ...]) -> None:
    _, tools, _ = exchange
    by_name = {tool.name: tool for tool in tools.tools}
    assert sorted(by_name) == ["get_framework", "read_neo4j_cypher", "select_frameworks"]
    assert by_name["read_neo4j_cypher"].input_schema["required"] == ["cypher_query"]
    # Either a context or triggers: neither is required on its own.
    assert "required" not in by_name["select_frameworks"].input_schema
    assert by_name["get_framework"].input_schema["required"] == ["id"]


def test_select_returns_scored_frameworks(exchange: tuple[Any, ...]) -> None:
    _, _, (full, limited, *_) = exchange
    assert not full.is_error
    chosen = full.structured_content["frameworks"]
    assert [c["id"] for c in chosen] == ["minto", "scenario", "csio", "trending", "pws"]
    assert [c["score"] for c in chosen] == pytest.approx([1.0, 1.0, 0.6, 0.4, 0.36])
    assert [c["id"] for c in limited.structured_content["frameworks"]] == ["csio"]


def test_get_framework_returns_the_record_or_not_found(
    exchange: tuple[Any, ...],
) -> None:
    _, _, (_, _, found, missing, *_) = exchange
    assert found.structured_content == {
        "found": True,
        "framework": by_id("jtbd").to_plain(),
    }
    assert missing.structured_content == {"found": False, "framework": None}


def test_guarded_read_answers_with_rows_and_efficiency_warnings(
    exchange: tuple[Any, ...],
) -> None:
    _, _, (*_, read, write) = exchange
    assert not read.is_error
    # jtbd (0.5), minto (0.9) and scenario (0.3) chain to pws; keyset page of two.
    assert read.structured_content["rows"] == [
        {"id": "jtbd", "weight": 0.5},
        {"id": "minto", "weight": 0.9},
    ]
    (warning,) = read.structured_content["warnings"]
    assert warning.startswith("RETURN c.weight AS weight returns more than id and name")
    assert write.is_error
    text = write.content[0].text
    assert "[write_clause] DETACH writes to the graph" in text
    assert "[pagination]" in text


def _serve_once(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mindrian.mcp", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )

    async def ask() -> Any:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool("select_frameworks", {"triggers": ["scqa"]})

    return anyio.run(ask)


def _ids(result: Any) -> list[str]:
    return [c["id"] for c in result.structured_content["frameworks"]]


def test_the_database_is_served_read_only_beside_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "registry.lbug"
    with EmbeddedRegistry(path) as writer:
        writer.register_many(SIX)
        # A build holding the writer's connection does not stop agents from reading.
        assert _ids(_serve_once(tmp_path, "--registry", str(path)))[0] == "csio"
    with EmbeddedRegistry(path, read_only=True) as reader:
        with pytest.raises(GraphError, match="read-only"):
            reader.register(by_id("jtbd"))


def test_a_missing_database_is_an_error_and_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "registry.lbug"
    with pytest.raises(GraphError, match="does not exist"):
        EmbeddedRegistry(path, read_only=True)
    done = subprocess.run(
        [sys.executable, "-m", "mindrian.mcp", "--registry", str(path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 1 and "does not exist" in done.stderr
    assert not path.parent.exists()


def test_without_arguments_it_serves_the_committed_export(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.mindrian]\n", encoding="utf-8")
    write_registry_yaml(SIX, tmp_path / "generated" / "registry.yaml")
    assert _ids(_serve_once(tmp_path))[0] == "csio"
    assert not (tmp_path / ".mindrian").exists()


def test_the_project_root_names_the_registry_whatever_the_working_folder(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.mindrian]\n", encoding="utf-8")
    write_registry_yaml((by_id("csio"),), tmp_path / "generated" / "registry.yaml")
    inner = tmp_path / "skills" / "deep"
    inner.mkdir(parents=True)
    # A stray generated/ under the working folder is not the project's registry.
    write_registry_yaml((by_id("jtbd"),), inner / "generated" / "registry.yaml")
    assert _ids(_serve_once(inner)) == ["csio"]


def test_the_environment_names_the_registry(tmp_path: Path) -> None:
    yaml_path = tmp_path / "elsewhere.yaml"
    write_registry_yaml((by_id("csio"),), yaml_path)
    write_registry_yaml(SIX, tmp_path / "generated" / "registry.yaml")
    assert _ids(_serve_once(tmp_path, env={"MINDRIAN_REGISTRY": str(yaml_path)})) == ["csio"]


def test_no_registry_at_all_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.mindrian]\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mindrian.mcp"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={
            k: v
            for k, v in {**os.environ, "PYTHONPATH": str(ROOT)}.items()
            if k != "MINDRIAN_REGISTRY"
        },
    )
    assert done.returncode == 1 and "no registry" in done.stderr


def test_on_a_neo4j_registry_it_answers_as_on_the_file(
    exchange: tuple[Any, ...], neo4j_server: Neo4jServer
) -> None:
    """``NEO4J_URI`` set and no ``--registry``: the server reads Neo4j. The same frameworks give
    the same answers as from registry.yaml; the guard refuses the write; a stored datetime (a
    ``neo4j.time.DateTime``) comes back as ISO 8601 text."""
    with Neo4jRegistry(neo4j_server.uri, neo4j_server.user, neo4j_server.password) as graph:
        graph.register_many(SIX)
    env = {**neo4j_server.env(), "MINDRIAN_CACHE_DIR": os.environ["MINDRIAN_CACHE_DIR"]}
    stamped = (
        "read_neo4j_cypher",
        {
            "cypher_query": "MATCH (f:Framework) WHERE f.id > $last_seen_id "
            "RETURN f.id AS id, f.updated_at AS at ORDER BY id LIMIT 1",
            "parameters": {"last_seen_id": ""},
        },
    )
    _, _, (*answers, timed) = anyio.run(_session_calls, None, [*EXCHANGE_CALLS, stamped], env)
    _, _, expected = exchange
    assert [a.structured_content for a in answers] == [e.structured_content for e in expected]
    assert answers[-1].is_error and "[write_clause]" in answers[-1].content[0].text
    (row,) = timed.structured_content["rows"]
    assert row["id"] == "csio"
    stamp = datetime.datetime.fromisoformat(row["at"])
    assert stamp.tzinfo is not None and stamp.year >= 2026


def test_neo4j_temporal_values_become_iso_text() -> None:
    utc = datetime.UTC
    values = {
        "at": neo4j.time.DateTime(2026, 1, 2, 3, 4, 5, 123456789, tzinfo=utc),
        "on": neo4j.time.Date(2026, 1, 2),
        "time": neo4j.time.Time(3, 4, 5),
        "took": neo4j.time.Duration(days=2, seconds=3),
        "list": [neo4j.time.Date(2026, 1, 3)],
    }
    assert _plain(values) == {
        "at": "2026-01-02T03:04:05.123456789+00:00",
        "on": "2026-01-02",
        "time": "03:04:05.000000000",
        "took": "P2DT3S",
        "list": ["2026-01-03"],
    }
