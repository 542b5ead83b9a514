"""The ``larry`` package (freshly built, see conftest.py) against its real MCP server.

Larry requires the project's own ``mindrian`` MCP server (``python -m
mindrian.mcp``), which serves the registry at ``.mindrian/registry.lbug`` of
the working directory. Each test runs in a temporary directory holding such a
registry, built from the committed ``generated/registry.yaml``, so the
framework the model is told about comes from a real server answering a real
tool call through Agno's tool loop.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from mindrian.graph import (
    FrameworkRecord,
    load_registry_yaml,
    registry_from_yaml,
)
from mindrian.packages import PackageFolder
from mindrian.project import ProjectPaths
from mindrian.testing import ScriptedModel, SeenMessage, Step

# Slow: starts MCP servers and agents in subprocesses.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "generated"
REGISTRY_YAML = GENERATED / "registry.yaml"
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture
def larry(built_project: Path) -> type[Any]:
    """Larry's agent class, from the package ``mindrian build`` just made."""
    cls = PackageFolder(built_project / "generated").agent_class("larry")
    assert cls is not None
    return cls


@pytest.fixture
def in_registry_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose default registry holds every committed framework, as working directory."""
    (tmp_path / "pyproject.toml").write_text("[tool.mindrian]\n", encoding="utf-8")
    registry_from_yaml(REGISTRY_YAML, ProjectPaths(tmp_path).embedded_registry).close()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def probe_framework() -> FrameworkRecord:
    """A committed framework, for get_framework to describe."""
    records = load_registry_yaml(REGISTRY_YAML)
    assert records, "generated/registry.yaml lists no framework"
    return records[0]


def answer_with_the_description(messages: tuple[SeenMessage, ...]) -> str:
    """Larry's reply quotes the server's record, so it exists only if the tool ran."""
    (result,) = [m.content for m in messages if m.role == "tool"]
    framework = json.loads(result)["framework"]
    return f"{framework['id']} triggers on {framework['triggers'][0]}."


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


def test_larry_declares_its_required_server_and_orchestration_tools(larry: type[Any]) -> None:
    (server,) = larry.mcp_servers
    assert (server["name"], server["required"], server["tools"]) == (
        "mindrian",
        True,
        ["get_framework"],
    )
    names = [getattr(tool, "name", None) for tool in larry.tools]
    assert names == ["assess_clarity", "select_frameworks", "delegate", "mindrian"]


def test_get_framework_answer_comes_back_through_the_mcp_loop(
    larry: type[Any], in_registry_dir: Path
) -> None:
    framework = probe_framework()
    model = ScriptedModel(
        Step.tool_call("get_framework", id=framework.id),
        answer_with_the_description,
    )
    agent = larry(model=model, state_dir=in_registry_dir / "state")

    reply = run(agent.run("Tell me about that framework", session_id="pick"))

    model.assert_complete()
    assert {"get_framework", "delegate", "select_frameworks"} <= set(model.calls[0].tools)
    assert reply.content == f"{framework.id} triggers on {framework.triggers[0]}."
    assert mcp_server_children() == []


def test_handoff_fails_naming_the_server_when_it_cannot_open_its_registry(
    larry: type[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A project with a directory where the registry file should be: the server exits at start.
    (tmp_path / "pyproject.toml").write_text("[tool.mindrian]\n", encoding="utf-8")
    (ProjectPaths(tmp_path).embedded_registry).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    model = ScriptedModel("never sent")
    agent = larry(model=model, state_dir=tmp_path / "state")

    result = run(agent.process_handoff(agent.create_handoff_context("Help me think")))

    assert not result.success
    assert result.error.startswith("MCP server 'mindrian' is unavailable: ")
    assert model.calls == ()
    assert mcp_server_children() == []
