"""The registry as MCP tools: ``select_frameworks`` and ``get_framework``.

Backed by an embedded registry file, or by a ``registry.yaml`` loaded into an
in-memory registry, so agents can choose frameworks without a Neo4j server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from mindrian.graph import (
    DEFAULT_SELECT_LIMIT,
    EmbeddedRegistry,
    Registry,
    registry_from_yaml,
)

__all__ = ["SERVER_NAME", "build_server", "open_source_registry"]

#: Name the server announces in the MCP handshake.
SERVER_NAME = "mindrian-registry"
_YAML_SUFFIXES = (".yaml", ".yml")


def open_source_registry(path: str | Path) -> Registry:
    """A registry.yaml file becomes an in-memory registry; anything else is a database file.

    The database is opened read-only: the server only answers questions, and a
    read-only open neither creates a stray file nor locks out a build that is
    registering at the same time.
    """
    source = Path(path)
    if source.suffix in _YAML_SUFFIXES:
        return registry_from_yaml(source)
    return EmbeddedRegistry(source, read_only=True)


def build_server(registry: Registry) -> MCPServer:
    """An MCP server whose tools read ``registry`` (the caller closes it)."""
    server: MCPServer = MCPServer(
        SERVER_NAME,
        instructions="Pick thinking frameworks by trigger words, problem types and history.",
    )

    @server.tool()
    def select_frameworks(
        triggers: list[str],
        problem_types: list[str] | None = None,
        previous: list[str] | None = None,
        limit: int = DEFAULT_SELECT_LIMIT,
    ) -> dict[str, Any]:
        """Best registered frameworks, best first: 0.6 for a trigger match, 0.4 for a
        problem-type match, plus 0.3 x the chaining weight to frameworks already used.
        """
        chosen = registry.select(triggers, problem_types or (), previous or (), limit=limit)
        return {"frameworks": [{"id": s.id, "name": s.name, "score": s.score} for s in chosen]}

    @server.tool()
    def get_framework(
        id: str,
    ) -> dict[str, Any]:
        """One registered framework with its triggers, problem types and relationships."""
        record = registry.get(id)
        plain = record.to_plain() if record is not None else None
        return {"found": record is not None, "framework": plain}

    return server
