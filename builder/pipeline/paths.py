"""How the compiler names a path to its user, and which named paths it refuses: light, so the
script's entry point (:mod:`builder.entry`) answers with them before the command line
application is imported."""

from __future__ import annotations

import os
from pathlib import Path

from builder.pipeline.errors import SkillError, SourceLocation

__all__ = ["display", "refuse_outside_link"]


def display(path: Path, root: Path) -> str:
    """How a path appears in messages and generated headers: relative to the root when inside it."""
    try:
        return path.absolute().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def refuse_outside_link(path: Path, root: Path) -> None:
    """Refuse (S114) a path inside the project that a link leads to a folder outside it: build
    --all leaves such a skill out, so naming it must not build it either."""
    # Lexically normalised: ``../elsewhere/SKILL.md`` named from the project is outside it, not
    # a path inside it that a link leads out of (a skill anywhere may be built by its path).
    where = Path(os.path.normpath(path if path.is_absolute() else Path.cwd() / path))
    inside = root.absolute()
    if not where.is_relative_to(inside) or where.resolve().is_relative_to(inside.resolve()):
        return
    link = next(
        (p for p in (where, *where.parents) if p.is_relative_to(inside) and p.is_symlink()), where
    )
    raise SkillError(
        f"{display(link, inside)} links to {link.resolve().as_posix()}, outside the project: "
        "build --all leaves it out, so it is not built here either",
        location=SourceLocation(display(link, inside)),
        code="S114",
    )
