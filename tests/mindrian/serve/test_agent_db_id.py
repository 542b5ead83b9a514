"""``GET /agents/{id}`` names the sessions database as ``GET /agents`` does (issue 38, 10:
AgentOSClient's ``aget_agent`` said ``db_id=None`` where the agent list said
``mindrian-sessions``)."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from http_server import ROOT

from mindrian.model_choice import choose_model
from mindrian.project import ProjectPaths
from mindrian.serve import ServeConfig, build_app


def test_one_agent_and_the_list_name_the_same_database(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("OS_SECURITY_KEY", raising=False)
    monkeypatch.setenv("MINDRIAN_STATE_DIR", str(tmp_path / "state"))
    model = choose_model("scripted:examples/pws.yaml", base=ROOT)
    config = ServeConfig(
        ProjectPaths.locate(ROOT), model, db_url=f"sqlite:///{tmp_path / 'sessions.db'}"
    )
    with TestClient(build_app(config)) as client:
        listed = {a["id"]: a["db_id"] for a in client.get("/agents").json()}
        one = client.get("/agents/pws-validation")
    assert listed["pws-validation"] == "mindrian-sessions"
    assert one.status_code == 200
    assert one.json()["db_id"] == "mindrian-sessions"
