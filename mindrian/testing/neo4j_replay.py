"""A Neo4j driver double that answers the registry's own statements from an embedded registry.

:class:`ReplayDriver` stands in for ``neo4j.Driver`` under
:class:`mindrian.graph.Neo4jRegistry` (pass ``driver_factory=driver.connect``).
Every statement the registry sends must be the Neo4j text of one of
:data:`mindrian.graph.queries.ALL_QUERIES`, with exactly the parameters it declares; it is
recorded (query name, parameters, access mode) and answered by running the same query in
the embedded dialect on the backing registry, in a read-only transaction. So the Neo4j
code path (sessions, transaction functions, record decoding) is exercised offline and is
checked for what it would send a server; no Neo4j server takes part, and writes other
than the schema's constraints are refused (register into the backing registry instead).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from mindrian.errors import MindrianError
from mindrian.graph import queries as q
from mindrian.graph.base import Registry, check_params
from mindrian.graph.dialect import embedded_text

__all__ = ["ReplayDriver", "SentStatement", "UnknownStatement"]

_BY_TEXT: Mapping[str, q.Query] = {query.text: query for query in q.ALL_QUERIES.values()}
_SCHEMA = frozenset(statement.name for statement in q.SCHEMA)
_READ = "READ"


class UnknownStatement(MindrianError, ValueError):
    """A statement the registry's query set does not hold, or a write the double cannot replay."""


@dataclass(frozen=True)
class SentStatement:
    """One statement as the Neo4j registry sent it."""

    query: str
    """Name of the query in :data:`mindrian.graph.queries.ALL_QUERIES`."""
    params: Mapping[str, Any]
    """The parameters sent with it."""
    mode: str
    """The session's access mode, ``READ`` or ``WRITE``."""


@dataclass(frozen=True)
class _Record:
    values: Mapping[str, Any]

    def data(self) -> dict[str, Any]:
        return dict(self.values)


@dataclass
class _Transaction:
    driver: ReplayDriver
    mode: str

    def run(self, text: str, params: Mapping[str, Any]) -> list[_Record]:
        query = _BY_TEXT.get(text)
        if query is None:
            raise UnknownStatement(f"not one of the registry's queries: {text[:80]!r}")
        check_params(query, params)
        self.driver.sent.append(SentStatement(query.name, dict(params), self.mode))
        if query.name in _SCHEMA:
            return []  # the embedded engine's tables are its constraints (dialect.py)
        if self.mode != _READ:
            raise UnknownStatement(f"{query.name}: the replay double answers reads only")
        rows = self.driver.backend.read_cypher(embedded_text(query), params)
        return [_Record(row) for row in rows]


@dataclass
class _Session:
    driver: ReplayDriver
    mode: str

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute_read(self, work: Callable[[_Transaction], Any]) -> Any:
        return work(_Transaction(self.driver, self.mode))

    def execute_write(self, work: Callable[[_Transaction], Any]) -> Any:
        return work(_Transaction(self.driver, self.mode))


@dataclass
class ReplayDriver:
    """``neo4j.Driver`` as far as :class:`mindrian.graph.Neo4jRegistry` uses it."""

    backend: Registry
    """Where the answers come from (an embedded registry holding the same frameworks)."""
    sent: list[SentStatement] = field(default_factory=list)
    """Every statement received, in order."""

    def connect(self, uri: str, *, auth: tuple[str, str]) -> ReplayDriver:
        """The ``driver_factory`` to give :class:`mindrian.graph.Neo4jRegistry`: this driver."""
        return self

    def verify_connectivity(self) -> None:
        """Always reachable."""

    def session(self, database: str | None = None, default_access_mode: str = "WRITE") -> _Session:
        """A session in ``default_access_mode`` (the database name is not used)."""
        return _Session(self, default_access_mode)

    def close(self) -> None:
        """Nothing to release: the backing registry belongs to the caller."""
