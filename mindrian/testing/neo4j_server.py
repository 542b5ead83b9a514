"""The throw-away Neo4j server that ``ci/neo4j-server`` starts, as tests and benchmarks reach it.

``ci/neo4j-server start DIR`` keeps the server's ``export NEO4J_URI=… NEO4J_USERNAME=…
NEO4J_PASSWORD=…`` line in ``DIR/env``; ``MINDRIAN_TEST_NEO4J=DIR`` hands that server to the
test suite and ``make bench``. A variable of its own, not ``NEO4J_URI``: :func:`wipe` deletes
everything in the database, so only a server started for the purpose is ever used, and the
rest of the suite, which must not register into Neo4j, never sees ``NEO4J_*``.

Community Neo4j has one user database, so tests running in parallel processes take turns on it
(:func:`exclusive`).
"""

from __future__ import annotations

import fcntl
import os
import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mindrian.errors import MindrianError

__all__ = [
    "TEST_SERVER_ENV",
    "Neo4jServer",
    "Neo4jServerUnavailable",
    "configured_server",
    "exclusive",
    "wipe",
]

#: Names the folder of a server that ``ci/neo4j-server start`` started.
TEST_SERVER_ENV = "MINDRIAN_TEST_NEO4J"
_VARIABLES = ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD")


class Neo4jServerUnavailable(MindrianError, RuntimeError):
    """``MINDRIAN_TEST_NEO4J`` names no folder with a started server's ``env`` file."""


@dataclass(frozen=True)
class Neo4jServer:
    """How to reach a test server."""

    folder: Path
    """The folder ``ci/neo4j-server start`` was given."""
    uri: str
    """Its Bolt URI (``bolt://127.0.0.1:PORT``)."""
    user: str
    """The user (``neo4j``)."""
    password: str
    """The generated password."""

    def env(self) -> dict[str, str]:
        """``NEO4J_URI``, ``NEO4J_USERNAME`` and ``NEO4J_PASSWORD`` for a child process."""
        return {"NEO4J_URI": self.uri, "NEO4J_USERNAME": self.user, "NEO4J_PASSWORD": self.password}


def configured_server(environ: Mapping[str, str] | None = None) -> Neo4jServer | None:
    """The server ``MINDRIAN_TEST_NEO4J`` names; None when it is not set."""
    folder = (os.environ if environ is None else environ).get(TEST_SERVER_ENV)
    if not folder:
        return None
    path = Path(folder)
    try:
        words = shlex.split(path.joinpath("env").read_text(encoding="utf-8"))
    except OSError as exc:
        raise Neo4jServerUnavailable(
            f"{TEST_SERVER_ENV}={folder}: no started server there ({exc.strerror}); "
            f"run ci/neo4j-server start {folder}"
        ) from None
    values = dict(word.split("=", 1) for word in words if "=" in word)
    missing = [name for name in _VARIABLES if not values.get(name)]
    if missing:
        raise Neo4jServerUnavailable(f"{path / 'env'} lacks {', '.join(missing)}")
    uri, user, password = (values[name] for name in _VARIABLES)
    return Neo4jServer(path, uri, user, password)


@contextmanager
def exclusive(server: Neo4jServer) -> Iterator[Neo4jServer]:
    """Hold the server alone (an advisory lock in its folder) for the block."""
    with open(server.folder / "tests.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield server
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def wipe(server: Neo4jServer) -> None:
    """Delete every node, relationship and constraint of the server's default database."""
    import neo4j

    with (
        neo4j.GraphDatabase.driver(server.uri, auth=(server.user, server.password)) as driver,
        driver.session() as session,
    ):
        # Batches, auto-committed: a benchmark's graph is more than one transaction should hold.
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS").consume()
        names = [str(r["name"]) for r in session.run("SHOW CONSTRAINTS YIELD name RETURN name")]
        for name in names:
            # A constraint's name is an identifier, not a value: quoted in backticks.
            quoted = name.replace("`", "``")
            session.run(f"DROP CONSTRAINT `{quoted}` IF EXISTS").consume()
