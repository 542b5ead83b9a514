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
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from mcp.server.extension import Extension
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mindrian import __version__
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
from mindrian.routing.semantic import configured_encoder

__all__ = [
    "MAX_SELECT_LIMIT",
    "REGISTRY_SCOPE",
    "SERVER_NAME",
    "build_server",
    "open_source_registry",
]

#: What ``read_neo4j_cypher`` may read: the registry's own labels and relationship types.
REGISTRY_SCOPE = Scope(
    labels=frozenset(q.LABELS), relationship_types=frozenset(q.RELATIONSHIP_TYPES)
)

#: Name the server announces in the MCP handshake.
SERVER_NAME = "mindrian-registry"
#: Most frameworks one ``select_frameworks`` call returns (a registry holds a few hundred at most).
MAX_SELECT_LIMIT = 100
#: Longest context a selection ranks (``mindrian serve`` takes a message of the same length).
MAX_TEXT_CHARS = 100_000
#: Most triggers, problem types, previous frameworks or query parameters in one call.
MAX_WORDS = 100
#: Longest trigger, problem type or framework id.
MAX_WORD_CHARS = 200
#: Longest Cypher query (the guard tokenizes all of it before anything runs).
MAX_QUERY_CHARS = 10_000
#: A list argument of words, bounded in count and length.
Words = Annotated[
    list[Annotated[str, Field(max_length=MAX_WORD_CHARS)]] | None, Field(max_length=MAX_WORDS)
]
_YAML_SUFFIXES = (".yaml", ".yml")


def open_source_registry(path: str | Path) -> Registry:
    """A registry.yaml file becomes an in-memory registry; anything else is a database file.

    The database is opened read-only: the server only answers questions, and a
    read-only open neither creates a stray file nor locks out a build that is
    registering at the same time.
    """
    source = Path(path)
    registry: Registry = (
        registry_from_yaml(source)
        if source.suffix in _YAML_SUFFIXES
        else EmbeddedRegistry(source, read_only=True)
    )
    registry.use_encoder(configured_encoder(os.environ))
    return registry


def build_server(registry: Registry, *, extensions: Sequence[Extension] = ()) -> MCPServer:
    """An MCP server whose tools read ``registry`` (the caller closes it).

    ``extensions`` add what a project serves beside the registry (its skills, its
    agents as tools). Every failure a caller can cause reaches it as a tool error
    with its reason and costs the server one log line, never a traceback.
    """
    server: MCPServer = MCPServer(
        SERVER_NAME,
        instructions="Pick thinking frameworks by trigger words, problem types and history.",
        version=__version__,
        extensions=list(extensions),
    )

    @server.tool()
    def select_frameworks(
        context: Annotated[str | None, Field(max_length=MAX_TEXT_CHARS)] = None,
        triggers: Words = None,
        problem_types: Words = None,
        previous: Words = None,
        limit: Annotated[int, Field(ge=1, le=MAX_SELECT_LIMIT)] = DEFAULT_SELECT_LIMIT,
    ) -> dict[str, Any]:
        """Best registered frameworks, best first; give context or triggers, not both.

        With context (the user's words): ranked by text relevance over each
        framework's name, description, triggers and problem types, plus the
        problem-type, chaining and usage terms, as `mindrian select "..."` ranks; the
        first is `confident` when the router stands behind it alone. With triggers: 0.6
        for a trigger match, 0.4 for a problem-type match, plus 0.3 x the chaining
        weight to frameworks already used. Each comes with its `description` and
        `not_for`, what its author says it is not for: read them to choose between near
        neighbours.
        """
        if context and triggers:
            raise ToolError("give context or triggers, not both")
        if not context and not triggers:
            raise ToolError("give context (the user's words) or triggers")
        try:
            if context:
                chosen = registry.select_text(context, problem_types or (), previous or (), limit)
            else:
                chosen = registry.select(triggers or (), problem_types or (), previous or (), limit)
            return {"frameworks": [c.plain() for c in describe(chosen, registry.get)]}
        except GraphError as exc:
            raise ToolError(f"selection failed: {exc}") from None

    @server.tool()
    def get_framework(
        id: Annotated[str, Field(max_length=MAX_WORD_CHARS)],
    ) -> dict[str, Any]:
        """One registered framework with its triggers, problem types and relationships."""
        try:
            record = registry.get(id)
        except GraphError as exc:
            raise ToolError(f"lookup failed: {exc}") from None
        plain = record.to_plain() if record is not None else None
        return {"found": record is not None, "framework": plain}

    @server.tool()
    def read_neo4j_cypher(
        cypher_query: Annotated[str, Field(max_length=MAX_QUERY_CHARS)],
        parameters: Annotated[dict[str, Any] | None, Field(max_length=MAX_WORDS)] = None,
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
