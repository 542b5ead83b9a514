"""Where a mindrian project keeps things, found from the project root, never the working directory.

The root is the nearest folder upwards (from the working directory, or a
given start) whose ``pyproject.toml`` has a ``[tool.mindrian]`` table. Its
``generated/registry.yaml`` lists the generated packages, ``generated/<pkg>/``
holds them, and ``.mindrian/`` keeps the embedded registry, agent state and
session databases.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProjectNotFoundError", "ProjectPaths", "find_project_root"]


class ProjectNotFoundError(LookupError):
    """No folder upwards has a pyproject.toml with ``[tool.mindrian]``."""


def find_project_root(start: Path | None = None) -> Path | None:
    """The nearest mindrian project folder from ``start`` (default: the working directory) up."""
    origin = (start or Path.cwd()).absolute()
    for folder in (origin, *origin.parents):
        pyproject = folder / "pyproject.toml"
        if not pyproject.is_file():
            continue
        try:
            table = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if "mindrian" in table.get("tool", {}):
            return folder
    return None


@dataclass(frozen=True)
class ProjectPaths:
    """The files of one project."""

    root: Path
    """The folder whose pyproject.toml has ``[tool.mindrian]``."""

    @classmethod
    def locate(cls, start: Path | None = None) -> ProjectPaths:
        """The project containing ``start`` (default: the working directory)."""
        root = find_project_root(start)
        if root is None:
            where = (start or Path.cwd()).absolute()
            raise ProjectNotFoundError(
                f"{where} is not inside a mindrian project "
                "(no pyproject.toml with [tool.mindrian] in it or above it)"
            )
        return cls(root)

    @property
    def generated(self) -> Path:
        """Folder of the generated packages."""
        return self.root / "generated"

    @property
    def registry_yaml(self) -> Path:
        """The committed registry export."""
        return self.generated / "registry.yaml"

    @property
    def embedded_registry(self) -> Path:
        """The embedded registry database (a build artefact)."""
        return self.root / ".mindrian" / "registry.lbug"

    @property
    def state_dir(self) -> Path:
        """State of ``mindrian run``: role histories, guided progress, pipeline checkpoints."""
        return self.root / ".mindrian" / "state"

    @property
    def sessions_db(self) -> Path:
        """SQLite file of ``mindrian serve``'s sessions when no database URL is given."""
        return self.root / ".mindrian" / "sessions.db"
