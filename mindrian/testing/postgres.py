"""A throw-away PostgreSQL cluster on 127.0.0.1, for tests and benchmarks of PostgreSQL sessions.

:func:`throwaway_cluster` runs ``initdb`` in a temporary folder, starts the
server on a free port (TCP on 127.0.0.1 only, its socket in that folder, trust
authentication), yields the SQLAlchemy URL of its ``postgres`` database, and
stops the server and deletes the folder at the end. ``initdb`` refuses to run
as root, so as root the cluster runs as the ``postgres`` system user.
:func:`restartable_cluster` is the same cluster as a :class:`Cluster`, which a
test may stop and start again under running clients (same port, same data).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mindrian.errors import MindrianError

__all__ = [
    "POSTGRES_BIN_ENV",
    "Cluster",
    "PostgresUnavailableError",
    "find_postgres_bin",
    "restartable_cluster",
    "throwaway_cluster",
]

#: Environment variable naming the folder of ``initdb`` and ``pg_ctl``.
POSTGRES_BIN_ENV = "MINDRIAN_POSTGRES_BIN"
#: Where Debian and Ubuntu install PostgreSQL's server binaries, newest first.
_DEBIAN_BIN_GLOB = "/usr/lib/postgresql/*/bin"
#: The system user a cluster runs as when we are root.
_SERVICE_USER = "postgres"


class PostgresUnavailableError(MindrianError, RuntimeError):
    """No PostgreSQL server binaries (initdb, pg_ctl) on this machine."""


def find_postgres_bin() -> Path:
    """The folder of ``initdb`` and ``pg_ctl``: ``$MINDRIAN_POSTGRES_BIN``, PATH, or Debian's."""
    configured = os.environ.get(POSTGRES_BIN_ENV)
    candidates = [Path(configured)] if configured else []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).parent)
    candidates += sorted(Path("/").glob(_DEBIAN_BIN_GLOB.lstrip("/")), reverse=True)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    raise PostgresUnavailableError(
        f"no PostgreSQL server binaries (initdb, pg_ctl): set {POSTGRES_BIN_ENV} or install them"
    )


@dataclass(frozen=True)
class Cluster:
    """A throw-away cluster that can be stopped and started again."""

    url: str
    """``postgresql+psycopg://postgres@127.0.0.1:PORT/postgres``."""
    binaries: Path
    """The folder of ``pg_ctl``."""
    folder: Path
    """Its temporary folder: data, socket and server log."""
    port: int
    """The TCP port on 127.0.0.1, the same after every start."""
    as_service_user: bool
    """Whether ``pg_ctl`` runs as the ``postgres`` system user (we are root)."""

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = f"-h 127.0.0.1 -p {self.port} -k {self.folder}"
        log = self.folder / "server.log"
        self._pg_ctl("-l", log, "-w", "-o", options, "start")

    def stop(self) -> None:
        """Stop the server (fast shutdown: open connections are cut) and wait."""
        self._pg_ctl("-m", "fast", "-w", "stop")

    def running(self) -> bool:
        """Whether the server is up (``pg_ctl status``)."""
        try:
            self._pg_ctl("status")
        except RuntimeError:
            return False
        return True

    def _pg_ctl(self, *args: object) -> None:
        _run(self.binaries, self.as_service_user, "pg_ctl", "-D", self.folder / "data", *args)


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    """A running cluster for the block; yields ``postgresql+psycopg://postgres@127.0.0.1:PORT/postgres``."""
    with restartable_cluster() as cluster:
        yield cluster.url


@contextmanager
def restartable_cluster() -> Iterator[Cluster]:
    """A running cluster for the block, which the block may stop and start; deleted at the end."""
    binaries = find_postgres_bin()
    as_service_user = os.geteuid() == 0
    folder = Path(tempfile.mkdtemp(prefix="mindrian-pg-"))
    port = _free_port()
    url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    cluster = Cluster(url, binaries, folder, port, as_service_user)
    if as_service_user:
        shutil.chown(folder, user=_SERVICE_USER)
    try:
        _run(
            binaries,
            as_service_user,
            "initdb",
            "-D",
            folder / "data",
            "-U",
            "postgres",
            "--auth=trust",
        )
        cluster.start()
        try:
            yield cluster
        finally:
            if cluster.running():  # the block may have left it stopped
                cluster.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run(binaries: Path, as_service_user: bool, program: str, *args: object) -> None:
    command: Sequence[str] = [str(binaries / program), *map(str, args)]
    if as_service_user:
        command = ["runuser", "-u", _SERVICE_USER, "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr or done.stdout}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
