"""Neo4jRegistry: what it sends (a driver double), and on the test Neo4j server."""

from __future__ import annotations

import contextlib
import functools
import itertools
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import neo4j
import pytest
from graph_factories import SIX, by_id
from neo4j.exceptions import AuthError, ServiceUnavailable, TransientError

from mindrian.graph import (
    EmbeddedRegistry,
    FrameworkRecord,
    GraphError,
    Neo4jRegistry,
    open_registry,
    redact_uri,
)
from mindrian.graph import queries as q
from mindrian.graph.neo4j_registry import (
    BUMP_REVISION,
    LOCK_SCHEMA,
    READ_REVISION,
    REVISION_SCHEMA,
)
from mindrian.testing.neo4j_server import Neo4jServer

PASSWORD = "s3cret-pa55"


@dataclass
class FakeRecord:
    values: dict[str, Any]

    def data(self) -> dict[str, Any]:
        return dict(self.values)


@dataclass
class FakeTx:
    """Records statements; answers from ``responder`` (text -> rows)."""

    responder: Callable[[str, dict[str, Any]], list[dict[str, Any]]]
    statements: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    fail_with: Exception | None = None

    def run(self, text: str, params: dict[str, Any]) -> list[FakeRecord]:
        self.statements.append((text, params))
        if self.fail_with is not None:
            raise self.fail_with
        rows = self.responder(text, params)
        if text == BUMP_REVISION.text and not rows:  # as a server answers it
            rows = [{"n": 1, "generation": "fake"}]
        return [FakeRecord(row) for row in rows]


@dataclass
class Transaction:
    kind: str
    mode: str
    database: str | None
    tx: FakeTx


@dataclass
class FakeDriver:
    """Stands in for neo4j.Driver: sessions run transaction functions on FakeTx."""

    responder: Callable[[str, dict[str, Any]], list[dict[str, Any]]] = lambda text, params: []
    connect_error: Exception | None = None
    transient_failures: int = 0
    transactions: list[Transaction] = field(default_factory=list)
    closed: bool = False

    def verify_connectivity(self) -> None:
        if self.connect_error is not None:
            raise self.connect_error

    def session(self, database: str | None, default_access_mode: str) -> FakeSession:
        return FakeSession(self, database, default_access_mode)

    def close(self) -> None:
        self.closed = True


@dataclass
class FakeSession:
    driver: FakeDriver
    database: str | None
    mode: str

    def __enter__(self) -> FakeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def _execute(self, kind: str, work: Callable[[FakeTx], Any]) -> Any:
        # Like the real driver: a transient error reruns the whole function on a new tx.
        while True:
            tx = FakeTx(self.driver.responder)
            if self.driver.transient_failures:
                self.driver.transient_failures -= 1
                tx.fail_with = TransientError("leader switch")
            try:
                result = work(tx)
            except TransientError:
                continue
            self.driver.transactions.append(Transaction(kind, self.mode, self.database, tx))
            return result

    def execute_write(self, work: Callable[[FakeTx], Any]) -> Any:
        return self._execute("write", work)

    def execute_read(self, work: Callable[[FakeTx], Any]) -> Any:
        return self._execute("read", work)


def connect(driver: FakeDriver, uri: str = "neo4j://db.example:7687") -> Neo4jRegistry:
    seen: dict[str, Any] = {}

    def factory(given_uri: str, *, auth: tuple[str, str]) -> FakeDriver:
        seen.update(uri=given_uri, auth=auth)
        return driver

    registry = Neo4jRegistry(uri, "neo4j", PASSWORD, "frameworks", driver_factory=factory)
    assert seen == {"uri": uri, "auth": ("neo4j", PASSWORD)}
    return registry


def names_of(tx: FakeTx) -> list[str]:
    by_text = {
        query.text: query.name
        for query in (
            *q.ALL_QUERIES.values(),
            *LOCK_SCHEMA,
            *REVISION_SCHEMA,
            BUMP_REVISION,
            READ_REVISION,
        )
    }
    return [by_text[text] for text, _ in tx.statements]


def test_construction_creates_the_constraints_in_write_transactions() -> None:
    driver = FakeDriver()
    connect(driver)
    assert [names_of(t.tx) for t in driver.transactions] == [
        ["constraint_framework_id"],
        ["constraint_problem_type_name"],
        ["constraint_session_id"],
        ["constraint_registry_lock"],
        ["create_registry_lock"],
        ["constraint_registry_revision"],
        ["create_registry_revision"],
    ]
    assert {(t.kind, t.mode, t.database) for t in driver.transactions} == {
        ("write", neo4j.WRITE_ACCESS, "frameworks")
    }


