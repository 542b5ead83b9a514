"""Over HTTP: bad input to ``mindrian serve`` gets a 4xx with a reason, never a 500."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from http_server import Server, running_server
from model_scripts import GOOD_PWS, write_script

from mindrian.request_limits import MAX_BODY_BYTES, MAX_MESSAGE_CHARS

pytestmark = pytest.mark.slow  # a mindrian serve process

_RUNS = "/agents/pws-validation/runs"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """An anonymous loopback server with SQLite sessions and scripted answers."""
    folder = tmp_path_factory.mktemp("serve-bad-input")
    script = write_script(
        folder / "script.yaml",
        {"pws-validation": [GOOD_PWS], "lean-canvas": ["step"], "deep-research": ["x"]},
        repeat=True,
    )
    args = ["--db", f"sqlite:///{folder / 'sessions.db'}", "--model", f"scripted:{script}"]
    env = {"MINDRIAN_STATE_DIR": str(folder / "state")}
    with running_server(args, env=env, log=folder / "server.log") as running:
        yield running


def _refused(response: httpx.Response, status: int, reason: str) -> None:
    assert response.status_code == status, response.text
    assert reason in str(response.json()["detail"])


def _form(**fields: str) -> dict[str, str]:
    return {"message": "Validate it", "stream": "false", **fields}


def test_an_oversized_message_is_413(server: Server) -> None:
    response = server.client.post(_RUNS, data=_form(message="x" * (MAX_MESSAGE_CHARS + 1)))
    _refused(response, 413, f"message of {MAX_MESSAGE_CHARS + 1} characters")


def test_an_oversized_body_is_413_declared_or_chunked(server: Server) -> None:
    body = b"message=" + b"x" * MAX_BODY_BYTES
    headers = {"content-type": "application/x-www-form-urlencoded"}
    declared = server.client.post(_RUNS, content=body, headers=headers)
    _refused(declared, 413, f"at most {MAX_BODY_BYTES}")

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        for start in range(0, len(body), 1 << 20):
            yield body[start : start + (1 << 20)]

    chunked = server.client.post(_RUNS, content=chunks(), headers=headers)
    _refused(chunked, 413, f"over {MAX_BODY_BYTES} bytes")


def test_an_unknown_agent_is_404(server: Server) -> None:
    _refused(server.client.post("/agents/no-such-agent/runs", data=_form()), 404, "not found")


@pytest.mark.parametrize("agent", ["pws-validation", "deep-research", "lean-canvas"])
@pytest.mark.parametrize("session_id", ["../../etc/passwd", "s" * 129, "a b", ".hidden", "é"])
def test_a_malformed_session_id_is_400(server: Server, agent: str, session_id: str) -> None:
    response = server.client.post(f"/agents/{agent}/runs", data=_form(session_id=session_id))
    _refused(response, 400, "malformed session_id")


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b'{"message": "Validate it", "stream": false}', "application/json"),
        (b"Validate it", "text/plain"),
        (b"--zz\r\nbroken", "multipart/form-data; boundary=zz"),
        (b"\xff\xfe\x00", "application/x-www-form-urlencoded"),
    ],
)
def test_a_wrong_content_type_is_4xx(server: Server, content: bytes, content_type: str) -> None:
    response = server.client.post(_RUNS, content=content, headers={"content-type": content_type})
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["detail"]


def test_continuing_what_cannot_be_continued_is_4xx(server: Server) -> None:
    operator = _run(server, "pws-validation", session_id="op-1")
    guided = _run(server, "lean-canvas", session_id="canvas-1")

    def answer(agent: str, run_id: str, **form: str) -> httpx.Response:
        return server.client.post(
            f"/agents/{agent}/runs/{run_id}/continue", data={"stream": "false", **form}
        )

    _refused(answer("pws-validation", operator["run_id"], input="x", session_id="op-1"), 409, "")
    _refused(answer("lean-canvas", "no-such-run", input="x", session_id="canvas-1"), 404, "")
    # Another session's run, or no session at all.
    _refused(answer("lean-canvas", guided["run_id"], input="x", session_id="op-1"), 404, "")
    _refused(answer("lean-canvas", guided["run_id"], input="x"), 400, "session_id is required")
    _refused(
        answer("lean-canvas", guided["run_id"], input="y" * (MAX_MESSAGE_CHARS + 1)),
        413,
        "input of",
    )


def test_malformed_queries_are_422(server: Server) -> None:
    for params in ({"type": "nope"}, {"type": "agent", "limit": "-5"}):
        response = server.client.get("/sessions", params=params)
        assert response.status_code == 422, response.text


def _run(server: Server, agent: str, **form: str) -> dict[str, Any]:
    response = server.client.post(f"/agents/{agent}/runs", data=_form(**form))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_values_agentos_fails_on_are_refused_before_it(server: Server) -> None:
    # Before: page=0 was a 500 (ValueError), a huge limit a 500 (OverflowError).
    for params in ({"page": "0"}, {"limit": str(10**20)}, {"page": str(10**20)}):
        response = server.client.get("/sessions", params=params)
        assert response.status_code == 422, response.text
        assert response.json()["detail"][0]["loc"] == ["query", next(iter(params))]
    # Before: 503, media storage is not configured.
    deleted = server.client.delete("/sessions/s1", params={"delete_media": "true"})
    _refused(deleted, 400, "no media storage")


@pytest.mark.parametrize("path", ["/queue", "/memories", "/knowledge/content", "/approvals"])
def test_agentos_features_mindrian_does_not_use_are_off(server: Server, path: str) -> None:
    assert server.client.get(path).status_code == 404
    assert path not in server.client.get("/openapi.json").json()["paths"]
