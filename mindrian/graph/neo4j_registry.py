"""The Neo4j registry backend, on the official ``neo4j`` driver.

Writes go through ``session.execute_write``: the driver retries the whole transaction
function on transient errors, which is safe because every statement MERGEs by id.
Reads use READ access sessions with ``execute_read``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit, urlunsplit

from mindrian.graph import queries as q
from mindrian.graph.base import Registry, Row, Run, check_params
from mindrian.graph.errors import GraphError

__all__ = ["DriverFactory", "Neo4jRegistry", "redact_uri"]

_T = TypeVar("_T")
_REDACTED = "***"
#: The driver's access modes (``neo4j.WRITE_ACCESS``, ``neo4j.READ_ACCESS``), without importing it.
_WRITE_ACCESS, _READ_ACCESS = "WRITE", "READ"


class DriverFactory(Protocol):
    """Builds a driver; :func:`neo4j.GraphDatabase.driver` or a test double."""

    def __call__(self, uri: str, *, auth: tuple[str, str]) -> Any: ...


def redact_uri(uri: str) -> str:
    """The URI with any password in its user-info replaced by ``***``."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return "<unparseable Neo4j URI>"
    if parts.password is None:
        return uri
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port is not None else ""
    netloc = f"{parts.username}:{_REDACTED}@{host}{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


class Neo4jRegistry(Registry):
    """Registry in a Neo4j database; connects and creates the constraints on construction."""

    def __init__(
        self,
        uri: str,
        user: str,
        password: str,
        database: str | None = None,
        *,
        driver_factory: DriverFactory | None = None,
    ) -> None:
        self._uri = redact_uri(uri)
        self._user = user
        self._database = database
        self._password = password
        self._driver = None
        # The driver costs ~0.2 s to import; only a Neo4j registry pays for it.
        import neo4j
        from neo4j.exceptions import DriverError, Neo4jError

        try:
            factory = driver_factory or neo4j.GraphDatabase.driver
            self._driver = factory(uri, auth=(user, password))
            self._driver.verify_connectivity()
        except (Neo4jError, DriverError, ValueError, OSError) as exc:
            self.close()
            raise self._error("cannot connect", exc) from None
        for statement in q.SCHEMA:
            self._write(functools.partial(_run_alone, statement))

    def __repr__(self) -> str:
        return f"Neo4jRegistry(uri={self._uri!r}, user={self._user!r}, database={self._database!r})"

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None

    def _write(self, work: Callable[[Run], _T]) -> _T:
        return self._session_call(_WRITE_ACCESS, work)

    def _read(self, work: Callable[[Run], _T]) -> _T:
        return self._session_call(_READ_ACCESS, work)

    def _session_call(self, mode: str, work: Callable[[Run], _T]) -> _T:
        from neo4j.exceptions import DriverError, Neo4jError

        if self._driver is None:
            raise GraphError(f"Neo4j registry at {self._uri} is closed")
        try:
            with self._driver.session(database=self._database, default_access_mode=mode) as session:
                execute = session.execute_write if mode == _WRITE_ACCESS else session.execute_read
                return execute(lambda tx: work(_runner(tx)))
        except (Neo4jError, DriverError) as exc:
            raise self._error("query failed", exc) from None

    def _error(self, what: str, exc: BaseException) -> GraphError:
        # The driver's own text is kept for diagnosis, minus anything resembling the password.
        detail = str(exc).replace(self._password, _REDACTED) if self._password else str(exc)
        return GraphError(
            f"Neo4j at {self._uri} (user {self._user}): {what}: {type(exc).__name__}: {detail}"
        )


def _runner(tx: Any) -> Run:
    def run(query: q.Query, params: Mapping[str, Any]) -> list[Row]:
        check_params(query, params)
        # Records are read inside the transaction function: results die with it.
        return [record.data() for record in tx.run(query.text, dict(params))]

    return run


def _run_alone(statement: q.Query, run: Run) -> list[Row]:
    """Run one parameter-free statement (the schema's)."""
    return run(statement, {})
