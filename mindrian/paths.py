"""Where a project keeps things: the one place the layout under the project root is spelled.

``ProjectPaths(root)`` is the project's own layout; ``ProjectPaths(root, out)``
is a build into another folder ``out``, which keeps its own state (registry
database, staging) in ``out/.mindrian`` so the registry index stays with the
packages it indexes and the project's registry is never touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_OUT_DIR",
    "REGISTRY_DB_NAME",
    "REGISTRY_YAML_NAME",
    "STATE_DIR_NAME",
    "ProjectPaths",
]

#: The state folder (git-ignored): checkpoints, the embedded registry, staging.
STATE_DIR_NAME = ".mindrian"
#: The generated packages' folder, relative to the project root.
DEFAULT_OUT_DIR = "generated"
#: File name of the embedded registry database inside a state folder.
REGISTRY_DB_NAME = "registry.lbug"
#: File name of the committed registry export inside an output folder.
REGISTRY_YAML_NAME = "registry.yaml"


@dataclass(frozen=True)
class ProjectPaths:
    """The folders and files of one project, for one output folder."""

    root: Path
    """The project root (where pyproject.toml with ``[tool.mindrian]`` is)."""
    out: Path | None = None
    """The output folder when not ``generated/`` (relative to ``root`` unless absolute)."""

    @property
    def out_dir(self) -> Path:
        """Where generated packages and ``registry.yaml`` go."""
        return self.root / (DEFAULT_OUT_DIR if self.out is None else self.out)

    @property
    def isolated(self) -> bool:
        """True when the output folder is not the project's own ``generated/``."""
        return not _same(self.out_dir, self.root / DEFAULT_OUT_DIR)

    @property
    def project_state(self) -> Path:
        """The project's state folder ``<root>/.mindrian`` (checkpoints, whatever ``out``)."""
        return self.root / STATE_DIR_NAME

    @property
    def state_dir(self) -> Path:
        """The output's state folder: the project's, or ``<out>/.mindrian`` for another output."""
        return self.out_dir / STATE_DIR_NAME if self.isolated else self.project_state

    @property
    def registry_db(self) -> Path:
        """The embedded registry database indexing the output folder's packages."""
        return self.state_dir / REGISTRY_DB_NAME

    @property
    def registry_yaml(self) -> Path:
        """The committed registry export beside the packages."""
        return self.out_dir / REGISTRY_YAML_NAME

    @property
    def checkpoints(self) -> Path:
        """Phase checkpoints, ``<root>/.mindrian/checkpoints``."""
        return self.project_state / "checkpoints"

    @property
    def staging(self) -> Path:
        """Build transactions in progress, on the output's filesystem (cleaned at the next build)."""
        return self.state_dir / "staging"

    @property
    def locks(self) -> Path:
        """Lock files serialising writers of the output folder and its registry."""
        return self.state_dir / "locks"


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name one folder (resolved, so ``./generated`` equals ``generated``)."""
    return a.resolve() == b.resolve()
