"""The MCP server's select_frameworks ranks a sentence as ``mindrian select "..."`` does."""

from __future__ import annotations

from pathlib import Path

import anyio
from graph_factories import SIX
from test_mcp_server import _session_calls

from mindrian.graph.registry_yaml import registry_from_yaml, write_registry_yaml
from mindrian.routing.candidates import describe

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
        chosen = registry.select_text(SENTENCE)
        expected = [c.plain() for c in describe(chosen, registry.get)]
    assert ranked.structured_content["frameworks"] == expected
    assert [f["id"] for f in expected] == ["jtbd", "csio", "trending"]
    # Each with what a model needs to choose between them.
    assert [set(f) for f in expected] == [
        {"id", "name", "score", "confident", "description", "not_for"}
    ] * 3
    assert [f["description"] for f in expected] == [
        registry_from_yaml(path).get(f["id"]).description or "" for f in expected
    ]
    assert both.is_error
