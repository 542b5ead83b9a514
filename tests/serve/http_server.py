"""Start and stop ``mindrian serve`` processes on 127.0.0.1 for tests over HTTP."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

__all__ = ["ROOT", "Server", "free_port", "running_server"]

ROOT = Path(__file__).resolve().parents[2]
#: Seconds a server may take to answer /health (imports and AgentOS set-up on a busy machine).
_START_TIMEOUT = 120.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Server:
    """A running ``mindrian serve`` and a client for it."""

    url: str
    """Base URL, ``http://127.0.0.1:PORT``."""
    client: httpx.Client
    """Client with the base URL set."""

    def run(self, agent_id: str, message: str, **form: str) -> dict[str, Any]:
        """POST a non-streaming run; returns the run as JSON."""
        return self._post(
            f"/agents/{agent_id}/runs", {"message": message, "stream": "false", **form}
        )

    def continue_run(self, agent_id: str, run: Mapping[str, Any], answer: str) -> dict[str, Any]:
        """POST the user's answer to a paused run through AgentOS's continue route."""
        return self._post(
            f"/agents/{agent_id}/runs/{run['run_id']}/continue",
            {"input": answer, "session_id": run["session_id"], "stream": "false"},
        )

    def _post(self, path: str, form: Mapping[str, str]) -> dict[str, Any]:
        response = self.client.post(path, data=dict(form))
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


@contextmanager
def running_server(
    args: Sequence[str], *, env: Mapping[str, str], log: Path, cwd: Path = ROOT
) -> Iterator[Server]:
    """``mindrian serve ARGS --port FREE`` in a subprocess until the block ends."""
    port = free_port()
    with log.open("ab") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "builder", "serve", "--port", str(port), *args],
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=60.0) as client:
            _wait_ready(client, process, log)
            yield Server(url, client)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_ready(client: httpx.Client, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(
                f"mindrian serve exited with {process.returncode}:\n{log.read_text()}"
            )
        try:
            if client.get("/health").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(
        f"mindrian serve did not answer within {_START_TIMEOUT}s:\n{log.read_text()}"
    )
