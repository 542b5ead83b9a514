"""The files a skill's package holds under ``skill/``
(:data:`~builder.skill.source.SKILL_FOLDER`), as phase 6 writes them: apart from
:mod:`builder.skill.source`, which reads them and which ``mindrian validate`` imports without
defining this record."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from builder.pipeline.contract import SkillSource

__all__ = ["SkillFile", "skill_files"]


@dataclass(frozen=True)
class SkillFile:
    """A file of the skill as its package holds it (under ``skill/``)."""

    name: str
    """Path relative to the skill's base directory (``scripts/check.py``, ``SKILL.md``)."""
    data: bytes
    """The bytes, as in the skill folder."""
    executable: bool
    """Whether it keeps the executable bit (git's mode 100755)."""


def skill_files(source: SkillSource) -> tuple[SkillFile, ...]:
    """Every file a package holds under ``skill/``: the skill's own file (SKILL.md or CHAIN.md)
    first, then the folder's files in name order."""
    executables = set(source.executables)
    own = SkillFile(PurePosixPath(source.path).name, source.data, False)
    return (own, *(SkillFile(n, d, n in executables) for n, d in source.files))
