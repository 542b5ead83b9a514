"""A project's ``mcp.yaml``: extra MCP server catalog entries beside pyproject.toml.

Loading a project's configuration reads it (``mindrian validate`` among others), while only
tool assembly builds the catalog (:mod:`builder.mcp.catalog`, its entry class and its JSON
Schema), so the file is read here, apart from the catalog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builder.pipeline.errors import SourceLocation, ToolAssemblyError

__all__ = ["MCP_YAML", "read_mcp_yaml"]

#: File beside pyproject.toml that may hold extra catalog entries.
MCP_YAML = "mcp.yaml"


def read_mcp_yaml(root: Path) -> dict[str, Any]:
    """Entries of ``root/mcp.yaml`` (a mapping of server name to entry), or ``{}`` when absent."""
    path = root / MCP_YAML
    if not path.is_file():
        return {}
    import yaml  # only a project with an mcp.yaml pays for the YAML parser

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    servers = data.get("servers", data) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ToolAssemblyError(
            "mcp.yaml must map server names to entries (optionally under 'servers')",
            location=SourceLocation(MCP_YAML),
            code="T010",
        )
    return servers
