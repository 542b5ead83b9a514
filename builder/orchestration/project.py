"""Reading a project's build configuration: ``[tool.mindrian]`` and ``mcp.yaml``."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builder.mcp.catalog import read_mcp_yaml
from builder.pipeline.config import DEFAULT_MODELS, BuildConfig

__all__ = ["load_config"]


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
    catalog = {**read_mcp_yaml(root), **table.get("mcp", {})}
    return BuildConfig(root=str(root), models=models, mcp_catalog=catalog)
