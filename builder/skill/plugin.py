"""A plugin root: a folder of skills, subagents and chains, built as a whole.

A Claude Code plugin keeps ``.claude-plugin/plugin.json`` at its root beside
``skills/<name>/SKILL.md``, ``agents/<name>.md`` (one subagent each: front matter
``name``, ``description``, ``model``, ``allowed-tools``) and, in the Mindrian
author's plugin, ``pipelines/<name>/CHAIN.md`` chains (:mod:`builder.skill.chain`).
``mindrian build ROOT`` builds every one of them. A file of ``agents/`` written
without front matter is read as the subagent it describes
(:mod:`builder.skill.subagent`, warning W120).
"""

from __future__ import annotations

from pathlib import Path

from builder.skill.chain import CHAIN_FILE

__all__ = [
    "PLUGIN_MANIFEST",
    "PLUGIN_PARTS",
    "is_plugin_root",
    "plugin_contents",
]

#: The manifest that marks a Claude Code plugin's root.
PLUGIN_MANIFEST = ".claude-plugin/plugin.json"
#: The folders of a plugin that hold what mindrian builds.
PLUGIN_PARTS: tuple[str, ...] = ("skills", "agents", "pipelines")


def is_plugin_root(path: Path) -> bool:
    """Whether ``path`` is a folder to build as a plugin, not as one skill or chain."""
    if not path.is_dir() or (path / "SKILL.md").is_file() or (path / CHAIN_FILE).is_file():
        return False
    return (path / PLUGIN_MANIFEST).is_file() or any((path / p).is_dir() for p in PLUGIN_PARTS)


def plugin_contents(root: Path) -> tuple[Path, ...]:
    """Every skill, subagent and chain under the plugin ``root``: skills, then subagents, then
    chains, each sorted by path."""
    skills = sorted((root / "skills").glob("**/SKILL.md"))
    agents = sorted((root / "agents").glob("*.md"))
    chains = sorted((root / "pipelines").glob(f"*/{CHAIN_FILE}"))
    return (*skills, *agents, *chains)
