"""MCP servers of an agent are connected and checked before every run, against a real stdio server.

Agno alone drops a server it cannot reach and runs without its tools; these
tests run the project's own MCP server (``python -m mindrian.mcp``) as a real
subprocess and check that a required server that is down fails the run, an
optional one only warns, tool calls really reach the server, and no server
process outlives the run.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from mindrian.agents import AgentRunError, OperatorAgent
from mindrian.agents.mcp import McpUnavailableError, mcp_toolkit
from mindrian.graph import FrameworkRecord, write_registry_yaml
from mindrian.testing import ScriptedModel, SeenMessage, Step

#: Frameworks the test registry holds; only the first matches the trigger "scqa".
FRAMEWORKS = (
    FrameworkRecord(
        id="scqa-lens",
        name="SCQA Lens",
        type="operator",
        triggers=("scqa", "storyline"),
        problem_types=("ill-defined",),
    ),
    FrameworkRecord(
        id="five-whys",
        name="Five Whys",
        type="operator",
        triggers=("root cause",),
        problem_types=("well-defined",),
    ),
)
REGISTRY_TOOLS = ("select_frameworks", "get_framework")


@pytest.fixture
def registry_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "registry.yaml"
    write_registry_yaml(FRAMEWORKS, path)
    return path


def server_spec(
    name: str,
    *args: str,
    required: bool = True,
    tools: Sequence[str] = REGISTRY_TOOLS,
) -> dict[str, Any]:
    """A plain server spec as a generated spec.yaml holds it."""
    return {
        "name": name,
        "transport": "stdio",
        "command": sys.executable,
        "args": list(args),
        "env": [],
        "url": "",
        "required": required,
        "tools": list(tools),
    }


def registry_server(registry: Path, **options: Any) -> dict[str, Any]:
    return server_spec("registry", "-m", "mindrian.mcp", "--registry", str(registry), **options)


#: A server whose command starts and dies at once: the module does not exist.
BROKEN = ("-m", "no_such_module_for_mindrian_tests")


@pytest.fixture
def mcp_agent(
    agent_class: Callable[..., type[OperatorAgent]],
) -> Callable[..., type[OperatorAgent]]:
    """An operator agent class whose toolkits and specs come from ``servers`` (toolkits built per
    class)."""

    def make(*servers: Mapping[str, Any], tools: Sequence[Any] | None = None) -> Any:
        toolkits = tuple(tools) if tools is not None else tuple(mcp_toolkit(s) for s in servers)
        return agent_class(
            OperatorAgent,
            agent_id="framework-picker",
            instructions="Pick a framework with the registry tools.",
            tools=toolkits,
            mcp_servers=tuple(servers),
        )

    return make


def answer_from_tool_result(messages: tuple[SeenMessage, ...]) -> dict[str, Any]:
    """Structured answer built from what the server returned, so it can only exist if the tool
    ran."""
    results = [m.content for m in messages if m.role == "tool"]
    chosen = [f["id"] for f in json.loads(results[-1])["frameworks"]]
    return {
        "output": f"Start with {chosen[0]}.",
        "key_findings": chosen,
        "confidence": 0.8,
    }


def picking_model() -> ScriptedModel:
    return ScriptedModel(
        Step.tool_call("select_frameworks", triggers=["scqa"]),
        answer_from_tool_result,
    )


def server_processes() -> list[str]:
    """Command lines of this process's children that run an MCP server of these tests."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue  # the process ended while we looked
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and "-m mindrian.mcp" in cmdline:
            found.append(cmdline)
    return found


def test_tool_call_reaches_the_server_and_the_handoff_succeeds(
    mcp_agent, registry_yaml, run
) -> None:
    model = picking_model()
    agent = mcp_agent(registry_server(registry_yaml))(model=model)
    context = agent.create_handoff_context("Our board deck has no storyline")

    result = run(agent.process_handoff(context))

    assert result.success, result.error
    model.assert_complete()
    first, follow_up = model.calls
    assert set(REGISTRY_TOOLS) <= set(first.tools)
    (tool_result,) = follow_up.contents("tool")
    assert json.loads(tool_result)["frameworks"][0]["id"] == "scqa-lens"
    assert "five-whys" not in tool_result
    assert result.output == "Start with scqa-lens."
    assert result.key_findings == ("scqa-lens",)
    (toolkit,) = agent.tools
    assert not toolkit.initialized
    assert server_processes() == []


