"""Project configuration: ``[tool.mindrian]`` in pyproject.toml plus command-line switches (read
by :func:`builder.orchestration.project.load_config`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mindrian.agent_types import AGENT_TYPES

__all__ = ["DEFAULT_MODELS", "BuildConfig"]

#: Per-type default models, used when neither the skill nor pyproject.toml names one.
DEFAULT_MODELS: Mapping[str, str] = {record.name: record.model for record in AGENT_TYPES}


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