def test_register_is_one_write_transaction_with_node_and_relationships() -> None:
    driver = FakeDriver()
    registry = connect(driver)
    driver.transactions.clear()
    registry.register(by_id("jtbd"))

    (only,) = driver.transactions
    assert (only.kind, only.mode) == ("write", neo4j.WRITE_ACCESS)
    assert names_of(only.tx) == [
        "bump_registry_revision",
        "outgoing_chains",
        "outgoing_good_for",
        "register_framework",  # one framework, one problem type: a row as parameters
        "set_routing_bodies",
        "merge_chains",
        "merge_one_good_for",
    ]
    # Neo4j gets the Neo4j text: the database clock, not the embedded rewrite.
    register_text, register_params = only.tx.statements[3]
    assert "datetime()" in register_text
    assert register_params["name"] == by_id("jtbd").name
    assert only.tx.statements[4][1] == {"bodies": [{"id": "jtbd", "body": ""}]}
    assert only.tx.statements[5][1] == {
        "chains": [
            {"source": "jtbd", "target": "csio", "weight": 0.2},
            {"source": "jtbd", "target": "pws", "weight": 0.5},
        ]
    }


def test_a_new_framework_is_registered_without_reading_what_it_had() -> None:
    """``new``: the caller knows no relationship leaves the framework yet (phase 7, from the
    sealed registry.yaml), so none is read to be deleted."""
    driver = FakeDriver()
    registry = connect(driver)
    driver.transactions.clear()
    registry.register(by_id("jtbd"), new=True)
    (only,) = driver.transactions
    assert names_of(only.tx) == [
        "bump_registry_revision",
        "register_framework",
        "set_routing_bodies",
        "merge_chains",
        "merge_one_good_for",
    ]


def test_register_many_writes_one_transaction_per_batch() -> None:
    driver = FakeDriver()
    registry = connect(driver)
    driver.transactions.clear()
    assert registry.register_many(SIX, batch_size=4) == 6
    batches = [t.tx.statements[3][1]["frameworks"] for t in driver.transactions]
    assert [len(rows) for rows in batches] == [4, 2]


