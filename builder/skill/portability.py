"""Where the Agent Skills specification is stricter than phase 1: warnings phase 1 adds to its own,
so ``validate`` and ``build`` print them alike.

mindrian builds a skill whose ``name`` is a title (``PWS Validation``) or differs from its
folder; other hosts, and the reference validator ``agentskills validate``, refuse it. These
warnings say so, located, so a skill that builds here stays portable:

======  ==========================================================================
W106    ``name`` differs from the skill's folder (the specification requires them equal)
W107    ``name`` is not 1-64 lowercase letters, digits and single hyphens
======  ==========================================================================

(W105, a description over 1,024 characters, is phase 1's own check of the same kind.)
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from builder.pipeline.errors import SourceLocation
from builder.skill.model import SkillDefinition

__all__ = ["NAME_LIMIT", "portability_warnings"]

#: The specification's longest ``name``.
NAME_LIMIT = 64
_NAME_FORM = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_SKILL_FILE = "SKILL.md"


def portability_warnings(definition: SkillDefinition) -> tuple[str, ...]:
    """Located warnings (``PATH:LINE:COL: warning[W106]: …``) for what other hosts refuse."""
    name, path = definition.name, definition.source_path
    where = SourceLocation(path, definition.field_lines.get("name", 0), 1)
    warnings = []
    if len(name) > NAME_LIMIT or not _NAME_FORM.fullmatch(name):
        warnings.append(
            _warning(
                where,
                "W107",
                f"name {name!r} is not 1-{NAME_LIMIT} lowercase letters, digits and single "
                "hyphens, as the Agent Skills specification requires; keep the title in the "
                "first '#' heading and write the name as a slug",
            )
        )
    file = PurePosixPath(path)
    # Only a SKILL.md in a folder has a folder name to match (a loose file is not a skill folder).
    if file.name == _SKILL_FILE and file.parent.name and file.parent.name != name:
        warnings.append(
            _warning(
                where,
                "W106",
                f"name {name!r} differs from its folder {file.parent.name!r}; the Agent Skills "
                "specification requires them equal (rename one; metadata.mindrian.id keeps the "
                "agent id)",
            )
        )
    return tuple(warnings)


def _warning(where: SourceLocation, code: str, message: str) -> str:
    return f"{where}: warning[{code}]: {message}"
