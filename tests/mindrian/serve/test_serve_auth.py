"""Over HTTP: AgentOS's authentication on ``mindrian serve`` (JWT users, a security key).

A server verifying JWTs (``JWT_VERIFICATION_KEY``) takes the user from the
token's ``sub`` and isolates users: bob cannot list, read, delete, write into or
continue alice's sessions; the admin scope sees them all. A server with
``OS_SECURITY_KEY`` lets in only the key's holders.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from http_server import Server, running_server
from model_scripts import GOOD_PWS, write_script
from tokens import ADMIN_SCOPES, Issuer

pytestmark = pytest.mark.slow  # mindrian serve processes

_ISSUER = Issuer()
_ALICE = _ISSUER.headers("alice")
_BOB = _ISSUER.headers("bob")
_ADMIN = _ISSUER.headers("root", ADMIN_SCOPES)


@pytest.fixture(scope="module")
def jwt_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server verifying RS256 tokens, SQLite sessions, scripted answers."""
    folder = tmp_path_factory.mktemp("serve-jwt")
    script = write_script(
        folder / "script.yaml",
        {
            "pws-validation": [GOOD_PWS],
            "lean-canvas": ["canvas step"],
            # Alice's run fails at its second phase; bob's has all three.
            "deep-research": ["clarified by alice", "", "clarified", "analysed", "validated"],
        },
        repeat=True,
    )
    args = ["--db", f"sqlite:///{folder / 'sessions.db'}", "--model", f"scripted:{script}"]
    env = {"MINDRIAN_STATE_DIR": str(folder / "state"), "JWT_VERIFICATION_KEY": _ISSUER.public_pem}
    with running_server(args, env=env, log=folder / "server.log") as running:
        yield running