@pytest.mark.parametrize(
    ("spec_args", "tools", "reason"),
    [
        (BROKEN, REGISTRY_TOOLS, "Connection closed"),
        (
            ("-m", "mindrian.mcp"),
            ("select_frameworks", "rank_everything"),
            "it does not offer rank_everything "
            "(offers: get_framework, read_neo4j_cypher, select_frameworks)",
        ),
    ],
    ids=["cannot-start", "lacks-a-requested-tool"],
)
def test_required_server_that_is_unusable_fails_the_handoff(
    mcp_agent, registry_yaml, run, spec_args, tools, reason
) -> None:
    args = spec_args
    if "mindrian.mcp" in spec_args:
        args = (*spec_args, "--registry", str(registry_yaml))
    model = ScriptedModel(Step.tool_call("select_frameworks", triggers=["scqa"]))
    agent = mcp_agent(server_spec("registry", *args, tools=tools))(model=model)

    result = run(agent.process_handoff(agent.create_handoff_context("Pick one")))

    assert not result.success
    assert result.error.startswith("MCP server 'registry' is unavailable: ")
    assert reason in result.error
    assert model.calls == ()  # the model is never asked while a required server is down
    assert server_processes() == []


def test_run_raises_the_run_error_naming_the_server(mcp_agent, run) -> None:
    agent = mcp_agent(server_spec("registry", *BROKEN))(model=ScriptedModel())

    with pytest.raises(
        McpUnavailableError, match=r"^MCP server 'registry' is unavailable: "
    ) as raised:
        run(agent.run("Pick one"))

    assert isinstance(raised.value, AgentRunError)


def test_optional_server_that_is_down_only_warns(
    mcp_agent, run, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel({"output": "Answered without the registry."})
    agent = mcp_agent(server_spec("registry", *BROKEN, required=False))(model=model)
    caplog.set_level(logging.WARNING, logger="mindrian.agents.mcp")

    result = run(agent.process_handoff(agent.create_handoff_context("Pick one")))

    assert result.success, result.error
    assert result.output == "Answered without the registry."
    assert not set(REGISTRY_TOOLS) & set(model.calls[0].tools)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("optional MCP server 'registry' is unavailable" in w for w in warnings)


def test_required_server_without_a_toolkit_fails(mcp_agent, run) -> None:
    spec = server_spec("registry", "-m", "mindrian.mcp")
    agent = mcp_agent(spec, tools=())(model=ScriptedModel())

    result = run(agent.process_handoff(agent.create_handoff_context("Pick one")))

    assert result.error == (
        "MCP server 'registry' is unavailable: the agent has no MCP toolkit named after it"
    )


def test_concurrent_runs_share_one_connection_until_the_last_ends(
    mcp_agent, registry_yaml, run
) -> None:
    cls = mcp_agent(registry_server(registry_yaml))
    models = (picking_model(), picking_model())
    agents = [cls(model=m) for m in models]

    async def both() -> tuple[Any, ...]:
        contexts = [a.create_handoff_context("Storyline for the board") for a in agents]
        return await asyncio.gather(
            *(a.process_handoff(c) for a, c in zip(agents, contexts, strict=True))
        )

    results = run(both())

    assert [r.output for r in results] == ["Start with scqa-lens."] * 2
    for model in models:
        model.assert_complete()
    (toolkit,) = cls.tools
    assert not toolkit.initialized
    assert server_processes() == []


def test_toolkit_from_a_spec_runs_python_commands_under_this_interpreter(
    tmp_path: Path,
) -> None:
    toolkit = mcp_toolkit(
        {
            "name": "registry",
            "transport": "stdio",
            "command": "python",
            "args": ["-m", "mindrian.mcp", "--registry", str(tmp_path / "a b.yaml")],
            "tools": ["select_frameworks"],
        }
    )

    assert toolkit.name == "registry"
    assert toolkit.server_params.command == sys.executable
    assert toolkit.server_params.args == [
        "-m",
        "mindrian.mcp",
        "--registry",
        str(tmp_path / "a b.yaml"),
    ]
    assert toolkit.include_tools == ["select_frameworks"]
