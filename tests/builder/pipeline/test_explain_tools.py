"""``mindrian explain``: the agent's tools and which of their calls run without asking."""

from __future__ import annotations

import json
from typing import Any

from builder.pipeline.report import agent_tools, explain_json, explain_text


def _checkpoint(tools: dict[str, Any], elements: list[Any] | None = None) -> dict[str, Any]:
    return {
        "phase": "tool_assembly",
        "number": 4,
        "passed": True,
        "input_digest": "0" * 64,
        "checks": [],
        "warnings": [],
        "output": {"id": "demo", "instructions": {"elements": elements or []}, "tools": tools},
    }


HOST = {
    "grant": ["Bash", "Read", "Write"],
    "allow": ["Bash(git status:*)", "Bash(python3:*)", "Read"],
    "reasons": [
        {"tool": "Bash", "reason": "allowed-tools names Bash(git status:*) (line 4)"},
        {"tool": "Read", "reason": "allowed-tools names Read (line 4)"},
        {"tool": "Write", "reason": "the body tells the agent to write a file (line 15)"},
    ],
}


def test_each_host_tool_says_which_calls_run_without_asking() -> None:
    tools = agent_tools([_checkpoint({"host": HOST})])
    assert [(t["tool"], t["runs_without_asking"]) for t in tools] == [
        ("Bash", ["Bash(git status:*)", "Bash(python3:*)"]),
        ("Read", "all"),
        ("Write", "none"),
    ]
    text = explain_text("demo", [_checkpoint({"host": HOST})])
    assert text.endswith(
        "tools:\n"
        "  host tool Bash (allowed-tools names Bash(git status:*) (line 4)): runs without asking: "
        "Bash(git status:*), Bash(python3:*); other calls ask\n"
        "  host tool Read (allowed-tools names Read (line 4)): every call runs without asking\n"
        "  host tool Write (the body tells the agent to write a file (line 15)): every call asks\n"
    )


def test_mcp_custom_and_reference_tools_are_listed_and_json_has_them() -> None:
    checkpoint = _checkpoint(
        {
            "mcp_servers": [{"name": "neo4j", "tools": ["read_neo4j_cypher"]}],
            "custom_tools": [{"name": "estimate"}],
        },
        elements=[{"name": "guide"}],
    )
    data = json.loads(explain_json("demo", [checkpoint]))
    assert [(t["tool"], t["kind"]) for t in data["tools"]] == [
        ("read_reference", "references"),
        ("read_neo4j_cypher", "MCP server neo4j"),
        ("estimate", "custom tool"),
    ]
    assert explain_text("demo", [_checkpoint({})]).endswith("\ntools: none\n")
