"""Real MCP connections: a fixture stdio server, failures, and the project's own server."""

from __future__ import annotations

from pathlib import Path

import pytest
from phase_factories import contract, phase_input, skill

from builder.mcp.catalog import BUILTIN_CATALOG, CatalogEntry
from builder.mcp.probe import HandshakeProbe
from builder.mcp.tooldefs import definition_errors, definition_to_plain
from builder.phases.architecture import PHASE as ARCH
from builder.phases.handoff_protocol import HandoffProtocolPhase
from builder.phases.tool_assembly import ToolAssemblyPhase
from builder.skill.model import McpServerRequest

ROOT = Path(__file__).resolve().parents[3]
ECHO = str(Path(__file__).parent.parent / "fixtures" / "echo_mcp_server.py")
#: Seconds a server may take to start and answer: a bound on a hang (a loaded machine takes tens
#: of seconds to start Python and import the MCP SDK), not a speed target.
_START_BOUND = 120.0


def _entry(*args: str, command: str = "python", **changes: str) -> CatalogEntry:
    return CatalogEntry(
        name="echo",
        description="fixture",
        tools=("echo", "shout"),
        command=command,
        args=(ECHO, *args),
        **changes,
    )


def test_handshake_lists_real_tools_with_valid_definitions() -> None:
    result = HandshakeProbe(ROOT, timeout=_START_BOUND)(_entry())
    assert result.ok and result.handshake, result.detail
    assert [t.name for t in result.tools] == ["echo", "shout"]
    shout = result.tools[1]
    assert shout.parameters["required"] == ["text"]
    assert definition_errors(definition_to_plain(shout)) == ()


@pytest.mark.parametrize("command", ["python", "python3"])
def test_python_commands_run_under_the_builders_interpreter(
    monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    # With no interpreter on PATH, only the builder's own (which has the project installed) can
    # start it.
    monkeypatch.setenv("PATH", str(Path(__file__).parent.parent / "no-such-bin"))
    result = HandshakeProbe(ROOT, timeout=_START_BOUND)(_entry(command=command))
    assert result.ok and result.handshake, result.detail


def test_server_that_dies_reports_its_stderr() -> None:
    result = HandshakeProbe(ROOT, timeout=_START_BOUND)(_entry("--crash"))
    assert not result.ok
    assert "missing ECHO_TOKEN" in result.detail


def test_unreachable_url_is_an_error_not_a_crash() -> None:
    entry = CatalogEntry(name="web", description="", tools=("x",), url="http://127.0.0.1:9/mcp")
    result = HandshakeProbe(ROOT, timeout=_START_BOUND)(entry)
    assert not result.ok and result.detail


def test_silent_server_times_out() -> None:
    entry = CatalogEntry(
        name="mute",
        description="",
        tools=("x",),
        command="python",
        args=("-c", "import time; time.sleep(60)"),
    )
    result = HandshakeProbe(ROOT, timeout=1.5)(entry)
    assert not result.ok and "timeout" in result.detail


def _connect_build(d, catalog):  # type: ignore[no-untyped-def]
    config = dict(connect=True, root=str(ROOT), mcp_catalog=catalog)
    previous = {"skill_analysis": d}
    previous["architecture"] = ARCH.run(phase_input(previous, **config)).output
    previous["handoff_protocol"] = (
        HandoffProtocolPhase(contract).run(phase_input(previous, **config)).output
    )
    return ToolAssemblyPhase().run(phase_input(previous, **config))


def test_phase_four_connects_for_real() -> None:
    catalog = {
        "echo": {
            "command": "python",
            "args": [ECHO],
            "tools": ["echo", "shout", "whisper"],
        }
    }
    good = _connect_build(
        skill(mcp_servers=(McpServerRequest("echo", ("shout",), line=9),)), catalog
    )
    assert [c.passed for c in good.checks] == [True, True]
    server = good.output.tools.mcp_servers[0]
    assert [d.name for d in server.definitions] == ["shout"]
    assert good.checks[0].reason.startswith("handshake: echo connected (handshake ok")
    # The catalog promises a tool the live server does not offer.
    missing = _connect_build(
        skill(mcp_servers=(McpServerRequest("echo", ("whisper",), line=9),)), catalog
    )
    assert not missing.checks[1].passed
    assert "does not offer whisper; it offers: echo, shout" in missing.checks[1].reason


def test_required_server_failure_carries_server_error() -> None:
    catalog = {"echo": {"command": "python", "args": [ECHO, "--crash"], "tools": ["echo"]}}
    result = _connect_build(skill(mcp_servers=(McpServerRequest("echo", ("echo",)),)), catalog)
    assert not result.checks[0].passed and "missing ECHO_TOKEN" in result.checks[0].reason
    optional = _connect_build(
        skill(mcp_servers=(McpServerRequest("echo", ("echo",), required=False),)),
        catalog,
    )
    assert optional.checks[0].passed and "missing ECHO_TOKEN" in optional.warnings[0]


def test_handshake_with_the_mindrian_server() -> None:
    result = HandshakeProbe(ROOT, timeout=_START_BOUND)(BUILTIN_CATALOG["mindrian"])
    assert result.ok, result.detail
    offered = {t.name for t in result.tools}
    assert set(BUILTIN_CATALOG["mindrian"].tools) <= offered
    for tool in result.tools:
        assert definition_errors(definition_to_plain(tool)) == (), tool.name
    build = _connect_build(
        skill(mcp_servers=(McpServerRequest("mindrian", ("select_frameworks", "get_framework")),)),
        {},
    )
    assert all(c.passed for c in build.checks), [c.reason for c in build.checks]
