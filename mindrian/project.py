"""Where a mindrian project keeps things, found from the project root, never the working directory.

The root is the nearest folder upwards (from the working directory, or a
given start) whose ``pyproject.toml`` has a ``[tool.mindrian]`` table. Its
``generated/registry.yaml`` lists the generated packages, ``generated/<pkg>/``
holds them, and ``.mindrian/`` keeps the embedded registry, agent state and
session databases.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from mindrian.errors import MindrianError
from mindrian.project_root import find_project_root, parsed_toml

__all__ = [
    "DEFAULT_OUT_DIR",
    "REGISTRY_DB_NAME",
    "REGISTRY_YAML_NAME",
    "STATE_DIR_NAME",
    "ProjectNotFoundError",
    "ProjectPaths",
    "find_project_root",
    "parsed_toml",
]

#: The state folder (git-ignored): checkpoints, the embedded registry, staging, agent state.
STATE_DIR_NAME = ".mindrian"
#: The generated packages' folder, relative to the project root.
DEFAULT_OUT_DIR = "generated"
#: File name of the embedded registry database inside a state folder.
REGISTRY_DB_NAME = "registry.lbug"
#: File name of the committed registry export inside an output folder.
REGISTRY_YAML_NAME = "registry.yaml"


class ProjectNotFoundError(MindrianError, LookupError):
    """No folder upwards has a pyproject.toml with ``[tool.mindrian]``."""


@dataclass(frozen=True)
class ProjectPaths:
    """The files of one project, for one output folder (the one place the layout is spelled).

    ``ProjectPaths(root)`` is the project's own layout; ``ProjectPaths(root, out)``
    is a build into another folder ``out``, which keeps its own state (registry
    database, staging) in ``out/.mindrian``, so the registry index stays with the
    packages it indexes and the project's registry is never touched.
    """

    root: Path
    """The folder whose pyproject.toml has ``[tool.mindrian]``."""
    out: Path | None = None
    """The output folder when not ``generated/`` (relative to ``root`` unless absolute)."""

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
        """Folder of the generated packages (``generated/``, or the other output folder)."""
        return self.root / (DEFAULT_OUT_DIR if self.out is None else self.out)

    @functools.cached_property
    def isolated(self) -> bool:
        """True when the output folder is not the project's own ``generated/``."""
        return self.generated.resolve() != (self.root / DEFAULT_OUT_DIR).resolve()

    @property
    def project_state(self) -> Path:
        """The project's state folder ``<root>/.mindrian``."""
        return self.root / STATE_DIR_NAME

    @property
    def output_state(self) -> Path:
        """The output's state folder: the project's, or ``<out>/.mindrian`` for another output."""
        return self.generated / STATE_DIR_NAME if self.isolated else self.project_state

    @property
    def registry_yaml(self) -> Path:
        """The committed registry export beside the packages."""
        return self.generated / REGISTRY_YAML_NAME

    @property
    def embedded_registry(self) -> Path:
        """The embedded registry database indexing the output folder's packages (an artefact)."""
        return self.output_state / REGISTRY_DB_NAME

    @property
    def checkpoints(self) -> Path:
        """Phase checkpoints, ``<root>/.mindrian/checkpoints`` whatever the output folder."""
        return self.project_state / "checkpoints"

    @property
    def staging(self) -> Path:
        """Builds in progress, on the output's filesystem (see builder.pipeline.transaction)."""
        return self.output_state / "staging"

    @property
    def state_dir(self) -> Path:
        """State of ``mindrian run``: role histories, guided progress, pipeline checkpoints."""
        return self.project_state / "state"

    @property
    def sessions_db(self) -> Path:
        """SQLite file of ``mindrian serve``'s sessions when no database URL is given."""
        return self.project_state / "sessions.db"
