"""The default registry backend: an embedded LadybugDB (Kùzu fork) database file."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import ladybug

from mindrian.graph import queries as q
from mindrian.graph.base import Registry, Row, Run, check_params
from mindrian.graph.dialect import EMBEDDED_SCHEMA, EMBEDDED_TABLES, embedded_text
from mindrian.graph.errors import GraphError

__all__ = ["DEFAULT_EMBEDDED_PATH", "EmbeddedRegistry"]

#: Where the registry lives unless a path is given (relative to the working directory).
DEFAULT_EMBEDDED_PATH = Path(".mindrian") / "registry.lbug"
_T = TypeVar("_T")


class EmbeddedRegistry(Registry):
    """Registry in a LadybugDB file at ``path``, or in memory when ``path`` is None."""

    def __init__(
        self, path: str | Path | None = DEFAULT_EMBEDDED_PATH, *, read_only: bool = False
    ) -> None:
        """Open (and, unless ``read_only``, create) the registry.

        Read-only opens never create the file and take no writer's lock, so any
        number of readers (agents asking the MCP server) can share the file with
        a build that registers into it.
        """
        self._where = "in-memory database" if path is None else str(path)
        # One connection serves one transaction at a time; MCP handlers may run in threads.
        self._lock = threading.Lock()
        if read_only and (path is None or not Path(path).exists()):
            raise GraphError(
                f"cannot open embedded registry {self._where} read-only: it does not exist"
            )
        try:
            if path is not None and not read_only:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._database = ladybug.Database(
                ":memory:" if path is None else str(path), read_only=read_only
            )
            self._connection = ladybug.Connection(self._database)
            if not read_only:
                for statement in EMBEDDED_SCHEMA:
                    self._connection.execute(statement)
        except (RuntimeError, OSError) as exc:
            raise GraphError(f"cannot open embedded registry {self._where}: {exc}") from exc
        if read_only:
            self._check_tables()

    def __repr__(self) -> str:
        return f"EmbeddedRegistry({self._where!r})"

    def close(self) -> None:
        self._connection.close()
        self._database.close()

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
        if missing:
            self.close()
            raise GraphError(
                f"embedded registry {self._where} predates tables {', '.join(missing)}; "
                "open it once for writing (mindrian register --all) to upgrade it"
            )

    def _write(self, work: Callable[[Run], _T]) -> _T:
        return self._transaction("BEGIN TRANSACTION", work)

    def _read(self, work: Callable[[Run], _T]) -> _T:
        return self._transaction("BEGIN TRANSACTION READ ONLY", work)

    def _transaction(self, begin: str, work: Callable[[Run], _T]) -> _T:
        with self._lock:
            self._execute(begin, {})
            try:
                result = work(self._run)
            except BaseException:
                self._rollback()
                raise
            self._execute("COMMIT", {})
            return result

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


# Embedded-only diagnostic read: `RETURN f` yields every column of the node table, which
# Neo4j would express as properties(f); it is not part of the shared query set.
_NODE_PROPERTIES = q.Query("node_properties", "MATCH (f:Framework {id: $id})\nRETURN f", ("id",))