@pytest.fixture(scope="module")
def key_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with a security key."""
    folder = tmp_path_factory.mktemp("serve-key")
    script = write_script(folder / "script.yaml", {"pws-validation": [GOOD_PWS]}, repeat=True)
    args = ["--db", f"sqlite:///{folder / 'sessions.db'}", "--model", f"scripted:{script}"]
    env = {"MINDRIAN_STATE_DIR": str(folder / "state"), "OS_SECURITY_KEY": "test-key-0123"}
    with running_server(args, env=env, log=folder / "server.log") as running:
        yield running


def _post_run(server: Server, agent: str, headers: dict[str, str], **form: str) -> httpx.Response:
    return server.client.post(
        f"/agents/{agent}/runs", data={"stream": "false", **form}, headers=headers
    )


def _alice_session(server: Server, session_id: str) -> dict[str, Any]:
    # A user_id form field naming someone else never overrides the token's sub.
    response = _post_run(
        server,
        "pws-validation",
        _ALICE,
        message="secret plan of alice",
        session_id=session_id,
        user_id="bob",
    )
    assert response.status_code == 200, response.text
    run: dict[str, Any] = response.json()
    assert (run["status"], run["user_id"]) == ("COMPLETED", "alice")
    return run


def _listed(server: Server, headers: dict[str, str]) -> set[str]:
    response = server.client.get("/sessions", params={"type": "agent"}, headers=headers)
    assert response.status_code == 200, response.text
    return {session["session_id"] for session in response.json()["data"]}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/agents/pws-validation/runs"),
        ("GET", "/sessions?type=agent"),
        ("GET", "/sessions/alice-anon"),
        ("DELETE", "/sessions/alice-anon"),
        ("GET", "/agents"),
    ],
)
def test_anonymous_and_forged_requests_are_refused(
    jwt_server: Server, method: str, path: str
) -> None:
    _alice_session(jwt_server, "alice-anon")
    form = {"message": "hi", "stream": "false"} if method == "POST" else None
    forged = Issuer().headers("alice")  # well formed, signed by another key

    for headers in ({}, forged, {"Authorization": "Bearer not-a-token"}):
        response = jwt_server.client.request(method, path, data=form, headers=headers)
        assert response.status_code in (401, 403), (headers, response.text)
        assert response.json()["detail"]
    assert "alice-anon" in _listed(jwt_server, _ALICE)


def test_bob_cannot_list_read_or_delete_alices_session(jwt_server: Server) -> None:
    run = _alice_session(jwt_server, "alice-1")

    assert "alice-1" not in _listed(jwt_server, _BOB)
    for path in ("/sessions/alice-1", "/sessions/alice-1/runs", f"/runs/{run['run_id']}"):
        read = jwt_server.client.get(path, params={"type": "agent"}, headers=_BOB)
        assert read.status_code in (403, 404), (path, read.text)
        assert "secret plan" not in read.text
    # Deleting it answers as for a session that does not exist, so its existence does not leak.
    refused = jwt_server.client.delete("/sessions/alice-1", headers=_BOB)
    missing = jwt_server.client.delete("/sessions/no-such-session", headers=_BOB)
    assert (refused.status_code, refused.text) == (missing.status_code, missing.text)
    # Bob cannot write into it either: a run naming alice's session is refused.
    intruding = _post_run(
        jwt_server, "pws-validation", _BOB, message="bob was here", session_id="alice-1"
    )
    assert intruding.status_code == 404, intruding.text

    mine = jwt_server.client.get("/sessions/alice-1/runs", params={"type": "agent"}, headers=_ALICE)
    assert mine.status_code == 200
    assert [r["run_input"] for r in mine.json()] == ["secret plan of alice"]
    assert "alice-1" in _listed(jwt_server, _ADMIN)  # the admin scope sees every user's

    deleted = jwt_server.client.delete("/sessions/alice-1", headers=_ALICE)
    assert deleted.status_code == 204
    assert "alice-1" not in _listed(jwt_server, _ADMIN)


def test_only_the_owner_continues_a_guided_run(jwt_server: Server) -> None:
    started = _post_run(
        jwt_server, "lean-canvas", _ALICE, message="Office coffee", session_id="alice-canvas"
    )
    run = started.json()
    assert run["status"] == "PAUSED", started.text

    def answer(headers: dict[str, str], text: str) -> httpx.Response:
        return jwt_server.client.post(
            f"/agents/lean-canvas/runs/{run['run_id']}/continue",
            data={"input": text, "session_id": "alice-canvas", "stream": "false"},
            headers=headers,
        )

    for intruder in (_BOB, _ADMIN):  # the admin reads it, but does not answer for alice
        refused = answer(intruder, "an answer alice never gave")
        assert refused.status_code == 404, refused.text
    moved = answer(_ALICE, "Offices run out of good coffee")
    assert moved.status_code == 200, moved.text
    assert "Step 2 of 7" in moved.json()["content"]
    # Bob's attempts left no trace in alice's run.
    runs = jwt_server.client.get(
        "/sessions/alice-canvas/runs", params={"type": "agent"}, headers=_ALICE
    ).json()
    said = [m["content"] for m in runs[0]["messages"] if m["role"] == "user"]
    assert "an answer alice never gave" not in said


def test_a_reused_session_id_never_resumes_another_users_pipeline(jwt_server: Server) -> None:
    task = {"message": "How big is lab equipment resale?", "session_id": "research-1"}
    failed = _post_run(jwt_server, "deep-research", _ALICE, **task).json()
    assert failed["status"] == "ERROR"  # a checkpoint of the clarify phase is left behind
    assert jwt_server.client.delete("/sessions/research-1", headers=_ALICE).status_code == 204

    # The id is free again; bob's run with the same task starts from the first phase.
    ran = _post_run(jwt_server, "deep-research", _BOB, **task).json()
    assert ran["status"] == "COMPLETED", ran
    assert "clarified by alice" not in ran["content"]
    assert "### clarify\n\nclarified\n" in ran["content"]


def test_a_security_key_lets_in_only_its_holders(key_server: Server) -> None:
    def run(headers: dict[str, str]) -> httpx.Response:
        return _post_run(key_server, "pws-validation", headers, message="Validate it")

    assert run({}).status_code == 401
    assert run({"Authorization": "Bearer wrong-key"}).status_code == 401
    allowed = run({"Authorization": "Bearer test-key-0123"})
    assert allowed.status_code == 200 and allowed.json()["status"] == "COMPLETED"
    assert key_server.client.get("/sessions", params={"type": "agent"}).status_code == 401


@pytest.mark.parametrize("path", ["/docs", "/redoc", "/openapi.json"])
def test_the_api_description_is_off_behind_authentication(
    jwt_server: Server, key_server: Server, path: str
) -> None:
    for server, headers in (
        (jwt_server, _ALICE),
        (key_server, {"Authorization": "Bearer test-key-0123"}),
    ):
        for sent in ({}, headers):
            described = server.client.get(path, headers=sent)
            assert described.status_code in (401, 404), (path, sent, described.text)
            assert "/agents/{agent_id}/runs" not in described.text
