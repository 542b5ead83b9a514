"""``mindrian serve``'s HTTP API under Schemathesis, in process (no network), in the three ways
it authenticates: anonymous (loopback), a security key, JWTs.

Every operation of the API description gets schema-valid and schema-violating requests
(bounded: a fixed number of examples each, derandomised). Nothing may answer 5xx or a body
that breaks the description; with JWTs, a second user's requests never reach the first user's
session; afterwards the sessions database is whole.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt
import pytest
import schemathesis
from fastapi.testclient import TestClient
from http_server import ROOT
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from model_scripts import GOOD_PWS, write_script
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import response_schema_conformance

from mindrian.model_choice import choose_model
from mindrian.project import ProjectPaths
from mindrian.serve import ServeConfig, build_app

pytestmark = pytest.mark.slow  # hundreds of requests per mode

#: Examples per operation and generation mode.
EXAMPLES = 8
_KEY = "a-security-key-for-the-fuzzer"
_SECRET = "a-shared-secret-of-at-least-32-bytes!"
_NO_AUTH = {"OS_SECURITY_KEY": "", "JWT_VERIFICATION_KEY": "", "JWT_JWKS_FILE": ""}
_SCOPES = ["agents:read", "agents:run", "sessions:read", "sessions:write", "sessions:delete"]


@dataclass
class Fuzzed:
    """What one mode's run saw."""

    operations: int = 0
    cases: int = 0
    failures: list[str] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)


def _token(user: str) -> str:
    claims = {"sub": user, "scopes": _SCOPES, "exp": int(time.time()) + 3600}
    return jwt.encode(claims, _SECRET, algorithm="HS256")


def _fuzz(app: Any, headers: dict[str, str]) -> Fuzzed:
    schema = schemathesis.openapi.from_dict(app.openapi())
    schema.app = app
    seen = Fuzzed()
    checks = (not_a_server_error, response_schema_conformance)
    for result in schema.get_all_operations():
        operation = result.ok()
        seen.operations += 1
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                derandomize=True,
                database=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(generation_mode=mode))
            def run(case: Any) -> None:
                seen.cases += 1
                response = case.call(headers=headers)
                seen.bodies.append(response.text)
                seen.statuses.append(response.status_code)
                try:
                    case.validate_response(response, checks=checks)
                except BaseException as failure:  # Schemathesis raises exception groups
                    first = str(failure).strip().splitlines()[:8]
                    seen.failures.append(f"{case.method} {case.formatted_path}: {first}")

            try:
                run()
            except Unsatisfiable:  # an operation with nothing to get wrong (GET /health)
                pass
    return seen


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[ProjectPaths, Any]:
    folder = tmp_path_factory.mktemp("fuzz")
    script = write_script(folder / "script.yaml", {"pws-validation": [GOOD_PWS]}, repeat=True)
    return ProjectPaths.locate(ROOT), choose_model(f"scripted:{script}", base=ROOT)


@pytest.fixture
def served(
    project: tuple[ProjectPaths, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Any, Path]]:
    monkeypatch.setenv("MINDRIAN_STATE_DIR", str(tmp_path / "state"))
    db = tmp_path / "sessions.db"

    def make() -> Any:
        paths, model = project
        return build_app(ServeConfig(paths, model, db_url=f"sqlite:///{db}"))

    yield make, db


def _whole(db: Path) -> None:
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def _assert_clean(seen: Fuzzed) -> None:
    assert seen.operations == 25
    assert seen.cases >= seen.operations * EXAMPLES
    assert seen.failures == [], "\n".join(seen.failures[:20])
    # The requests got past authentication: the routes themselves were fuzzed.
    assert sum(s in (401, 403) for s in seen.statuses) < len(seen.statuses) // 4


def test_anonymous_on_loopback(served: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    make, db = served
    for name, value in _NO_AUTH.items():
        monkeypatch.setenv(name, value)
    app = make()
    seen = _fuzz(app, {})
    _assert_clean(seen)
    _whole(db)


def test_with_the_security_key(served: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    make, db = served
    for name, value in {**_NO_AUTH, "OS_SECURITY_KEY": _KEY}.items():
        monkeypatch.setenv(name, value)
    app = make()
    with TestClient(app) as client:
        assert client.get("/sessions").status_code == 401
    seen = _fuzz(app, {"Authorization": f"Bearer {_KEY}"})
    _assert_clean(seen)
    _whole(db)


def test_with_jwts_no_request_reaches_another_users_session(
    served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    make, db = served
    env = {**_NO_AUTH, "JWT_VERIFICATION_KEY": _SECRET, "MINDRIAN_JWT_ALGORITHM": "HS256"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    app = make()
    alice = {"Authorization": f"Bearer {_token('alice')}"}
    form = {"message": "Validate it", "stream": "false", "session_id": "alice-1"}
    with TestClient(app) as client:
        ran = client.post("/agents/pws-validation/runs", data=form, headers=alice)
        assert ran.status_code == 200, ran.text
        before = client.get("/sessions/alice-1", headers=alice).json()
    seen = _fuzz(app, {"Authorization": f"Bearer {_token('bob')}"})
    _assert_clean(seen)
    leaked = [body for body in seen.bodies if "alice" in body or ran.json()["run_id"] in body]
    assert leaked == []
    with TestClient(app) as client:
        assert client.get("/sessions/alice-1", headers=alice).json() == before
    _whole(db)
