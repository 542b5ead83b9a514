"""The registry as MCP tools: ``select_frameworks``, ``get_framework``, ``read_neo4j_cypher``.

Backed by an embedded registry file, or by a ``registry.yaml`` loaded into an
in-memory registry, so agents can choose frameworks without a Neo4j server.

``read_neo4j_cypher`` is the guarded graph tool of seed 004: every query is
checked by :func:`mindrian.guards.check_read_query` against :data:`REGISTRY_SCOPE`
(no writes, keyset pagination, only the registry's labels, no level mixing)
before it runs in a read-only transaction, and trap 5's warnings (return only
``id`` and ``name``) come back beside the rows.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from mindrian.graph import (
    DEFAULT_SELECT_LIMIT,
    EmbeddedRegistry,
    GraphError,
    Registry,
    registry_from_yaml,
)
from mindrian.graph import queries as q
from mindrian.guards import CypherRejected, Scope, check_read_query, efficiency_warnings
from mindrian.routing.candidates import describe

__all__ = ["REGISTRY_SCOPE", "SERVER_NAME", "build_server", "open_source_registry"]

#: What ``read_neo4j_cypher`` may read: the registry's own labels and relationship types.
REGISTRY_SCOPE = Scope(
    labels=frozenset(q.LABELS), relationship_types=frozenset(q.RELATIONSHIP_TYPES)
)

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
        context: str | None = None,
    ) -> dict[str, Any]:
        """Best registered frameworks, best first. With triggers: 0.6 for a trigger match,
        0.4 for a problem-type match, plus 0.3 x the chaining weight to frameworks already
        used. With context (the user's words, triggers empty): ranked by text relevance
        over each framework's name, description, triggers and problem types, plus the same
        problem-type, chaining and usage terms, as `mindrian select "..."` ranks; the first
        is `confident` when the router stands behind it alone. Each comes with its
        `description` and `not_for`, what its author says it is not for: read them to
        choose between near neighbours.
        """
        if context:
            if triggers:
                raise ValueError("give context or triggers, not both")
            chosen = registry.select_text(context, problem_types or (), previous or (), limit)
        else:
            chosen = registry.select(triggers, problem_types or (), previous or (), limit=limit)
        return {"frameworks": [c.plain() for c in describe(chosen, registry.get)]}

    @server.tool()
    def get_framework(
        id: str,
    ) -> dict[str, Any]:
        """One registered framework with its triggers, problem types and relationships."""
        record = registry.get(id)
        plain = record.to_plain() if record is not None else None
        return {"found": record is not None, "framework": plain}

    @server.tool()
    def read_neo4j_cypher(
        cypher_query: str, parameters: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Run one read-only Cypher query on the framework registry and return its rows.

        Labels: Framework, ProblemType, Session; relationships: CHAINS_TO, GOOD_FOR,
        USED_BY. End with RETURN ... ORDER BY key LIMIT n (n <= 100); no SKIP/OFFSET:
        the next page adds WHERE key > $last_seen_id. Return f.id and f.name (or
        aggregates) and ask get_framework for details; values go in parameters.
        """
        params = dict(parameters or {})
        violations = check_read_query(cypher_query, REGISTRY_SCOPE, params)
        if violations:
            # A ToolError's text reaches the model, which can fix the query and retry.
            raise ToolError(str(CypherRejected(violations)))
        try:
            rows = registry.read_cypher(cypher_query, params)
        except GraphError as exc:
            raise ToolError(f"query failed: {exc}") from None
        return {
            "rows": [{k: _plain(v) for k, v in row.items()} for row in rows],
            "warnings": list(efficiency_warnings(cypher_query)),
        }

    return server


def _plain(value: Any) -> Any:
    """A database value as JSON data: the embedded engine returns Decimal sums and datetimes,
    Neo4j its own temporal types (ISO 8601 text, to the nanosecond)."""
    temporal = _neo4j_temporal(value)
    if temporal is not None:
        return temporal
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _neo4j_temporal(value: Any) -> str | None:
    """``neo4j.time``'s Date, Time, DateTime or Duration as ISO 8601, else None.

    Looked up among loaded modules: a value of these types exists only once the driver
    imported them, and a server on an embedded registry never imports the driver.
    """
    module = sys.modules.get("neo4j.time")
    if module is None:
        return None
    if isinstance(value, (module.Date, module.Time, module.DateTime, module.Duration)):
        return str(value.iso_format())
    return None
