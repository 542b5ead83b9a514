"""What a command works on: the skill files a command line names, and how their progress shows."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from builder.pipeline.errors import UsageError
from mindrian.project import find_project_root

if TYPE_CHECKING:
    from builder.cli.progress import ProgressBar

__all__ = ["no_skills_note", "progress_bar", "project_of", "skill_file", "targets"]


def targets(paths: list[Path] | None, all_skills: bool, root: Path) -> list[Path]:
    """The skill files to build: every skill of the project (``--all``; none in a project that
    has no skill yet) or those ``paths`` name (a plugin root stands for its contents)."""
    if all_skills and paths:
        raise UsageError("give SKILL.md paths or --all, not both", code="U004")
    if all_skills:
        from builder.orchestration.batch import discover

        return list(discover(project_of(root)))
    if not paths:
        raise UsageError("give at least one SKILL.md path, or --all", code="U005")
    return [file for p in paths for file in _expanded(p)]


def project_of(root: Path) -> Path:
    """``root`` when it is a mindrian project; a usage error (U045) naming it otherwise."""
    if find_project_root(root) is None:
        raise UsageError(
            f"{root.as_posix()} is not a mindrian project (no pyproject.toml with "
            "[tool.mindrian] in it or above it); run mindrian init to make one",
            code="U045",
        )
    return root


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


def _expanded(path: Path) -> list[Path]:
    """The files to build for one path: a plugin root's contents, else its skill or chain file."""
    from builder.skill.plugin import PLUGIN_PARTS, is_plugin_root, plugin_contents

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
