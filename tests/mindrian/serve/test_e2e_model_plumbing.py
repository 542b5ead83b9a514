"""``bench/e2e_model.py`` against a stand-in OpenAI-compatible server: proxy, outcomes, replay.

``make e2e-model`` needs llama-server and a real model; its plumbing does not. Here a
tiny HTTP server on 127.0.0.1 answers chat completions with a fixed text (or an HTTP
error), and ``mindrian run`` reaches it through the real OpenAI provider and the
recording proxy, in a subprocess (the offline guard covers this process only).
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bench.e2e_model import HOST_AGENT, host_project, recording_proxy, run_agent, table
from mindrian.testing.served import free_port

pytestmark = pytest.mark.slow  # mindrian run processes


def _completion(content: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "stand-in",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()


@contextmanager
def stand_in_server(status: int, content: str) -> Iterator[str]:
    """An OpenAI-compatible server answering every chat request with ``status`` and ``content``."""

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = _completion(content) if status == 200 else b'{"error": {"message": "down"}}'
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


_PWS = ("pws-validation", "operator", "Validate: used lab equipment")


def test_an_answer_breaking_the_schema_is_refused_and_its_recording_replays(
    tmp_path: Path,
) -> None:
    with stand_in_server(200, '{"output": "# Card"}') as upstream:
        with recording_proxy(upstream) as (base_url, recorder):
            row = run_agent(_PWS, base_url, recorder, tmp_path)
    assert (row.requests, row.schema_sent, row.outcome) == (1, True, "refused")
    assert row.reason.startswith("output did not match schema: PwsValidationOutput: ")
    assert row.replayed is True
    assert row.passed
    assert "refused" in table([row]).splitlines()[1]


def test_an_http_error_is_a_model_error_not_a_traceback(tmp_path: Path) -> None:
    with stand_in_server(500, "") as upstream:
        with recording_proxy(upstream) as (base_url, recorder):
            row = run_agent(_PWS, base_url, recorder, tmp_path)
    assert row.outcome == "model error"
    assert row.requests >= 1  # the SDK retries a 500
    assert row.replayed is None
    assert row.passed


def test_no_request_reaching_the_server_fails_the_row(tmp_path: Path) -> None:
    with recording_proxy("http://127.0.0.1:9") as (base_url, recorder):
        row = run_agent(_PWS, base_url + "/elsewhere", recorder, tmp_path)
    assert row.requests == 0
    assert not row.passed


def _tool_call(name: str, arguments: dict[str, Any]) -> bytes:
    call = {"id": "call_1", "type": "function", "function": {"name": name}}
    call["function"]["arguments"] = json.dumps(arguments)
    return json.dumps(
        {
            "id": "chatcmpl-2",
            "object": "chat.completion",
            "created": 0,
            "model": "stand-in",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()


@contextmanager
def tool_calling_server() -> Iterator[str]:
    """A server whose model calls ``Bash(git status --short)`` first, then answers."""

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            sent = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            answered = any(m.get("role") == "tool" for m in sent["messages"])
            body = (
                _completion('{"output": "all clear"}')
                if answered
                else _tool_call("Bash", {"command": "git status --short"})
            )
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_host_skills_agent_is_offered_its_tools_and_a_call_runs_and_replays(
    tmp_path: Path,
) -> None:
    project, workspace = host_project(tmp_path)
    with tool_calling_server() as upstream:
        with recording_proxy(upstream) as (base_url, recorder):
            row = run_agent(
                HOST_AGENT, base_url, recorder, tmp_path, project=project,
                options=["--workspace", str(workspace)],
            )  # fmt: skip
    assert (row.requests, row.tools, row.tool_results) == (2, ("Bash", "Read", "read_reference"), 1)
    assert (row.outcome, row.replayed) == ("answered", True)
    assert "Bash,Read,read_reference (1 ran)" in table([row])
