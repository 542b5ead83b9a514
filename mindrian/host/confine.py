"""Where host tools may read and write: the workspace, and the skill's own files read-only.

Every path is resolved before it is checked: relative to the workspace,
``..`` collapsed and every symbolic link followed (``Path.resolve``), so a link
inside the workspace that leads out is outside. The file is then opened at its
resolved path. A command running at the same time could swap a checked folder
for a link between the check and the open; the tools that can do that (Bash)
need their own permission.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mindrian.errors import MindrianError

__all__ = ["Confinement", "OutsideError"]


class OutsideError(MindrianError, PermissionError):
    """A path the tools may not touch; its message is the reason the model is told."""


@dataclass(frozen=True)
class Confinement:
    """The folders host tools work in."""

    workspace: Path
    """Where tools read, write and run commands (resolved)."""
    skill_dir: Path | None = None
    """The package's copy of the skill's files: readable, never writable (resolved)."""

    @classmethod
    def of(cls, workspace: Path, skill_dir: Path | None = None) -> Confinement:
        """The confinement of ``workspace`` and ``skill_dir``, both resolved now."""
        resolved = skill_dir.resolve() if skill_dir is not None and skill_dir.is_dir() else None
        return cls(workspace.resolve(), resolved)

    def resolve(self, path: str) -> Path:
        """``path`` (relative to the workspace, or absolute) with links and ``..`` resolved."""
        if not isinstance(path, str) or not path.strip():
            raise OutsideError("no path given")
        if "\0" in path:
            raise OutsideError("a path cannot contain a NUL character")
        given = Path(os.path.expanduser(path)) if path.startswith("~") else Path(path)
        return (self.workspace / given).resolve()

    def in_skill(self, resolved: Path) -> bool:
        """Whether ``resolved`` is one of the skill's files (or its folder)."""
        return self.skill_dir is not None and resolved.is_relative_to(self.skill_dir)

    def readable(self, path: str) -> Path:
        """The resolved path when it is in the workspace or the skill's files; else raises."""
        resolved = self.resolve(path)
        if resolved.is_relative_to(self.workspace) or self.in_skill(resolved):
            return resolved
        raise OutsideError(f"{path} is outside the workspace{self._and_skill()}")

    def writable(self, path: str) -> Path:
        """The resolved path when it is in the workspace and not a skill file; else raises."""
        resolved = self.resolve(path)
        if self.in_skill(resolved):
            raise OutsideError(f"{path} is one of the skill's own files, which are read-only")
        if not resolved.is_relative_to(self.workspace):
            raise OutsideError(f"{path} is outside the workspace")
        return resolved

    def check_arguments(self, argv: tuple[str, ...]) -> None:
        """Raise when a word of a command (or the value after ``=`` in one) names a path that
        resolves outside the workspace and the skill's files: a pre-approved program may be
        given arguments, not other folders (``git status --output=../x``)."""
        for word in argv:
            for candidate in (word, word.partition("=")[2]):
                if candidate and self._names_outside(candidate):
                    raise OutsideError(
                        f"the argument {word!r} names a path outside the workspace"
                        f"{self._and_skill()}"
                    )

    def _names_outside(self, candidate: str) -> bool:
        if "\0" in candidate:
            return False
        try:
            link = (self.workspace / candidate).is_symlink()
        except OSError:  # a name too long for a file
            link = False
        if not ("/" in candidate or candidate in (".", "..") or link):
            return False
        try:
            self.readable(candidate)
        except (OutsideError, OSError, RuntimeError):
            return True
        return False

    def _and_skill(self) -> str:
        return " and the skill's files" if self.skill_dir is not None else ""
