"""A throw-away PostgreSQL cluster on 127.0.0.1, for tests and benchmarks of PostgreSQL sessions.

:func:`throwaway_cluster` runs ``initdb`` in a temporary folder, starts the
server on a free port (TCP on 127.0.0.1 only, its socket in that folder, trust
authentication), yields the SQLAlchemy URL of its ``postgres`` database, and
stops the server and deletes the folder at the end. ``initdb`` refuses to run
as root, so as root the cluster runs as the ``postgres`` system user.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from mindrian.errors import MindrianError

__all__ = ["POSTGRES_BIN_ENV", "PostgresUnavailableError", "find_postgres_bin", "throwaway_cluster"]

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


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    """A running cluster for the block; yields ``postgresql+psycopg://postgres@127.0.0.1:PORT/postgres``."""
    binaries = find_postgres_bin()
    as_service_user = os.geteuid() == 0
    folder = Path(tempfile.mkdtemp(prefix="mindrian-pg-"))
    data = folder / "data"
    port = _free_port()
    if as_service_user:
        shutil.chown(folder, user=_SERVICE_USER)
    try:
        _run(binaries, as_service_user, "initdb", "-D", data, "-U", "postgres", "--auth=trust")
        _run(
            binaries,
            as_service_user,
            "pg_ctl",
            "-D",
            data,
            "-l",
            folder / "server.log",
            "-w",
            "-o",
            f"-h 127.0.0.1 -p {port} -k {folder}",
            "start",
        )
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
        finally:
            _run(binaries, as_service_user, "pg_ctl", "-D", data, "-m", "fast", "-w", "stop")
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
