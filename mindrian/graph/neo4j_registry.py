"""The Neo4j registry backend, on the official ``neo4j`` driver.

Writes go through ``session.execute_write``: the driver retries the whole transaction
function on transient errors, which is safe because every statement MERGEs by id.
Reads use READ access sessions with ``execute_read``. Neo4j reads committed data statement by
statement, not from one snapshot, so a read of several statements (a framework and its
relationships, the routing index's fields) could mix two registrations; each read transaction
is therefore bracketed by the registry's revision and done again when a registration committed
in between (:func:`_whole`). The revision is one node, ``(:RegistryRevision {name:
'frameworks'})``, whose counter every registration and retire raises in its own transaction: a
read checks it by its unique index, where counting every framework and its latest
registration time cost a scan of them all, twice per read (~80 ms per selection at 10,000
frameworks). A database no writer of this version has opened yet has no such node; its
revision is then counted from the frameworks as before.

An ``exclusive`` registry holds the registry's writer lock from construction to
:meth:`~Neo4jRegistry.close`, as an embedded one holds its file's: a transaction kept open
on the one ``(:RegistryLock {name: 'registration'})`` node, which the server releases when
the transaction ends, rolled back by ``close`` or by the server once the connection of a
killed process is gone. Builds registering into one database at once (two builds, or the
shards of a CI matrix) thereby take turns, as they do on an embedded file.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit, urlunsplit

from mindrian.graph import queries as q
from mindrian.graph.base import Registry, Row, Run, Step, check_params, stored_revision
from mindrian.graph.errors import GraphError

__all__ = [
    "BUMP_REVISION",
    "LOCK_SCHEMA",
    "LOCK_WAIT_SECONDS",
    "READ_REVISION",
    "REVISION_SCHEMA",
    "DriverFactory",
    "Neo4jRegistry",
    "redact_uri",
]

_T = TypeVar("_T")
_REDACTED = "***"
#: The driver's access modes (``neo4j.WRITE_ACCESS``, ``neo4j.READ_ACCESS``), without importing it.
_WRITE_ACCESS, _READ_ACCESS = "WRITE", "READ"
#: How long the writer lock's transaction may live: past it the server ends it, so a holder
#: that hangs cannot stall every other build for longer, and a waiter gives up after as long.
LOCK_WAIT_SECONDS = 600.0
#: Neo4j-only statements of the writer lock, apart from :data:`queries.SCHEMA` (which every
#: generated registration.cypher shows): the lock node, unique by name, and taking it.
LOCK_SCHEMA = (
    q.Query(
        "constraint_registry_lock",
        "CREATE CONSTRAINT registry_lock_name IF NOT EXISTS\n"
        "FOR (l:RegistryLock) REQUIRE l.name IS UNIQUE",
    ),
    q.Query("create_registry_lock", "MERGE (:RegistryLock {name: 'registration'})"),
)
_TAKE_LOCK = "MATCH (l:RegistryLock {name: 'registration'})\nSET l.taken = true"
# The revision node: its counter, and a generation drawn when it is created, so a database
# emptied and filled again never repeats a revision a reader still holds (with its index).
_CREATE_REVISION = """\
MERGE (r:RegistryRevision {name: 'frameworks'})
ON CREATE SET r.n = 0, r.generation = randomUUID()"""
#: Neo4j-only statements of the registry's revision: its node, unique by name, and creating it.
REVISION_SCHEMA = (
    q.Query(
        "constraint_registry_revision",
        "CREATE CONSTRAINT registry_revision_name IF NOT EXISTS\n"
        "FOR (r:RegistryRevision) REQUIRE r.name IS UNIQUE",
    ),
    q.Query("create_registry_revision", _CREATE_REVISION),
)
#: Run first in every transaction that registers or retires frameworks: its write lock on the
#: one node also makes such transactions take turns. MERGE, as a database emptied under a
#: running writer has lost the node. It returns the revision the transaction leaves; the one
#: before is one less (the lock is taken before ``r.n`` is read, so no two writes share one).
BUMP_REVISION = q.Query(
    "bump_registry_revision",
    _CREATE_REVISION + "\nSET r.n = r.n + 1\nRETURN r.n AS n, r.generation AS generation",
)
#: The revision as a read sees it: one row, null where the node is missing.
READ_REVISION = q.Query(
    "read_registry_revision",
    "OPTIONAL MATCH (r:RegistryRevision {name: 'frameworks'})\n"
    "RETURN r.n AS n, r.generation AS generation",
)
#: How often a read is done again because a registration committed while it ran.
_READ_ATTEMPTS = 20
#: The server's status code for a database that does not exist.
_NO_DATABASE = "Neo.ClientError.Database.DatabaseNotFound"


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
        read_only: bool = False,
        exclusive: bool = False,
    ) -> None:
        """Connect; then, unless ``read_only``, create the constraints; with ``exclusive``, wait
        for the writer lock and hold it until :meth:`close`."""
        self._uri = redact_uri(uri)
        self._user = user
        self._database = database
        self._password = password
        self._driver = None
        self._lock: tuple[Any, Any] | None = None
        # The driver costs ~0.2 s to import; only a Neo4j registry pays for it.
        import neo4j
        from neo4j.exceptions import DriverError, Neo4jError

        try:
            # The server's notifications (a label not created yet, in an empty database) would
            # reach the user as driver log lines about the registry's own fixed queries.
            factory = driver_factory or functools.partial(
                neo4j.GraphDatabase.driver, notifications_min_severity="OFF"
            )
            self._driver = factory(uri, auth=(user, password))
            self._driver.verify_connectivity()
        except (Neo4jError, DriverError, ValueError, OSError) as exc:
            self.close()
            raise self._error("cannot connect", exc) from None
        try:
            if read_only:
                # The database is named by the first statement: a missing one fails here.
                self._read(functools.partial(_run_alone, q.COUNT_PROBLEM_TYPES))
                return
            for statement in (*q.SCHEMA, *LOCK_SCHEMA, *REVISION_SCHEMA):
                self._write(functools.partial(_run_alone, statement))
            if exclusive:
                self._take_lock()
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"Neo4jRegistry(uri={self._uri!r}, user={self._user!r}, database={self._database!r})"

    def _take_lock(self) -> None:
        """Open the transaction that holds the writer lock (waiting while another holds it)."""
        from neo4j.exceptions import DriverError, Neo4jError

        assert self._driver is not None
        session = self._driver.session(database=self._database, default_access_mode=_WRITE_ACCESS)
        try:
            transaction = session.begin_transaction(timeout=LOCK_WAIT_SECONDS)
            transaction.run(_TAKE_LOCK).consume()
        except (Neo4jError, DriverError) as exc:
            session.close()
            raise self._error("cannot take the registry's writer lock", exc) from None
        self._lock = (session, transaction)

    def close(self) -> None:
        """Release the writer lock (its transaction rolled back: it changed nothing) and the
        driver."""
        if self._lock is not None:
            session, transaction = self._lock
            self._lock = None
            with contextlib.suppress(Exception):  # a lost connection released it already
                transaction.rollback()
            with contextlib.suppress(Exception):
                session.close()
        if self._driver is not None:
            self._driver.close()
            self._driver = None

    def _write(self, work: Callable[[Run], _T]) -> _T:
        return self._session_call(_WRITE_ACCESS, work)

    def _write_frameworks(self, work: Callable[[Run], _T]) -> tuple[_T, Step | None]:
        return self._write(functools.partial(_bumped, work))

    def _read(self, work: Callable[[Run], _T]) -> _T:
        return self._session_call(_READ_ACCESS, functools.partial(_whole, work))

    def _framework_revision(self, run: Run) -> tuple[int, str]:
        return _revision(run)

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
        """One line: where, what failed, the server's message (any password scrubbed), and the
        fix when the failure says what it is."""
        from neo4j.exceptions import Neo4jError

        message = exc.message if isinstance(exc, Neo4jError) and exc.message else str(exc)
        detail = " ".join(message.split())
        if self._password:
            detail = detail.replace(self._password, _REDACTED)
        return GraphError(
            f"Neo4j at {self._uri} (user {self._user}): {what}: {type(exc).__name__}: "
            f"{detail}{_fix(exc, self._database)}"
        )


def _fix(exc: BaseException, database: str | None) -> str:
    """What to do about ``exc``, as a clause to end the message with; "" when it is not known."""
    from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable, SessionExpired

    if isinstance(exc, AuthError):
        return "; check NEO4J_USERNAME and NEO4J_PASSWORD"
    if isinstance(exc, Neo4jError) and exc.code == _NO_DATABASE:
        return (
            f"; the server has no database {database!r}: create it, or unset NEO4J_DATABASE to "
            "use the server's default (Neo4j Community has only that one)"
        )
    if isinstance(exc, (ServiceUnavailable, SessionExpired, OSError)):
        return (
            "; is the server running and NEO4J_URI right? Nothing of the failed transaction was "
            "kept: run the command again once the server answers"
        )
    return ""


def _runner(tx: Any) -> Run:
    def run(query: q.Query, params: Mapping[str, Any]) -> list[Row]:
        check_params(query, params)
        # Records are read inside the transaction function: results die with it.
        return [record.data() for record in tx.run(query.text, dict(params))]

    return run


def _bumped(work: Callable[[Run], _T], run: Run) -> tuple[_T, Step]:
    """``work`` after raising the registry's revision, in the same transaction; with the
    revision before and after."""
    (row,) = run(BUMP_REVISION, {})
    n, generation = int(row["n"]), str(row["generation"])
    return work(run), ((n - 1, generation), (n, generation))


def _revision(run: Run) -> tuple[int, str]:
    """The registry's revision: its node's (counter, generation), or, in a database without
    the node, counted from the frameworks."""
    (row,) = run(READ_REVISION, {})
    if row["n"] is None:
        return stored_revision(run)
    return int(row["n"]), str(row["generation"])


def _whole(work: Callable[[Run], _T], run: Run) -> _T:
    """``work``'s result from reads no registration committed during."""
    from neo4j.exceptions import DriverError, Neo4jError

    for _ in range(_READ_ATTEMPTS):
        before = _revision(run)
        try:
            result = work(run)
        except (Neo4jError, DriverError):
            raise
        except Exception:
            # A relationship deleted between its match and the read of its weight reads as
            # null, and the torn rows then fail to form a record: such a read is done again,
            # while a failure on a registry nobody changed is the registry's own.
            if _revision(run) == before:
                raise
            continue
        if _revision(run) == before:
            return result
    raise GraphError(
        f"the registry changed during each of {_READ_ATTEMPTS} attempts to read it; "
        "try again once the build registering into it is done"
    )


def _run_alone(statement: q.Query, run: Run) -> list[Row]:
    """Run one parameter-free statement (the schema's)."""
    return run(statement, {})
