"""Synthesize a project of many distinct skills from the conformance corpus (``make bench-scale``).

Skill ``k`` of a project of ``n`` is corpus skill ``k mod C`` (the corpus's
SKILL.md files in sorted order) under a new name, ``<name>-<k>``, with triggers
and a problem type of its own, so every skill has a distinct agent id, package
and selection key. The corpus text is read from its folder at run time and
written only into the temporary project, never into this repository. Explicit
Mindrian fields (``type``, ``triggers``, ``problem_types``) are set so each
skill builds whether or not phase 1 can infer them; the body and the skill
folder's other text files are kept as they are. Everything is a function of
``n``, the corpus and an optional salt, so two runs with the same salt (none by
default) synthesize byte-identical projects; a salt of its own gives a run
skills no earlier run had, so no cache keyed on a skill's text (Black's, the
linter's) has seen them.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench.common import CORPUS

__all__ = ["CorpusSkill", "corpus_skills", "synthesize", "touch_skill"]


_FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n?(.*)\Z", re.DOTALL)
_NAME = re.compile(r"[^a-z0-9]+")
#: Mindrian fields a corpus skill may carry that would tie variants together (routing, chains).
_DROPPED = ("triggers", "problem_types", "chains_to", "chaining", "handoff", "sub_agents")
_PYPROJECT = """\
[project]
name = "bench-scale"
version = "0"

[tool.mindrian]
"""


@dataclass(frozen=True)
class CorpusSkill:
    """One SKILL.md of the corpus, split for rewriting."""

    folder: Path
    """The skill's folder in the corpus."""
    front: dict[str, object]
    """Its front matter."""
    body: str
    """Everything after the front matter."""


def corpus_skills(corpus: Path = CORPUS) -> tuple[CorpusSkill, ...]:
    """The corpus skills whose front matter is a YAML mapping, sorted by path."""
    found = []
    for path in sorted(corpus.rglob("SKILL.md"), key=lambda p: p.relative_to(corpus).as_posix()):
        match = _FRONT.match(path.read_text(encoding="utf-8"))
        if match is None:
            continue
        try:
            front = yaml.safe_load(match.group(1))
        except yaml.YAMLError:
            continue
        if isinstance(front, dict):
            found.append(CorpusSkill(path.parent, front, match.group(2)))
    return tuple(found)


def _slug(text: object) -> str:
    return _NAME.sub("-", str(text).lower()).strip("-")[:40] or "skill"


def _variant(skill: CorpusSkill, k: int, salt: str = "") -> str:
    """SKILL.md text of variant ``k``: a unique name, triggers and problem type (with ``salt``
    in the name and triggers)."""
    base = _slug(skill.front.get("name") or skill.folder.name)
    front = {key: value for key, value in skill.front.items() if key not in _DROPPED}
    metadata = front.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("mindrian"), dict):
        mindrian = {k2: v for k2, v in metadata["mindrian"].items() if k2 not in _DROPPED}
        front["metadata"] = {**metadata, "mindrian": mindrian}
    tag = f"{k:04d}-{_slug(salt)}" if salt else f"{k:04d}"
    front["name"] = f"{base}-{tag}"
    front.setdefault("type", "operator")
    front["triggers"] = [f"{base} {tag}", f"scale-{tag}"]
    front["problem_types"] = [f"scale-problem-{k % 97:02d}"]
    head = yaml.safe_dump(front, sort_keys=True, allow_unicode=True, width=100)
    return f"---\n{head}---\n{skill.body}"


def _extra_files(folder: Path) -> Iterator[Path]:
    """Text files of a skill folder besides SKILL.md (references, scripts), sorted."""
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != "SKILL.md" and not path.name.startswith("."):
            yield path


def synthesize(
    project: Path, count: int, corpus: Path = CORPUS, salt: str = ""
) -> tuple[Path, ...]:
    """Write a project with ``count`` skills under ``project``; their SKILL.md paths, sorted.
    ``salt`` (letters, digits, ``-``) goes into every skill's name and triggers."""
    skills = corpus_skills(corpus)
    if not skills:
        raise FileNotFoundError(f"no SKILL.md under {corpus}")
    project.mkdir(parents=True, exist_ok=True)
    (project / "pyproject.toml").write_text(_PYPROJECT, encoding="utf-8")
    written = []
    for k in range(count):
        skill = skills[k % len(skills)]
        folder = project / "skills" / f"s{k:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        for extra in _extra_files(skill.folder):
            target = folder / extra.relative_to(skill.folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(extra, target)
        path = folder / "SKILL.md"
        path.write_text(_variant(skill, k, salt), encoding="utf-8")
        written.append(path)
    return tuple(written)


def touch_skill(path: Path, stamp: str) -> None:
    """Change one skill's description (a real edit: its digest and package change)."""
    match = _FRONT.match(path.read_text(encoding="utf-8"))
    if match is None:
        raise ValueError(f"{path} has no front matter")
    front = yaml.safe_load(match.group(1))
    front["description"] = f"({stamp}) {front.get('description', '')}"
    head = yaml.safe_dump(front, sort_keys=True, allow_unicode=True, width=100)
    path.write_text(f"---\n{head}---\n{match.group(2)}", encoding="utf-8")
