"""``mindrian mcp`` over stdio with the official SDK client, as an MCP host starts it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp.shared.exceptions import MCPError
from mcp_clients import ROOT, raw, stdio_client_of, stdio_params

import mindrian
from mindrian.graph import load_registry_yaml


@dataclass(frozen=True)
class Exchange:
    """What one stdio session saw, and what the server wrote on stderr."""

    protocol: str
    version: str
    extensions: dict[str, Any]
    tools: dict[str, Any]
    by_context: Any
    refusals: list[Any]
    listing: dict[str, Any]
    got: dict[str, Any]
    unknown_skill: MCPError
    reads: dict[str, bytes]
    agent_run: Any
    stderr: str


async def _session(errlog_path: Path) -> Exchange:
    params = stdio_params("--agents", "--model", "scripted:examples/pws.yaml")
    with errlog_path.open("w") as errlog:
        async with stdio_client_of(params, errlog) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            by_context = await client.call_tool(
                "select_frameworks", {"context": "is my startup idea worth building"}
            )
            refusals = [
                await client.call_tool(
                    "read_neo4j_cypher", {"cypher_query": "MATCH (f:Framework) DETACH DELETE f"}
                ),
                await client.call_tool("select_frameworks", {"context": "x", "triggers": ["y"]}),
                await client.call_tool("select_frameworks", {"limit": "many", "triggers": ["y"]}),
            ]
            listing = await raw(client, "skills/list", {})
            got = await raw(client, "skills/get", {"uri": "skill://pws/SKILL.md"})
            with pytest.raises(MCPError) as unknown:
                await raw(client, "skills/get", {"uri": "skill://nowhere/SKILL.md"})
            reads = {}
            for skill in listing["skills"]:
                for resource in skill["resources"]:
                    read = await client.read_resource(resource["uri"])
                    (content,) = read.contents
                    text = getattr(content, "text", None)
                    reads[resource["uri"]] = text.encode() if text is not None else b""
            agent_run = await client.call_tool(
                "pws-validation", {"message": "Used lab equipment marketplace"}
            )
            exchange = Exchange(
                client.protocol_version,
                client.server_info.version if client.server_info else "",
                dict(client.server_capabilities.extensions or {}),
                tools,
                by_context,
                refusals,
                listing,
                got,
                unknown.value,
                reads,
                agent_run,
                "",
            )
    return Exchange(**{**exchange.__dict__, "stderr": errlog_path.read_text()})


@pytest.fixture(scope="module")
def exchange(tmp_path_factory: pytest.TempPathFactory) -> Exchange:
    return anyio.run(_session, tmp_path_factory.mktemp("mcp") / "stderr.log")


def test_the_handshake_reports_mindrians_version_and_the_skills_extension(
    exchange: Exchange,
) -> None:
    assert exchange.protocol == "2026-07-28"
    assert exchange.version == mindrian.__version__
    assert exchange.extensions == {"io.modelcontextprotocol/skills": {}}


def test_a_context_alone_selects_frameworks(exchange: Exchange) -> None:
    assert not exchange.by_context.is_error
    assert exchange.by_context.structured_content["frameworks"][0]["id"] == "pws-validation"
    schema = exchange.tools["select_frameworks"].input_schema
    assert "required" not in schema or schema["required"] == []


def test_refusals_reach_the_client_with_their_reason_and_one_log_line_each(
    exchange: Exchange,
) -> None:
    cypher, both, bad_limit = exchange.refusals
    assert all(r.is_error for r in exchange.refusals)
    assert "[write_clause]" in cypher.content[0].text
    assert "give context or triggers, not both" in both.content[0].text
    assert "limit" in bad_limit.content[0].text
    lines = exchange.stderr.splitlines()
    assert len(lines) == len(exchange.refusals), exchange.stderr
    assert "Traceback" not in exchange.stderr


def test_skills_list_names_every_registered_skill_with_its_manifest(exchange: Exchange) -> None:
    skills = exchange.listing["skills"]
    uris = [s["uri"] for s in skills]
    assert uris == sorted(uris)
    registered = load_registry_yaml(ROOT / "generated" / "registry.yaml")
    assert len(skills) == len(registered)
    pws = next(s for s in skills if s["uri"] == "skill://pws/SKILL.md")
    source = (ROOT / "skills" / "pws" / "SKILL.md").read_bytes()
    front = yaml.safe_load(source.decode().split("---\n")[1])
    assert pws["frontmatter"] == front
    assert pws["resources"][0] == {
        "uri": "skill://pws/SKILL.md",
        "digest": "sha256:" + hashlib.sha256(source).hexdigest(),
        "size": len(source),
    }
    assert exchange.got["skill"] == pws


def test_an_unknown_skill_is_invalid_params(exchange: Exchange) -> None:
    assert exchange.unknown_skill.code == -32602


def test_every_skill_file_reads_back_byte_identical_to_its_digest(exchange: Exchange) -> None:
    for skill in exchange.listing["skills"]:
        for resource in skill["resources"]:
            data = exchange.reads[resource["uri"]]
            assert len(data) == resource["size"]
            assert "sha256:" + hashlib.sha256(data).hexdigest() == resource["digest"]
    for name in ("pws", "larry"):
        source = (ROOT / "skills" / name / "SKILL.md").read_bytes()
        assert exchange.reads[f"skill://{name}/SKILL.md"] == source


def test_an_agent_runs_as_a_tool_and_returns_its_handoff_result(exchange: Exchange) -> None:
    run = exchange.agent_run
    assert not run.is_error, run.content
    result = run.structured_content
    assert (result["from_agent"], result["success"]) == ("pws-validation", True)
    assert result["output"].startswith("# PWS scorecard")
    assert exchange.tools["pws-validation"].output_schema["properties"]["success"]
