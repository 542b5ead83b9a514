"""A plugin root: a folder of skills, subagents and chains, built as a whole.

A Claude Code plugin keeps ``.claude-plugin/plugin.json`` at its root beside
``skills/<name>/SKILL.md``, ``agents/<name>.md`` (one subagent each: front matter
``name``, ``description``, ``model``, ``allowed-tools``) and, in the Mindrian
author's plugin, ``pipelines/<name>/CHAIN.md`` chains (:mod:`builder.skill.chain`).
``mindrian build ROOT`` builds every one of them. A file of ``agents/`` without
front matter is a note, not a subagent (Claude Code loads a subagent only from
its front matter): it is left out with warning W120 rather than failing the build.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from builder.skill.chain import CHAIN_FILE

__all__ = [
    "NOT_A_SUBAGENT",
    "PLUGIN_MANIFEST",
    "PLUGIN_PARTS",
    "PluginContents",
    "is_plugin_root",
    "plugin_contents",
]

#: The manifest that marks a Claude Code plugin's root.
PLUGIN_MANIFEST = ".claude-plugin/plugin.json"
#: The folders of a plugin that hold what mindrian builds.
PLUGIN_PARTS: tuple[str, ...] = ("skills", "agents", "pipelines")
#: The warning code of an ``agents/*.md`` left out for having no front matter.
NOT_A_SUBAGENT = "W120"


@dataclass(frozen=True)
class PluginContents:
    """What a plugin root holds to build, and what it leaves out."""

    files: tuple[Path, ...]
    """The files to build: skills, then subagents, then chains, each sorted by path."""
    skipped: tuple[tuple[Path, str], ...]
    """Files of ``agents/`` that are not built, each with the reason, sorted by path."""


def is_plugin_root(path: Path) -> bool:
    """Whether ``path`` is a folder to build as a plugin, not as one skill or chain."""
    if not path.is_dir() or (path / "SKILL.md").is_file() or (path / CHAIN_FILE).is_file():
        return False
    return (path / PLUGIN_MANIFEST).is_file() or any((path / p).is_dir() for p in PLUGIN_PARTS)


def _has_front_matter(file: Path) -> bool:
    with file.open("rb") as handle:
        first = handle.readline()
    return first.removeprefix(b"\xef\xbb\xbf").rstrip() == b"---"


def plugin_contents(root: Path) -> PluginContents:
    """Every skill, subagent and chain under the plugin ``root``."""
    skills = sorted((root / "skills").glob("**/SKILL.md"))
    agents, skipped = [], []
    for file in sorted((root / "agents").glob("*.md")):
        if _has_front_matter(file):
            agents.append(file)
        else:
            skipped.append(
                (
                    file,
                    "not built: it has no front matter, so it is no subagent (a subagent names "
                    "itself in front matter: '---', name, description, '---'); add it to build "
                    "the file",
                )
            )
    chains = sorted((root / "pipelines").glob(f"*/{CHAIN_FILE}"))
    return PluginContents(files=(*skills, *agents, *chains), skipped=tuple(skipped))
