"""A plugin root given to ``mindrian build`` (issue 27, item 5): every skill, every
``agents/*.md`` subagent and every chain in it; an ``agents/*.md`` without front matter is read
as the subagent it describes, with warning W120.

The plugin is synthetic, in the shape of the Mindrian author's plugin:
``.claude-plugin/plugin.json``, ``skills/<name>/SKILL.md``, ``agents/<name>.md`` (``name``,
``description``, ``model: inherit``, ``allowed-tools``) and ``pipelines/<name>/`` chains.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from build_factories import make_project, skill_text

from builder.skill.plugin import is_plugin_root, plugin_contents

RELAY = Path(__file__).resolve().parents[1] / "fixtures" / "skills" / "chains" / "relay"

SUBAGENT = """---
name: reviewer
description: |
  Reviewer Agent -- reads a proposal and lists its weakest claims, each with the reason.
model: inherit
allowed-tools: Read, Grep
---

# Reviewer

List the three weakest claims of the proposal and why each is weak.
"""
NOTE = "# Scanner Agent\n\n> Scans on demand only.\n\n## Flow\n\n1. Read the room.\n"


def make_plugin(root: Path) -> Path:
    """A plugin with one skill, two agents files (one a note) and one chain."""
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "demo-plugin", "version": "1.0.0"}), encoding="utf-8"
    )
    (root / "skills" / "checker").mkdir(parents=True)
    (root / "skills" / "checker" / "SKILL.md").write_text(skill_text("checker"), encoding="utf-8")
    (root / "agents").mkdir()
    (root / "agents" / "reviewer.md").write_text(SUBAGENT, encoding="utf-8")
    (root / "agents" / "scanner.md").write_text(NOTE, encoding="utf-8")
    shutil.copytree(RELAY, root / "pipelines" / "relay")
    return root


def test_a_plugin_root_lists_skills_then_agents_then_chains(tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path / "plugin")
    assert is_plugin_root(plugin)
    assert [f.relative_to(plugin).as_posix() for f in plugin_contents(plugin)] == [
        "skills/checker/SKILL.md",
        "agents/reviewer.md",
        "agents/scanner.md",
        "pipelines/relay/CHAIN.md",
    ]


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda p: (p / "agents").mkdir(), True),  # a folder with a plugin part, no manifest
        (lambda p: (p / "SKILL.md").write_text("x", encoding="utf-8"), False),
        (lambda p: (p / "CHAIN.md").write_text("x", encoding="utf-8"), False),
        (lambda p: (p / "notes").mkdir(), False),
    ],
)
def test_what_is_a_plugin_root(
    tmp_path: Path, make: Callable[[Path], object], expected: bool
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    make(folder)
    assert is_plugin_root(folder) is expected


@pytest.mark.slow
def test_build_of_a_plugin_root_builds_all_of_it(cli, tmp_path: Path) -> None:
    project = make_project(tmp_path, {})
    make_plugin(project / "plugin")
    result = cli(["build", "plugin", "--jobs", "1"], project)
    assert result.code == 0, result.err
    implied = "plugin/agents/scanner.md:3:1: warning[W120]: no front matter: read as the subagent"
    assert implied in result.err
    built = sorted(p.name for p in (project / "generated").iterdir() if p.is_dir())
    assert built == ["checker", "relay", "reviewer", "scanner"]
    spec = (project / "generated" / "scanner" / "spec.yaml").read_text(encoding="utf-8")
    assert "\nname: Scanner Agent\ndescription: Scans on demand only.\n" in spec


def test_an_empty_plugin_root_is_a_usage_error(cli, tmp_path: Path) -> None:
    project = make_project(tmp_path, {})
    (project / "plugin" / "agents").mkdir(parents=True)
    result = cli(["build", "plugin"], project)
    assert result.code == 2
    assert "error[U007]: the plugin 'plugin' has nothing to build in skills/, agents/" in result.err
