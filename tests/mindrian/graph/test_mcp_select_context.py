"""The MCP server's select_frameworks ranks a sentence as ``mindrian select "..."`` does."""

from __future__ import annotations

from pathlib import Path

import anyio
from graph_factories import SIX
from test_mcp_server import _session_calls

from mindrian.graph.registry_yaml import registry_from_yaml, write_registry_yaml

SENTENCE = "Our customers' jobs in a wicked market"


def test_context_is_ranked_like_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "registry.yaml"
    write_registry_yaml(SIX, path)
    calls = [
        ("select_frameworks", {"triggers": [], "context": SENTENCE}),
        ("select_frameworks", {"triggers": ["scqa"], "context": SENTENCE}),
    ]
    _, _, (ranked, both) = anyio.run(_session_calls, path, calls)
    with registry_from_yaml(path) as registry:
        expected = [
            {"id": s.id, "name": s.name, "score": s.score} for s in registry.select_text(SENTENCE)
        ]
    assert ranked.structured_content["frameworks"] == expected
    assert [f["id"] for f in expected] == ["jtbd", "csio", "trending"]
    assert both.is_error
