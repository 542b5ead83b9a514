"""The catalog of MCP servers a skill may name.

Built-in entries cover the servers of seed 000 §4.1, each pointing at a real
published server, plus the project's own ``mindrian`` server. Projects add or
override entries in ``[tool.mindrian.mcp]`` of pyproject.toml or in an
``mcp.yaml`` beside it. An entry holds how to start or reach the server, the
*names* of the environment variables it needs (never values) and the tools it
offers.

Seed corrections (tested in tests/builder/test_tool_assembly.py): seed 000
§4.1 lists neo4j tools as ``read_cypher``/``write_cypher``/``get_schema`` and
pinecone tools as ``search_records``/``upsert_records``; the published servers
call them ``read_neo4j_cypher``/``write_neo4j_cypher``/``get_neo4j_schema``
and ``search-records``/``upsert-records``. The catalog uses the real names.

Write tools are opt-in: an entry's ``write_tools`` are given to an agent only
when its skill names them in ``tools:``; a skill that names the server alone
gets the rest. The ``neo4j`` entry so offers ``read_neo4j_cypher`` and
``get_neo4j_schema`` by default, never ``write_neo4j_cypher`` unasked. The
project's own ``mindrian`` server offers the guarded ``read_neo4j_cypher`` over
the registry (checked by ``mindrian.guards``, run in a read-only transaction).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from builder.pipeline.errors import SourceLocation, ToolAssemblyError

__all__ = [
    "BUILTIN_CATALOG",
    "CatalogEntry",
    "build_catalog",
]


@dataclass(frozen=True)
class CatalogEntry:
    """How to reach one MCP server and what it offers."""

    name: str
    """Catalog name skills use (``neo4j``)."""
    description: str
    """What the server is for."""
    tools: tuple[str, ...]
    """Tool names the server offers."""
    command: str = ""
    """Executable of a stdio server."""
    args: tuple[str, ...] = ()
    """Its arguments."""
    url: str = ""
    """Endpoint of a streamable-HTTP server."""
    env: tuple[str, ...] = ()
    """Environment variables it needs, by name."""
    package: str = ""
    """Where it is published (``pypi:…``, ``npm:…``, ``hosted:…``)."""
    write_tools: tuple[str, ...] = ()
    """Tools (among ``tools``) that change data: given only to skills that name them."""
    origin: str = "builtin"
    """``builtin``, ``pyproject.toml`` or ``mcp.yaml``."""

    @property
    def default_tools(self) -> tuple[str, ...]:
        """What a skill naming the server without a tool list gets: every tool but the writes."""
        return tuple(t for t in self.tools if t not in self.write_tools)

    @property
    def transport(self) -> str:
        """``stdio`` when started as a command, else ``streamable-http``."""
        return "stdio" if self.command else "streamable-http"


BUILTIN_CATALOG: Mapping[str, CatalogEntry] = {
    e.name: e
    for e in (
        CatalogEntry(
            name="mindrian",
            description="This project's framework registry (select_frameworks, get_framework, "
            "guarded read_neo4j_cypher).",
            command="python",
            args=("-m", "mindrian.mcp"),
            tools=("select_frameworks", "get_framework", "read_neo4j_cypher"),
            package="mindrian (this project)",
        ),
        CatalogEntry(
            name="neo4j",
            description="Cypher access to a Neo4j knowledge graph (Neo4j Labs server).",
            command="uvx",
            args=("mcp-neo4j-cypher@0.6.0", "--transport", "stdio"),
            env=("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE"),
            tools=("read_neo4j_cypher", "write_neo4j_cypher", "get_neo4j_schema"),
            write_tools=("write_neo4j_cypher",),
            package="pypi:mcp-neo4j-cypher==0.6.0",
        ),
        CatalogEntry(
            name="pinecone",
            description="Pinecone vector indexes and documentation (Pinecone's developer server).",
            command="npx",
            args=("-y", "@pinecone-database/mcp@0.3.0"),
            env=("PINECONE_API_KEY",),
            tools=(
                "search-docs",
                "list-indexes",
                "describe-index",
                "describe-index-stats",
                "create-index-for-model",
                "upsert-records",
                "search-records",
                "cascading-search",
                "rerank-documents",
            ),
            package="npm:@pinecone-database/mcp@0.3.0",
        ),
        CatalogEntry(
            name="render",
            description="Render services, deploys, logs and metrics (Render's hosted server; "
            "bearer API key).",
            url="https://mcp.render.com/mcp",
            env=("RENDER_API_KEY",),
            tools=(
                "list_workspaces",
                "select_workspace",
                "get_selected_workspace",
                "list_services",
                "get_service",
                "create_web_service",
                "create_static_site",
                "create_cron_job",
                "update_environment_variables",
                "list_deploys",
                "get_deploy",
                "list_logs",
                "list_log_label_values",
                "get_metrics",
                "list_postgres_instances",
                "get_postgres",
                "create_postgres",
                "query_render_postgres",
                "list_key_value",
                "get_key_value",
                "create_key_value",
            ),
            package="hosted:render-oss/render-mcp-server",
        ),
        CatalogEntry(
            name="n8n",
            description="n8n node documentation, validation and workflow management (n8n-mcp).",
            command="npx",
            args=("-y", "n8n-mcp@2.87.0"),
            env=("N8N_API_URL", "N8N_API_KEY"),
            tools=(
                "tools_documentation",
                "search_nodes",
                "get_node",
                "validate_node",
                "validate_workflow",
                "search_templates",
                "get_template",
                "n8n_create_workflow",
                "n8n_get_workflow",
                "n8n_list_workflows",
                "n8n_update_full_workflow",
                "n8n_update_partial_workflow",
                "n8n_delete_workflow",
                "n8n_validate_workflow",
                "n8n_autofix_workflow",
                "n8n_test_workflow",
                "n8n_executions",
                "n8n_health_check",
            ),
            package="npm:n8n-mcp@2.87.0",
        ),
        CatalogEntry(
            name="tavily",
            description="Web search and page extraction (Tavily's server).",
            command="npx",
            args=("-y", "tavily-mcp@0.2.22"),
            env=("TAVILY_API_KEY",),
            tools=(
                "tavily_search",
                "tavily_extract",
                "tavily_crawl",
                "tavily_map",
                "tavily_research",
            ),
            package="npm:tavily-mcp@0.2.22",
        ),
    )
}


@functools.cache
def _entry_schema() -> Mapping[str, Any]:
    from importlib import resources  # only a tool assembly reads the schema

    text = (
        resources.files("builder")
        .joinpath("schemas/mcp_server.schema.json")
        .read_text(encoding="utf-8")
    )
    schema: Mapping[str, Any] = json.loads(text)
    return schema


def _entry(name: str, data: Any, origin: str) -> CatalogEntry:
    import jsonschema  # imported here: loading the configuration must not pay for it

    validator = jsonschema.Draft202012Validator(_entry_schema())
    problems = [
        f"{'/'.join(str(p) for p in e.absolute_path) or '(entry)'}: {e.message}"
        for e in validator.iter_errors(data)
    ]
    if not problems:
        problems = [
            f"write_tools: {tool!r} is not one of its tools"
            for tool in data.get("write_tools", ())
            if tool not in data["tools"]
        ]
    if problems:
        raise ToolAssemblyError(
            f"MCP catalog entry {name!r} in {origin} is invalid: {'; '.join(sorted(problems))}",
            location=SourceLocation(origin),
            code="T010",
        )
    return CatalogEntry(
        name=name,
        description=data.get("description", ""),
        tools=tuple(data["tools"]),
        command=data.get("command", ""),
        args=tuple(data.get("args", ())),
        url=data.get("url", ""),
        env=tuple(data.get("env", ())),
        package=data.get("package", ""),
        write_tools=tuple(data.get("write_tools", ())),
        origin=origin,
    )


def build_catalog(
    extra: Mapping[str, Any], origin: str = "[tool.mindrian.mcp]"
) -> Mapping[str, CatalogEntry]:
    """Built-in entries overlaid with ``extra`` (plain data from the configuration), sorted by
    name."""
    merged = dict(BUILTIN_CATALOG)
    for name in sorted(extra):
        merged[name] = _entry(name, extra[name], origin)
    return {name: merged[name] for name in sorted(merged)}
