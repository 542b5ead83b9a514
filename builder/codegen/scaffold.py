"""``mindrian new``: scaffold a skill folder from the copier template in ``templates/skill``."""

from __future__ import annotations

import re
from pathlib import Path

from builder.codegen.render import TEMPLATES_ROOT
from builder.pipeline.errors import ScaffoldError, UsageError
from builder.skill.model import AGENT_TYPES
from mindrian.agent_types import record_of

__all__ = ["NAME_PATTERN", "SKILL_TEMPLATE", "new_skill"]

#: The copier template behind ``mindrian new``.
SKILL_TEMPLATE = TEMPLATES_ROOT / "skill"
#: Names the template accepts (the same rule its ``copier.yml`` validator applies).
NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*\Z")


def new_skill(name: str, type: str, dest: Path | str, description: str | None = None) -> Path:
    """Create ``dest/<name>/SKILL.md`` for an agent of ``type``; returns the SKILL.md path.

    Never prompts: every question is answered from the arguments or its default.
    An existing skill folder is never overwritten.
    """
    import copier  # imported here: only this command needs it, and it is slow to import

    if not NAME_PATTERN.match(name):
        raise UsageError(
            f"skill name {name!r} must be lowercase words of letters and digits joined by hyphens",
            code="U010",
        )
    if type not in AGENT_TYPES:
        raise UsageError(
            f"unknown agent type {type!r}; expected one of {', '.join(AGENT_TYPES)}", code="U011"
        )
    if description is not None and (
        not description.strip() or "\n" in description or "\r" in description
    ):
        raise UsageError("the description must be one non-empty line", code="U012")
    folder = Path(dest) / name
    if folder.exists():
        raise ScaffoldError(f"{folder.as_posix()} already exists; choose another name or remove it")
    data = {"name": name, "type": type, "shape": record_of(type).scaffold}
    if description is not None:
        data["description"] = description
    copier.run_copy(
        str(SKILL_TEMPLATE),
        str(dest),
        data=data,
        defaults=True,
        overwrite=False,
        quiet=True,
        unsafe=False,
    )
    return folder / "SKILL.md"
