"""``mindrian serve`` (or any server taking ``--port``: ``mindrian mcp --http``, a plain AgentOS)
in a subprocess on 127.0.0.1, for tests and benchmarks over HTTP."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "SERVE_PROGRAM",
    "answers_health",
    "free_port",
    "listening",
    "serve_process",
    "server_process",
]

#: ``python`` arguments that run ``mindrian serve``.
SERVE_PROGRAM = ("-m", "builder", "serve")
#: Seconds a server may take to answer /health (imports and AgentOS set-up on a busy machine).
START_TIMEOUT_SECONDS = 120.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answers_health(url: str) -> bool:
    """Whether the server at ``url`` answers ``GET /health`` with 200 (AgentOS's route)."""
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=5) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def listening(url: str) -> bool:
    """Whether anything accepts connections on ``url``'s port (a server without ``/health``,
    such as ``mindrian mcp --http``)."""
    port = int(url.rsplit(":", 1)[1])
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def serve_process(
    args: Sequence[str], *, cwd: Path, log: Path, env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """``mindrian serve ARGS --port FREE`` from ``cwd`` until the block ends; yields its base URL.

    Output goes to ``log``; an exit or no answer on ``/health`` in time fails
    with that log. The process is stopped (SIGTERM, then SIGKILL) at the end.
    """
    with server_process(args, cwd=cwd, log=log, env=env) as (url, _process):
        yield url


@contextmanager
def server_process(
    args: Sequence[str],
    *,
    cwd: Path,
    log: Path,
    env: Mapping[str, str] | None = None,
    program: Sequence[str] = SERVE_PROGRAM,
    ready: Callable[[str], bool] = answers_health,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``python PROGRAM --port FREE ARGS`` once ``ready(url)``: yields its URL and process.

    As :func:`serve_process`, for any server taking ``--port`` (a plain AgentOS
    for comparison, ``mindrian mcp --http`` with :func:`listening`), and with the
    process, which a test may kill; a process already gone at the end is left alone.
    """
    port = free_port()
    with log.open("ab") as sink:
        process = subprocess.Popen(
            [sys.executable, *program, "--port", str(port), *args],
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(cwd), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, process, log, program, ready)
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_ready(
    url: str,
    process: subprocess.Popen[bytes],
    log: Path,
    program: Sequence[str],
    ready: Callable[[str], bool],
) -> None:
    what = " ".join(program)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"python {what} exited with {process.returncode}:\n{log.read_text()}"
            )
        if ready(url):
            return
        time.sleep(0.2)
    raise RuntimeError(
        f"python {what} was not ready within {START_TIMEOUT_SECONDS}s:\n{log.read_text()}"
    )
