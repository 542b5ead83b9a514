"""Where a skill's file is, and which files beside a CHAIN.md are its stages: names only.

Split from :mod:`builder.skill.chain`, which reads a chain, so that listing a
skill's files (every no-op build does, for each skill) does not import what
parsing one needs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from builder.pipeline.patterns import on_first_use

__all__ = [
    "CHAIN_FILE",
    "CHAIN_KEYS",
    "SKILL_FILE",
    "StageFile",
    "is_chain",
    "skill_file",
    "stage_files",
]

#: The file that makes a folder a chain, in place of SKILL.md.
CHAIN_FILE = "CHAIN.md"
#: CHAIN.md keys phase 1 reads beyond a skill's own: the stage count and the title.
CHAIN_KEYS: tuple[str, ...] = ("display_name", "stages")
#: The file that makes a folder a skill.
SKILL_FILE = "SKILL.md"
#: A stage file's name: its number, a dash, the stage's name (``01-decompose.md``).
_STAGE_NAME = on_first_use(r"(?P<number>[0-9]+)-(?P<name>[^/]+)\.md")


@dataclass(frozen=True)
class StageFile:
    """A numbered file beside CHAIN.md."""

    number: int
    """The number its name starts with (``1`` for ``01-decompose.md``)."""
    name: str
    """The stage's name, the rest of the file name (``decompose``)."""
    path: str
    """Its name relative to the chain folder (``01-decompose.md``)."""


def skill_file(path: Path) -> Path:
    """The file to build for ``path``: itself, else its folder's SKILL.md, else its CHAIN.md.

    A folder named like the file is itself (reading it then says it is a folder), not a
    skill folder holding ``SKILL.md/SKILL.md``.
    """
    if path.name in (SKILL_FILE, CHAIN_FILE) or not path.is_dir():
        return path
    chain = path / CHAIN_FILE
    return chain if not (path / SKILL_FILE).is_file() and chain.is_file() else path / SKILL_FILE


def is_chain(source_path: str) -> bool:
    """Whether the file being built is a chain's CHAIN.md."""
    return PurePosixPath(source_path).name == CHAIN_FILE


def stage_files(names: Iterable[str]) -> tuple[StageFile, ...]:
    """The numbered stage files among folder-relative ``names``, by number then name."""
    found = []
    for name in names:
        match = _STAGE_NAME().fullmatch(name)
        if match:
            found.append(StageFile(int(match["number"]), match["name"], name))
    return tuple(sorted(found, key=lambda s: (s.number, s.path)))
