"""What a command works on: the skill files a command line names, and how their progress shows."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from builder.pipeline.errors import UsageError
from builder.pipeline.paths import refuse_outside_link
from mindrian.project import find_project_root

if TYPE_CHECKING:
    from builder.cli.progress import ProgressBar
    from builder.orchestration.batch import Discovery

__all__ = [
    "no_skills_note",
    "progress_bar",
    "project_of",
    "project_skills",
    "skill_file",
    "targets",
]


#: The warning of a link under skills/ to a folder outside the project (builder.pipeline.codes).
_OUTSIDE_LINK = "W126"


def targets(
    paths: list[Path] | None, all_skills: bool, root: Path, warn: Callable[[str], None]
) -> tuple[list[Path], tuple[str, ...]]:
    """The skill files to build: every skill of the project (``--all``; none in a project that
    has no skill yet) or those ``paths`` name (a plugin root stands for its contents); and the
    links under skills/ that ``--all`` did not follow (:func:`project_skills`)."""
    if all_skills and paths:
        raise UsageError("give SKILL.md paths or --all, not both", code="U004")
    if all_skills:
        found = project_skills(root, warn)
        return list(found.skills), found.outside
    if not paths:
        raise UsageError("give at least one SKILL.md path, or --all", code="U005")
    return [file for p in paths for file in _expanded(p, root)], ()


def project_skills(root: Path, warn: Callable[[str], None]) -> Discovery:
    """Every skill of the project at ``root`` (a U045 error when it is none); ``warn`` is told
    of each link under skills/ to a folder outside the project, which is not built."""
    from builder.orchestration.batch import discover_skills

    found = discover_skills(project_of(root))
    for name in found.outside:
        warn(
            f"{name}: warning[{_OUTSIDE_LINK}]: links to a folder outside the project, so its "
            "skill is not built (and no package is retired for it); move the skill into the "
            "project or link to a folder inside it"
        )
    return found


def project_of(root: Path) -> Path:
    """``root`` when it is a mindrian project; a usage error (U045) naming it otherwise."""
    if find_project_root(root) is None and not _for_config_to_report(root / "pyproject.toml"):
        raise UsageError(
            f"{root.as_posix()} is not a mindrian project (no pyproject.toml with "
            "[tool.mindrian] in it or above it); run mindrian init to make one",
            code="U045",
        )
    return root


def _for_config_to_report(pyproject: Path) -> bool:
    """Whether ``pyproject`` is there but unreadable or its ``tool`` no table: reading the
    project's configuration reports that (U042), located, rather than "not a project"."""
    import tomllib  # not for every command line: mindrian --help reads no configuration

    if not pyproject.is_file():
        return False
    try:
        table = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True
    return "tool" in table and not isinstance(table["tool"], dict)


def no_skills_note(root: Path) -> str:
    """What ``--all`` and ``check`` say in a project without a skill yet (they pass)."""
    return (
        f"note: no skills/**/SKILL.md under {root.as_posix()} yet, nothing to build "
        "(mindrian new NAME makes one)"
    )


def skill_file(path: Path) -> Path:
    """The SKILL.md (or CHAIN.md) a path names: the file itself, or the one in its folder."""
    from builder.skill.chain_layout import skill_file as found

    return found(path)


def _expanded(path: Path, root: Path) -> list[Path]:
    """The files to build for one path: a plugin root's contents, else its skill or chain file."""
    from builder.skill.plugin import PLUGIN_PARTS, is_plugin_root, plugin_contents

    refuse_outside_link(path, root)
    if not is_plugin_root(path):
        return [skill_file(path)]
    contents = plugin_contents(path)
    if not contents:
        parts = ", ".join(f"{p}/" for p in PLUGIN_PARTS)
        where = f"the plugin {path.as_posix()!r}"
        raise UsageError(f"{where} has nothing to build in {parts}", code="U007")
    return list(contents)


def progress_bar(count: int, *, quiet: bool, machine: bool) -> ProgressBar | None:
    """A progress bar for several skills when stderr is a terminal; None for line output.

    ``quiet`` (``--quiet``, ``--timings``) and ``machine`` (``--json``, ``--frames``)
    ask for lines, as does a single skill, whose phase lines say as much.
    """
    if count < 2 or quiet or machine or not sys.stderr.isatty():
        return None
    from builder.cli.progress import ProgressBar

    return ProgressBar(count, sys.stderr)
