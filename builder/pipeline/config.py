"""Project configuration: ``[tool.mindrian]`` in pyproject.toml plus command-line switches."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_MODELS", "BuildConfig", "load_config"]

#: Per-type default models, used when neither the skill nor pyproject.toml names one.
DEFAULT_MODELS: Mapping[str, str] = {
    "operator": "anthropic:claude-sonnet-4-5",
    "role": "anthropic:claude-sonnet-4-5",
    "collaborative": "anthropic:claude-opus-4-1",
    "pipeline": "anthropic:claude-opus-4-1",
    "guided": "anthropic:claude-sonnet-4-5",
}


@dataclass(frozen=True)
class BuildConfig:
    """Settings that shape a build; everything but ``root`` feeds the phases' input digests."""

    root: str = "."
    """Project root (where pyproject.toml is); not part of any digest."""
    models: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_MODELS))
    """Per-type default model strings (``provider:model_id``)."""
    mcp_catalog: Mapping[str, Any] = field(default_factory=dict)
    """Extra MCP server catalog entries from ``[tool.mindrian.mcp]`` (plain data)."""
    connect: bool = False
    """Phase 4 really connects to MCP servers instead of checking their configuration."""
    neo4j_uri: str | None = None
    """Register in Neo4j at this URI instead of the embedded registry."""
    out_dir: str = "generated"
    """Where generated packages go, relative to ``root`` unless absolute (phase 6 adds it to its own
    digest)."""

    def digest_data(self) -> dict[str, Any]:
        """The part of the configuration that can change a phase's output."""
        return {
            "models": {k: self.models[k] for k in sorted(self.models)},
            "mcp_catalog": self.mcp_catalog,
            "connect": self.connect,
        }

    def with_switches(self, **changes: Any) -> BuildConfig:
        """A copy with command-line switches applied."""
        return replace(self, **changes)


def load_config(root: Path) -> BuildConfig:
    """Read ``[tool.mindrian]`` from ``root/pyproject.toml`` when present, else the built-in
    defaults."""
    pyproject = root / "pyproject.toml"
    table: Mapping[str, Any] = {}
    if pyproject.is_file():
        table = (
            tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("mindrian", {})
        )
    models = {**DEFAULT_MODELS, **table.get("models", {})}
    # mcp.yaml beside pyproject.toml and [tool.mindrian.mcp] both extend the catalog; the
    # pyproject entry wins on a name clash because it is the file the build is configured by.
    from builder.mcp.catalog import read_mcp_yaml

    catalog = {**read_mcp_yaml(root), **table.get("mcp", {})}
    return BuildConfig(root=str(root), models=models, mcp_catalog=catalog)