def test_stale_relationships_are_deleted_and_placeholders_pruned() -> None:
    def responder(text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if text == q.OUTGOING_CHAINS.text:
            return [
                {"source": "minto", "target": "old"},
                {"source": "minto", "target": "pws"},
            ]
        return []

    driver = FakeDriver(responder=responder)
    registry = connect(driver)
    driver.transactions.clear()
    registry.register(by_id("minto"))
    (only,) = driver.transactions
    statements = dict(zip(names_of(only.tx), (p for _, p in only.tx.statements), strict=True))
    assert statements["delete_chains"] == {"pairs": [{"source": "minto", "target": "old"}]}
    assert statements["prune_placeholders"] == {"ids": ["old"]}


def test_transient_errors_rerun_the_whole_transaction_function() -> None:
    driver = FakeDriver(transient_failures=2)
    registry = connect(driver)  # absorbs the two failures while creating constraints
    driver.transient_failures = 1
    driver.transactions.clear()
    registry.register(by_id("pws"))
    (committed,) = driver.transactions
    assert names_of(committed.tx)[:4] == [
        "bump_registry_revision",
        "outgoing_chains",
        "outgoing_good_for",
        "register_framework",
    ]


def _torn_get(moving: bool) -> Neo4jRegistry:
    """A registry whose first read of minto's chains meets a relationship another client
    deleted meanwhile (its weight reads as null); the revision moves with it when ``moving``.
    """
    minto = {
        "id": "minto",
        "name": "Minto",
        "type": "framework",
        "description": "d",
        "triggers": ["scqa"],
        "problem_types": [],
        "version": "1",
        "source_digest": "x",
    }
    revisions = iter([1, 2])  # the concurrent commit lands during the first read only
    chain_reads = iter([[{"target": "pws", "weight": None}]])

    def responder(text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if text == READ_REVISION.text:
            return [{"n": next(revisions, 2) if moving else 1, "generation": "g"}]
        if text == q.GET_FRAMEWORK.text:
            return [minto]
        if text == q.GET_CHAINS.text:
            return next(chain_reads, [{"target": "pws", "weight": 0.5}])
        return []

    return connect(FakeDriver(responder=responder))


def test_a_read_torn_by_a_concurrent_registration_is_done_again() -> None:
    record = _torn_get(moving=True).get("minto")
    assert record is not None and record.chains_to == (("pws", 0.5),)


def test_a_malformed_read_of_a_registry_nobody_changed_is_not_hidden() -> None:
    with pytest.raises(TypeError):
        _torn_get(moving=False).get("minto")


def test_reads_use_read_sessions() -> None:
    minto = {
        "id": "minto",
        "name": "Minto",
        "triggers": ["scqa"],
        "problem_types": ["ill-defined"],
    }
    answers = {
        READ_REVISION.text: [{"n": 1, "generation": "g"}],
        q.ROUTING_USAGE_REVISION.text: [{"n": 0, "successes": None}],
        q.SELECT_FRAMEWORKS.text: [{"id": "minto", "name": "Minto", "score": 1.0}],
        q.ROUTING_TRIGGERS.text: [minto],
    }
    driver = FakeDriver(responder=lambda text, params: answers.get(text, []))
    registry = connect(driver)
    driver.transactions.clear()
    for _ in range(2):
        chosen = registry.select(["scqa"], ["ill-defined"], ["pws"])
        assert [(s.id, s.score) for s in chosen] == [("minto", 1.0)]
    assert registry.get("minto") is None
    assert registry.export() == ()
    assert {(t.kind, t.mode) for t in driver.transactions} == {("read", neo4j.READ_ACCESS)}
    first, second = (names_of(t.tx) for t in driver.transactions[:2])
    revisions = [READ_REVISION.name, q.ROUTING_USAGE_REVISION.name]
    # The first selection at a revision is the query; the second reads the stored fields
    # once into postings and computes the score from them. Each read is bracketed by the
    # registry's revision (its one node, never a scan of the frameworks), read again when a
    # registration committed in between.
    bracket = READ_REVISION.name
    assert first == [bracket, *revisions, q.SELECT_FRAMEWORKS.name, bracket]
    assert second == [
        bracket,
        *revisions,
        q.ROUTING_TRIGGERS.name,
        q.EXPORT_GOOD_FOR.name,
        q.EXPORT_CHAINS.name,
        q.ROUTING_USAGE.name,
        bracket,
    ]
    select_params = driver.transactions[0].tx.statements[3][1]
    assert select_params == {
        "triggers": ["scqa"],
        "problem_types": ["ill-defined"],
        "previous_frameworks": ["pws"],
        "limit": 5,
    }


@pytest.mark.parametrize(
    "error",
    [
        AuthError("The client is unauthorized due to authentication failure."),
        ServiceUnavailable("down"),
    ],
    ids=["auth", "unreachable"],
)
def test_connection_failure_is_one_graph_error_without_password(
    error: Exception,
) -> None:
    driver = FakeDriver(connect_error=error)
    with pytest.raises(GraphError) as caught:
        connect(driver, uri=f"neo4j://neo4j:{PASSWORD}@db.example:7687")
    message = str(caught.value)
    assert "neo4j://neo4j:***@db.example:7687" in message
    assert type(error).__name__ in message
    assert PASSWORD not in message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert driver.closed


def test_driver_text_echoing_the_password_is_scrubbed() -> None:
    driver = FakeDriver(connect_error=ServiceUnavailable(f"cannot use {PASSWORD}"))
    with pytest.raises(GraphError) as caught:
        connect(driver)
    assert PASSWORD not in str(caught.value) and "cannot use ***" in str(caught.value)


def test_query_failure_is_a_graph_error() -> None:
    driver = FakeDriver()
    registry = connect(driver)
    driver.responder = lambda text, params: (_ for _ in ()).throw(
        neo4j.exceptions.ClientError("bad statement")
    )
    with pytest.raises(GraphError, match="query failed: ClientError"):
        registry.get("x")


def test_repr_and_close_hide_the_password() -> None:
    driver = FakeDriver()
    registry = connect(driver, uri=f"bolt://neo4j:{PASSWORD}@db.example")
    assert PASSWORD not in repr(registry)
    assert "bolt://neo4j:***@db.example" in repr(registry)
    registry.close()
    assert driver.closed
    with pytest.raises(GraphError, match="closed"):
        registry.get("x")


@pytest.mark.parametrize(
    "uri, expected",
    [
        ("neo4j://host:7687", "neo4j://host:7687"),
        (
            f"neo4j+s://user:{PASSWORD}@host:7687/db?x=1",
            "neo4j+s://user:***@host:7687/db?x=1",
        ),
        (f"bolt://user:{PASSWORD}@host", "bolt://user:***@host"),
    ],
)
def test_redact_uri(uri: str, expected: str) -> None:
    assert redact_uri(uri) == expected


def test_unreachable_real_server_through_open_registry() -> None:
    env = {
        "NEO4J_URI": "bolt://127.0.0.1:1",
        "NEO4J_USERNAME": "neo4j",
        "NEO4J_PASSWORD": PASSWORD,
    }
    with pytest.raises(GraphError) as caught:
        open_registry(None, None, env=env)
    assert "bolt://127.0.0.1:1" in str(caught.value)
    assert PASSWORD not in str(caught.value)


def test_open_registry_needs_credentials_with_a_uri() -> None:
    with pytest.raises(GraphError, match="NEO4J_USERNAME or NEO4J_PASSWORD"):
        open_registry(None, None, env={"NEO4J_URI": "bolt://127.0.0.1:1"})


def test_open_registry_defaults_to_embedded(tmp_path: Path) -> None:
    with open_registry(None, tmp_path / "r.lbug", env={}) as registry:
        assert isinstance(registry, EmbeddedRegistry)
        registry.register(by_id("csio"))
        assert registry.get("csio") == by_id("csio")


def test_open_registry_has_no_default_registry_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It once opened .mindrian/registry.lbug under the working directory when given no path.
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.mindrian]\n", encoding="utf-8")
    monkeypatch.chdir(project)
    with pytest.raises(TypeError, match="'path'"):
        open_registry(env={})  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="'uri'"):
        open_registry()  # type: ignore[call-arg]
    with open_registry(None, None, env={}) as registry:
        assert isinstance(registry, EmbeddedRegistry)
        registry.register(by_id("csio"))
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml"]


