"""``MINDRIAN_JWT_ALGORITHM=HS256``: tokens signed with a shared secret (in process)."""

from __future__ import annotations

import time
from pathlib import Path

import jwt
import pytest
from fastapi.testclient import TestClient
from http_server import ROOT
from model_scripts import GOOD_PWS, write_script

from mindrian.model_choice import choose_model
from mindrian.project import ProjectPaths
from mindrian.serve import ServeConfig, build_app

_SECRET = "a-shared-secret-of-at-least-32-bytes!"


def test_a_shared_secret_signs_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JWT_VERIFICATION_KEY", _SECRET)
    monkeypatch.setenv("MINDRIAN_JWT_ALGORITHM", "HS256")
    monkeypatch.delenv("OS_SECURITY_KEY", raising=False)
    monkeypatch.setenv("MINDRIAN_STATE_DIR", str(tmp_path / "state"))
    script = write_script(tmp_path / "script.yaml", {"pws-validation": [GOOD_PWS]})
    config = ServeConfig(
        ProjectPaths.locate(ROOT),
        choose_model(f"scripted:{script}", base=ROOT),
        db_url=f"sqlite:///{tmp_path / 'sessions.db'}",
    )
    claims = {"sub": "carol", "scopes": ["agents:run"], "exp": int(time.time()) + 600}
    good = jwt.encode(claims, _SECRET, algorithm="HS256")
    wrong = jwt.encode(claims, "another-secret-of-at-least-32-bytes!!", algorithm="HS256")
    form = {"message": "Validate it", "stream": "false"}

    with TestClient(build_app(config)) as client:
        refused = client.post("/agents/pws-validation/runs", data=form, headers=_bearer(wrong))
        ran = client.post("/agents/pws-validation/runs", data=form, headers=_bearer(good))

    assert refused.status_code == 401, refused.text
    assert ran.status_code == 200, ran.text
    assert (ran.json()["status"], ran.json()["user_id"]) == ("COMPLETED", "carol")


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
