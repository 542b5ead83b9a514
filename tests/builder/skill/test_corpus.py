"""Conformance: every real SKILL.md of the shared corpus goes through phase 1 without losing text.

The corpus lives next to the repository (``<repo>/../shared/corpus``); it is read
in place, never copied. Without it the tests skip and say why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.phases.skill_analysis import analyse
from builder.pipeline.serial import dump_yaml, to_plain
from builder.skill.model import SkillDefinition
from builder.skill.source import load_source

REPO = Path(__file__).resolve().parents[3]
CORPUS = (REPO.parent / "shared" / "corpus").resolve()
EXPECTED_SKILLS = 49

SKILLS = sorted(CORPUS.rglob("SKILL.md")) if CORPUS.is_dir() else []
needs_corpus = pytest.mark.skipif(not SKILLS, reason=f"corpus not found at {CORPUS}")


def analysed(path: Path) -> SkillDefinition:
    result = analyse(load_source(path, path.relative_to(CORPUS).as_posix()))
    assert all(check.passed for check in result.checks)
    return result.output


def body_lines_of(path: Path) -> list[str]:
    """The file's lines after the closing front-matter delimiter, found independently of phase 1."""
    lines = path.read_text(encoding="utf-8-sig").split("\n")
    close = next(i for i in range(1, len(lines)) if lines[i].rstrip() == "---")
    return lines[close + 1 :]


@needs_corpus
def test_corpus_has_the_expected_skills() -> None:
    assert len(SKILLS) == EXPECTED_SKILLS


@needs_corpus
@pytest.mark.parametrize(
    "path",
    SKILLS or [None],
    ids=[p.relative_to(CORPUS).as_posix() for p in SKILLS] or ["no-corpus"],
)
def test_corpus_skill_parses_without_losing_text(path: Path) -> None:
    definition = analysed(path)
    assert definition.id and definition.identifier.isidentifier()
    assert definition.description.strip()
    body = definition.body.split("\n")
    body_set = set(body)
    missing = [line for line in body_lines_of(path) if line.strip() and line not in body_set]
    assert missing == []
    for section in definition.sections:
        heading_line = body[section.line - definition.body_line]
        assert heading_line.lstrip().startswith("#") and section.heading in heading_line
        assert section.text in definition.body
    for step in definition.steps:
        assert step.name in body[step.line - definition.body_line]


@needs_corpus
def test_corpus_output_is_deterministic() -> None:
    # One folder with scripts and references is enough to show two runs match byte for byte.
    folder = max(SKILLS, key=lambda p: len(list(p.parent.rglob("*")))).parent
    assert dump_yaml(to_plain(analysed(folder / "SKILL.md"))) == dump_yaml(
        to_plain(analysed(folder / "SKILL.md"))
    )