# --- on the test Neo4j server -----------------------------------------------------------


def _real(server: Neo4jServer, read_only: bool = False) -> Neo4jRegistry:
    return Neo4jRegistry(server.uri, server.user, server.password, read_only=read_only)


def test_the_test_server_is_neo4j_community_5_26(neo4j_server: Neo4jServer) -> None:
    with _real(neo4j_server) as registry:
        (row,) = registry.read_cypher(
            "CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition"
        )
    assert row["name"] == "Neo4j Kernel" and row["edition"] == "community"
    assert row["versions"][0].startswith("5.26.")


def test_a_read_a_registration_committed_during_is_done_again() -> None:
    # Neo4j reads committed data statement by statement: a revision that moved between the
    # start and the end of a read means its statements may have seen two registrations.
    revisions = iter([1, 2, 2, 2])

    def responder(text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if text == READ_REVISION.text:
            return [{"n": next(revisions), "generation": "g"}]
        return []

    driver = FakeDriver(responder=responder)
    registry = connect(driver)
    driver.transactions.clear()
    assert registry.get("minto") is None
    (read,) = driver.transactions
    assert names_of(read.tx).count(q.GET_FRAMEWORK.name) == 2  # 1 != 2, then 2 == 2

    ever = itertools.count()
    driver.responder = lambda text, params: (
        [{"n": next(ever), "generation": "g"}] if text == READ_REVISION.text else []
    )
    with pytest.raises(GraphError, match="changed during each of 20 attempts"):
        registry.get("minto")


def test_a_database_without_the_revision_node_counts_its_frameworks_instead() -> None:
    # Registered by an older mindrian, read by a read-only handle that creates nothing.
    latest = iter(["t0", "t0", "t1"])  # the open's probe, then a read a registration overlaps

    def responder(text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if text == READ_REVISION.text:
            return [{"n": None, "generation": None}]
        if text == q.ROUTING_REVISION.text:
            return [{"n": 1, "latest": next(latest, "t2")}]
        return []

    driver = FakeDriver(responder=responder)
    registry = Neo4jRegistry(
        "bolt://db", "neo4j", PASSWORD, read_only=True, driver_factory=lambda uri, auth: driver
    )
    driver.transactions.clear()
    assert registry.get("minto") is None
    (read,) = driver.transactions
    assert names_of(read.tx).count(q.GET_FRAMEWORK.name) == 2  # t1 != t2, then t2 == t2


def test_every_change_of_frameworks_raises_the_revision_first_and_usage_does_not() -> None:
    answers = {q.DEMOTE_FRAMEWORK.text: [{"id": "jtbd"}], q.RECORD_USAGE.text: [{"id": "jtbd"}]}
    driver = FakeDriver(responder=lambda text, params: answers.get(text, []))
    registry = connect(driver)
    driver.transactions.clear()
    registry.register(by_id("jtbd"))
    registry.register_many(SIX, batch_size=4)
    assert registry.unregister("jtbd")
    registry.record_usage("jtbd", "session", "handoff", True)
    firsts = [names_of(t.tx)[0] for t in driver.transactions]
    assert firsts == [BUMP_REVISION.name] * 4 + [q.RECORD_USAGE.name]
    assert all(names_of(t.tx).count(BUMP_REVISION.name) == 1 for t in driver.transactions[:4])


def _revision_node(registry: Neo4jRegistry) -> list[dict[str, Any]]:
    return registry.read_cypher("MATCH (r:RegistryRevision) RETURN r.n AS n, r.name AS name")


def test_a_reader_notices_each_registration_and_retire_by_another_client(
    neo4j_server: Neo4jServer,
) -> None:
    sentence = "what job is the customer hiring this product to do"
    with _real(neo4j_server) as writer, _real(neo4j_server, read_only=True) as reader:
        assert _revision_node(reader) == [{"n": 0, "name": "frameworks"}]
        assert reader.select_text(sentence) == ()  # its index is built at this revision
        writer.register(by_id("jtbd"))
        assert [s.id for s in reader.select_text(sentence)] == ["jtbd"]
        assert writer.unregister("jtbd")
        assert reader.select_text(sentence) == ()
        assert _revision_node(reader) == [{"n": 2, "name": "frameworks"}]
        (constraint,) = reader.read_cypher(
            "SHOW CONSTRAINTS YIELD name, labelsOrTypes, properties, type "
            "WHERE name = 'registry_revision_name' RETURN labelsOrTypes, properties, type"
        )
    assert constraint == {
        "labelsOrTypes": ["RegistryRevision"],
        "properties": ["name"],
        "type": "UNIQUENESS",
    }


def _versions() -> tuple[FrameworkRecord, ...]:
    """Two registrations of one framework, every field and relationship different."""
    return tuple(
        replace(
            by_id("minto"),
            name=f"Minto {v}",
            triggers=(f"trigger-{v}",),
            chains_to=tuple((f"target-{v}-{k}", 0.5) for k in range(12)),
            good_for=tuple((f"type-{v}-{k}", 0.5) for k in range(12)),
            body=f"body {v}",
        )
        for v in "ab"
    )


def test_a_reader_sees_whole_registrations_while_another_client_writes(
    neo4j_server: Neo4jServer,
) -> None:
    versions = _versions()
    with _real(neo4j_server) as writer:
        writer.register(versions[0])
    done = threading.Event()

    def write() -> None:
        with _real(neo4j_server) as other:
            for turn in range(40):
                other.register(versions[turn % 2])
        done.set()

    thread = threading.Thread(target=write)
    thread.start()
    seen: list[FrameworkRecord | None] = []
    try:
        with _real(neo4j_server) as reader:
            while not done.is_set():
                seen.append(reader.get("minto"))
                seen.extend(r for r in reader.export() if r.id == "minto")
    finally:
        thread.join()
    mixed = [record for record in seen if record not in versions]
    assert not mixed, f"{len(mixed)} of {len(seen)} reads mixed two registrations"
    assert {record.name for record in seen if record} == {"Minto a", "Minto b"}


class _Proxy:
    """A TCP relay to the server that can cut every connection: the server going away."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self.sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass

    def cut(self) -> None:
        # shutdown() ends the accept() blocked in the relay's thread; close() alone does not.
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        for connection in self.sockets:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            connection.close()


def test_a_server_that_goes_away_is_one_line_naming_the_fix_and_nothing_half_written(
    neo4j_server: Neo4jServer,
) -> None:
    address = urlsplit(neo4j_server.uri)
    proxy = _Proxy((address.hostname or "", address.port or 7687))
    relayed = f"bolt://127.0.0.1:{proxy.port}"
    # The real driver, retrying a lost server for 1 s instead of its default 30.
    quick = functools.partial(neo4j.GraphDatabase.driver, max_transaction_retry_time=1.0)
    registry = Neo4jRegistry(
        relayed, neo4j_server.user, neo4j_server.password, driver_factory=quick
    )
    registry.register(by_id("pws"))
    proxy.cut()
    with pytest.raises(GraphError) as caught:
        registry.register_many(SIX)
    message = str(caught.value)
    assert "\n" not in message and relayed in message
    assert "is the server running and NEO4J_URI right?" in message
    assert neo4j_server.password not in message
    registry.close()
    with _real(neo4j_server) as direct:
        assert [r.id for r in direct.export()] == ["pws"]
