"""The committed ``generated/larry`` package against its real MCP server, through Agno's tool loop.

Larry requires the project's own ``mindrian`` MCP server (``python -m
mindrian.mcp``), which serves the registry at ``.mindrian/registry.lbug`` of
the working directory. Each test runs in a temporary directory holding such a
registry, built from the committed ``generated/registry.yaml``, so the
framework the model is told about comes from a real server answering a real
tool call.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
from collections.abc import Coroutine
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import pytest

from mindrian.graph import (
    DEFAULT_EMBEDDED_PATH,
    FrameworkRecord,
    load_registry_yaml,
    registry_from_yaml,
)
from mindrian.testing import ScriptedModel, SeenMessage, Step

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "generated"
REGISTRY_YAML = GENERATED / "registry.yaml"
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture
def larry(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The committed package, imported from generated/."""
    monkeypatch.syspath_prepend(str(GENERATED))
    return importlib.import_module("larry")


@pytest.fixture
def in_registry_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose default registry holds every committed framework, as working directory."""
    (tmp_path / "pyproject.toml").write_text("[tool.mindrian]\n", encoding="utf-8")
    registry_from_yaml(REGISTRY_YAML, tmp_path / DEFAULT_EMBEDDED_PATH).close()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def probe_framework() -> FrameworkRecord:
    """A committed framework and, via its first trigger, what select_frameworks must return first."""
    records = load_registry_yaml(REGISTRY_YAML)
    assert records, "generated/registry.yaml lists no framework"
    return records[0]


def answer_with_first_pick(messages: tuple[SeenMessage, ...]) -> str:
    """Larry's reply quotes the server's first pick, so it exists only if the tool ran."""
    (result,) = [m.content for m in messages if m.role == "tool"]
    first = json.loads(result)["frameworks"][0]
    return f"Let us try {first['id']} (score {first['score']:.1f})."


def mcp_server_children() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
            if "mindrian.mcp" in cmdline:
                found.append(cmdline)
    return found


def test_larry_declares_its_required_server(larry: ModuleType) -> None:
    (server,) = larry.LarryAgent.mcp_servers
    assert server["name"] == "mindrian"
    assert server["required"] is True
    assert {"select_frameworks", "get_framework"} <= set(server["tools"])
    (toolkit,) = larry.LarryAgent.tools
    assert toolkit.name == "mindrian"


def test_select_frameworks_answer_comes_back_through_the_mcp_loop(
    larry: ModuleType, in_registry_dir: Path
) -> None:
    framework = probe_framework()
    model = ScriptedModel(
        Step.tool_call("select_frameworks", triggers=[framework.triggers[0]]),
        answer_with_first_pick,
    )
    agent = larry.LarryAgent(model=model, state_dir=in_registry_dir / "state")

    reply = run(agent.run("Which framework fits my problem?", session_id="pick"))

    model.assert_complete()
    assert {"select_frameworks", "get_framework"} <= set(model.calls[0].tools)
    (tool_result,) = model.calls[1].contents("tool")
    picks = json.loads(tool_result)["frameworks"]
    assert framework.id in [p["id"] for p in picks]
    assert picks[0]["score"] >= 0.6  # a trigger match, not an empty or made-up answer
    assert reply.content == f"Let us try {picks[0]['id']} (score {picks[0]['score']:.1f})."
    assert mcp_server_children() == []


def test_handoff_fails_naming_the_server_when_it_cannot_open_its_registry(
    larry: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A project with a directory where the registry file should be: the server exits at start.
    (tmp_path / "pyproject.toml").write_text("[tool.mindrian]\n", encoding="utf-8")
    (tmp_path / DEFAULT_EMBEDDED_PATH).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    model = ScriptedModel("never sent")
    agent = larry.LarryAgent(model=model, state_dir=tmp_path / "state")

    result = run(agent.process_handoff(agent.create_handoff_context("Help me think")))

    assert not result.success
    assert result.error.startswith("MCP server 'mindrian' is unavailable: ")
    assert model.calls == ()
    assert mcp_server_children() == []
