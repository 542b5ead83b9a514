"""What a command works on: the skill files a command line names, and how their progress shows."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from builder.pipeline.errors import UsageError

if TYPE_CHECKING:
    from builder.cli.progress import ProgressBar

__all__ = ["progress_bar", "skill_file", "targets"]


def targets(paths: list[Path] | None, all_skills: bool, root: Path) -> list[Path]:
    """The skill files to build: every skill of the project (``--all``) or those ``paths``
    name (a plugin root stands for its contents)."""
    if all_skills and paths:
        raise UsageError("give SKILL.md paths or --all, not both", code="U004")
    if all_skills:
        from builder.orchestration.batch import discover

        found = list(discover(root))
        if not found:
            raise UsageError(f"no skills/**/SKILL.md under {root}", code="U007")
        return found
    if not paths:
        raise UsageError("give at least one SKILL.md path, or --all", code="U005")
    return [file for p in paths for file in _expanded(p)]


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
