"""The default registry backend: an embedded LadybugDB (Kùzu fork) database file."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from mindrian.graph import queries as q
from mindrian.graph.base import (
    DEFAULT_SELECT_LIMIT,
    Registry,
    Revision,
    Row,
    Run,
    Step,
    check_params,
)
from mindrian.graph.dialect import EMBEDDED_SCHEMA, EMBEDDED_TABLES, embedded_text
from mindrian.graph.errors import GraphError, RegistryBusy, RegistryDamaged
from mindrian.graph.index_cache import KeptIndex, index_cache_file
from mindrian.routing import glosses
from mindrian.routing.quick import (
    glossary_file,
    holds,
    quick_file,
    signature,
    stamp,
    write_quick,
)
from mindrian.routing.score import RankedCandidate, RoutingSnapshot

if TYPE_CHECKING:
    import ladybug

__all__ = ["BUFFER_POOL_BYTES", "CHECKPOINT_WAL_BYTES", "FORMAT_VERSION", "EmbeddedRegistry"]

_T = TypeVar("_T")
#: Bumped when the embedded tables change in a way older files cannot be read with.
FORMAT_VERSION = 1
#: The table holding the format marker; created with the registry, checked on every open.
FORMAT_SCHEMA: tuple[str, ...] = (
    "CREATE NODE TABLE IF NOT EXISTS MindrianRegistry("
    "key STRING, version INT64, PRIMARY KEY (key))",
)
_MARK_FORMAT = "MERGE (m:MindrianRegistry {key: 'format'}) SET m.version = $version"
_READ_FORMAT = "MATCH (m:MindrianRegistry {key: 'format'}) RETURN m.version"
_LOCK_POLL_SECONDS = 0.1
#: The engine's page cache. Its default, about 80 % of the machine's memory, costs tens of
#: milliseconds to set up and release on every open, which a build pays once per skill;
#: a registry of thousands of frameworks is a few tens of megabytes.
BUFFER_POOL_BYTES = 256 * 1024 * 1024
#: Write-ahead log size past which a commit folds the log into the database file; a writer's
#: close leaves it to the next fold (``force_checkpoint_on_close``). The engine folds at every
#: close by default, and a fold rewrites a string column that grew to fresh pages, freeing old
#: ones too small for the next, larger rewrite: filled one registration per process (phase 7),
#: a registry grew quadratically, to 691 MB for 1,000 frameworks of 1.8 KB bodies. Commits are
#: synced to the log either way; every open replays the log, so it is kept small.
CHECKPOINT_WAL_BYTES = 1024 * 1024
_NO_CHECKPOINT_ON_CLOSE = "CALL force_checkpoint_on_close=false"
#: Threads the engine runs a writer's statements on. A writer (phase 7, ``graph rebuild``) runs
#: many statements that each touch a few rows: with a worker per core, the workers' hand-offs
#: cost more CPU than they save (registering 100 frameworks in 4 opens, each read back and
#: selected, as phase 7 does: 0.91-1.03 CPU-s with the default, 0.70-0.79 with one thread).
_WRITER_QUERY_THREADS = 1
#: The second half of an embedded handle's revision: the first counts its framework writes.
_OWN_WRITES = "written through this handle"


class EmbeddedRegistry(Registry):
    """Registry in a LadybugDB file at ``path``, or in memory when ``path`` is None.

    ``path`` has no default: a library user or a test writing ``EmbeddedRegistry()``
    for a scratch registry must not open (and write into) whatever project registry
    lies under the working directory. A project's file is
    :attr:`mindrian.project.ProjectPaths.embedded_registry`.
    """

    def __init__(
        self,
        path: str | Path | None,
        *,
        read_only: bool = False,
        wait: float = 0.0,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        """Open (and, unless ``read_only``, create) the registry.

        Read-only opens never create the file and take no writer's lock, so any
        number of readers (agents asking the MCP server, ``select``) share the
        file with a build that registers into it. A writer finding the lock
        taken retries for up to ``wait`` seconds, telling ``on_wait`` once.
        An existing file must carry the registry's format marker: an empty,
        truncated or foreign file raises :class:`RegistryDamaged` instead of
        opening as an empty registry.
        """
        self._where = "in-memory database" if path is None else str(path)
        # Readers (select, the MCP server, agents) start over in every process: they keep the
        # text index on disk. A writer's index changes with its own writes, and one in memory
        # has no identity to key it on (its revision is new on every load).
        self._kept_index = None if path is None or not read_only else Path(path)
        # Taken before the open: the handle sees the file as it was then (mindrian.routing.quick).
        self._signature = None if self._kept_index is None else signature(self._kept_index)
        self._quick_kept = False
        self._framework_writes = 0
        # One connection serves one transaction at a time; MCP handlers may run in threads.
        # Reentrant: a block of calls made together (:meth:`together`) holds it throughout.
        self._lock = threading.RLock()
        # In such a block: whether its statements all succeeded so far (None: in none).
        self._together: bool | None = None
        existed = path is not None and Path(path).exists()
        if read_only and not existed:
            raise GraphError(
                f"cannot open embedded registry {self._where} read-only: it does not exist"
            )
        if existed:
            _refuse_empty_file(Path(path), self._where)  # type: ignore[arg-type]
        try:
            if path is not None and not read_only:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._database = _open_waiting(
                ":memory:" if path is None else str(path), read_only, wait, on_wait, self._where
            )
            from ladybug import Connection  # loaded on first open: most commands never open one

            self._connection = Connection(self._database)
            if not read_only:
                self._connection.execute(_NO_CHECKPOINT_ON_CLOSE)
            if existed:
                self._check_format()
            else:
                for statement in (*EMBEDDED_SCHEMA, *FORMAT_SCHEMA):
                    self._connection.execute(statement)
                self._connection.execute(_MARK_FORMAT, {"version": FORMAT_VERSION})
            if not read_only:
                for statement in EMBEDDED_SCHEMA:
                    self._connection.execute(statement)
        except GraphError:  # ours (damaged, busy): already says what to do
            self._close_quietly()
            raise
        except (RuntimeError, OSError) as exc:
            self._close_quietly()
            raise GraphError(f"cannot open embedded registry {self._where}: {exc}") from exc
        if read_only:
            self._check_tables()

    def _check_format(self) -> None:
        """Refuse a database without this program's format marker (see :class:`RegistryDamaged`)."""
        try:
            versions = [row["m.version"] for row in self._execute(_READ_FORMAT, {})]
        except GraphError:
            versions = []  # no marker table: not a file this program wrote
        if versions != [FORMAT_VERSION]:
            found = "no format marker" if not versions else f"format {versions[0]!r}"
            raise RegistryDamaged(
                f"embedded registry {self._where} is empty, damaged or from another version "
                f"({found}, expected {FORMAT_VERSION}); rebuild it from registry.yaml with "
                "`mindrian graph rebuild`"
            )

    def _close_quietly(self) -> None:
        for handle in ("_connection", "_database"):
            closable = getattr(self, handle, None)
            if closable is not None:
                closable.close()

    def __repr__(self) -> str:
        return f"EmbeddedRegistry({self._where!r})"

    def close(self) -> None:
        self._connection.close()
        self._database.close()

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file, so that the file alone holds every
        commit: before it is moved or copied without its log (a close leaves the log)."""
        with self._lock:
            self._execute("CHECKPOINT", {})

    def node_properties(self, framework_id: str) -> dict[str, Any] | None:
        """Every stored property of a Framework node (placeholders too), for diagnostics."""
        rows = self._read(
            lambda run: run(_NODE_PROPERTIES, {"id": framework_id}),
        )
        if not rows:
            return None
        node = rows[0]["f"]
        return {k: v for k, v in node.items() if not k.startswith("_")}

    def _check_tables(self) -> None:
        # A read-only open cannot add the tables a newer schema has; say so instead of
        # failing later with a binder error on the first selection.
        rows = self._execute("CALL show_tables() RETURN name", {})
        missing = sorted(set(EMBEDDED_TABLES) - {row["name"] for row in rows})
        what = f"tables {', '.join(missing)}"
        if not missing:
            columns = self._execute("CALL table_info('Framework') RETURN name", {})
            missing = [] if {"name": "body"} in columns else ["body"]
            what = "the Framework column body"
        if missing:
            self.close()
            raise GraphError(
                f"embedded registry {self._where} predates {what}; "
                "open it once for writing (mindrian register --all) to upgrade it"
            )

    def _index_cache_file(self) -> KeptIndex | None:
        return None if self._kept_index is None else index_cache_file(self._kept_index)

    def rank_text(
        self,
        text: str,
        problem_types: Iterable[str] = (),
        previous: Iterable[str] = (),
        limit: int = DEFAULT_SELECT_LIMIT,
        explain: bool = False,
    ) -> tuple[RankedCandidate, ...]:
        """:meth:`Registry.rank_text`; a read-only handle of a file then keeps the index it
        ranked with as a quick index too (once per handle), for one-shot selections."""
        ranked = super().rank_text(text, problem_types, previous, limit, explain)
        if self._signature is not None and not self._quick_kept and self._routing is not None:
            self._quick_kept = True
            self._keep_quick(self._signature, self._routing)
        return ranked

    def _keep_quick(self, found: str, snapshot: RoutingSnapshot) -> None:
        """Write the quick index of this file's state when opened (signature ``found``)."""
        assert self._kept_index is not None
        file = quick_file(self._kept_index)
        wanted = stamp(self._kept_index, found)
        if file is None or holds(file, wanted):
            return
        usage = self._usage[1] if self._usage is not None else {}
        glossary = glossary_file(file.parent.parent)
        words = None if glossary.is_file() else glosses.dictionary()
        write_quick(file, wanted, snapshot, usage, words)

    def _revisions(self, run: Run) -> tuple[Revision, tuple[int, int]]:
        # An open database keeps the state it opened with: another process's commits stay
        # invisible to it (only a new open reads them), so the graph changes only through
        # this object's writes, and counting them replaces two scans per selection.
        return (self._framework_writes, _OWN_WRITES), (self._usage_writes, 0)

    def _write(self, work: Callable[[Run], _T]) -> _T:
        return self._transaction("BEGIN TRANSACTION", work)

    def _write_frameworks(self, work: Callable[[Run], _T]) -> tuple[_T, Step | None]:
        def counted(run: Run) -> tuple[_T, Step]:
            # Counted inside the transaction, under the connection's lock, so the count a
            # selection reads always names one state; a transaction rolled back still counts
            # (its revision is then one nothing holds: a needless rebuild is only slower).
            self._framework_writes += 1
            after = self._framework_writes
            return work(run), ((after - 1, _OWN_WRITES), (after, _OWN_WRITES))

        return self._write(counted)

    def _read(self, work: Callable[[Run], _T]) -> _T:
        return self._transaction("BEGIN TRANSACTION READ ONLY", work)

    @contextlib.contextmanager
    def together(self) -> Iterator[None]:
        """The block's reads and writes in one write transaction: a commit syncs the engine's
        write-ahead log, and phase 7 checked each skill of a group in three or four of them
        (a registration, its reads back, its selection). Other threads wait for the block."""
        with self._lock:
            if self._together is not None:
                raise RuntimeError("the registry's calls are already made together")
            self._execute("BEGIN TRANSACTION", {})
            self._together = True
            try:
                yield
                if not self._together:  # a caller went on past a failed call
                    raise GraphError(f"embedded registry {self._where}: a statement failed")
                self._together = None
                self._execute("COMMIT", {})
            except BaseException:
                self._together = None
                self._rollback()
                # The revisions its writes counted name states the registry never kept: one more
                # of each names it as it is again, so nothing carried to them (trigger postings,
                # the text index) answers a selection.
                self._framework_writes += 1
                self._usage_writes += 1
                raise

    def _transaction(self, begin: str, work: Callable[[Run], _T]) -> _T:
        with self._lock:
            if self._together is not None:
                return self._joined(work)
            self._execute(begin, {})
            try:
                result = work(self._run)
            except BaseException:
                self._rollback()
                raise
            self._execute("COMMIT", {})
            return result

    def _joined(self, work: Callable[[Run], _T]) -> _T:
        """``work`` in the transaction :meth:`together` holds open; a failure fails the block
        (the engine may have ended the transaction with it)."""
        if not self._together:
            raise GraphError(f"embedded registry {self._where}: an earlier statement failed")
        try:
            return work(self._run)
        except BaseException:
            self._together = False
            raise

    def _rollback(self) -> None:
        try:
            self._connection.execute("ROLLBACK")
        except RuntimeError:
            # A failed statement already ended the transaction; nothing is left to undo.
            pass

    def _run(self, query: q.Query, params: Mapping[str, Any]) -> list[Row]:
        check_params(query, params)
        # A caller's text is run as written (and not cached per text like the fixed queries).
        text = query.text if query.name == q.CALLER_QUERY else embedded_text(query)
        return self._execute(text, params)

    def _execute(self, text: str, params: Mapping[str, Any]) -> list[Row]:
        try:
            result = self._connection.execute(text, dict(params))
        except RuntimeError as exc:
            raise GraphError(f"embedded registry {self._where}: {exc}") from exc
        assert not isinstance(result, list)  # one statement per call
        columns = result.get_column_names()
        return [dict(zip(columns, values, strict=True)) for values in result.get_all()]


