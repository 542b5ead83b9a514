"""Finding a mindrian project: the nearest folder upwards whose ``pyproject.toml`` has a
``[tool.mindrian]`` table (:mod:`mindrian.project` names its files, and re-exports these).

Apart from the layout's record so that a command that needs only the root (``mindrian
validate``) does not define it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["find_project_root", "parsed_toml"]


def find_project_root(start: Path | None = None) -> Path | None:
    """The nearest mindrian project folder from ``start`` (default: the working directory) up."""
    import tomllib  # only a command that looks for its project pays for the TOML parser

    origin = (start or Path.cwd()).absolute()
    for folder in (origin, *origin.parents):
        pyproject = folder / "pyproject.toml"
        if not pyproject.is_file():
            continue
        try:
            table = parsed_toml(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        tool = table.get("tool")
        if isinstance(tool, dict) and "mindrian" in tool:
            return folder
    return None


@functools.lru_cache(maxsize=4)
def parsed_toml(text: str) -> Mapping[str, Any]:
    """``text`` parsed as TOML (``tomllib.TOMLDecodeError`` when it is not), kept for the next
    caller with the same text: a command finds its project, then reads its configuration
    from the same ``pyproject.toml``, and parses it once. Shared: never to be modified."""
    import tomllib

    return tomllib.loads(text)
