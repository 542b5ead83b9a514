"""``mindrian serve`` processes on 127.0.0.1 with an HTTP client, for tests over HTTP."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from mindrian.testing.served import serve_process

__all__ = ["ROOT", "Server", "running_server"]

ROOT = Path(__file__).resolve().parents[3]


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
    """``mindrian serve ARGS`` on a free port of 127.0.0.1 until the block ends."""
    with (
        serve_process(args, cwd=cwd, log=log, env=env) as url,
        httpx.Client(base_url=url, timeout=60.0) as client,
    ):
        yield Server(url, client)