def _refuse_empty_file(path: Path, where: str) -> None:
    """A zero-byte file would open as a fresh, empty registry: refuse it before the engine does."""
    if path.is_file() and path.stat().st_size == 0:
        raise RegistryDamaged(
            f"embedded registry {where} is an empty file (0 bytes); rebuild it from "
            "registry.yaml with `mindrian graph rebuild`"
        )


def _database(target: str, read_only: bool) -> ladybug.Database:
    from ladybug import Database

    return Database(
        target,
        read_only=read_only,
        buffer_pool_size=BUFFER_POOL_BYTES,
        checkpoint_threshold=CHECKPOINT_WAL_BYTES,
        # 0 (the engine's default): a worker per core.
        max_num_threads=0 if read_only else _WRITER_QUERY_THREADS,
    )


def _open_waiting(
    target: str,
    read_only: bool,
    wait: float,
    on_wait: Callable[[str], None] | None,
    where: str,
) -> ladybug.Database:
    """Open the database, retrying while another process holds its writer lock (``wait`` s)."""
    deadline = time.monotonic() + wait
    told = False
    while True:
        try:
            return _database(target, read_only)
        except RuntimeError as exc:
            if "lock" not in str(exc).lower():
                raise
            if time.monotonic() >= deadline:
                raise RegistryBusy(
                    f"embedded registry {where} is locked by another process "
                    f"(waited {wait:g} s); try again when it has finished"
                ) from None
            if on_wait is not None and not told:
                on_wait(
                    f"waiting up to {wait:g} s for embedded registry {where}, "
                    "locked by another process"
                )
                told = True
            time.sleep(_LOCK_POLL_SECONDS)


# Embedded-only diagnostic read: `RETURN f` yields every column of the node table, which
# Neo4j would express as properties(f); it is not part of the shared query set.
_NODE_PROPERTIES = q.Query("node_properties", "MATCH (f:Framework {id: $id})\nRETURN f", ("id",))
