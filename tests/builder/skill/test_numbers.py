"""Numbers in front matter are finite and bounded: phase 1 refuses the rest, located, exit 1."""

from __future__ import annotations

import pytest

from builder.phases.skill_analysis import NUMBER_LIMIT, analyse
from builder.pipeline.contract import SkillSource
from builder.pipeline.errors import SkillError
from builder.skill.source import source_digest

PATH = "skills/bad/SKILL.md"
HEAD = "---\nname: Sample\ndescription: Does one thing.\n"


def refused(front: str) -> SkillError:
    raw = (HEAD + front + "---\n").encode("utf-8")
    with pytest.raises(SkillError) as caught:
        analyse(SkillSource(path=PATH, data=raw, files=(), digest=source_digest(raw, ())))
    return caught.value


@pytest.mark.parametrize(
    ("front", "line", "shown"),
    [
        ("chains_to:\n  - framework: other\n    weight: .nan\n", 6, "nan"),
        ("chains_to:\n  - framework: other\n    weight: .inf\n", 6, "inf"),
        ("handoff:\n  min_clarity: -.inf\n", 5, "-inf"),
        ("scores:\n  dimensions:\n    - name: depth\n      max: 1e309\n", 7, "inf"),
        (f"scores:\n  dimensions:\n    - name: depth\n      max: {10**400}\n", 7, "401-digit"),
        ("metadata:\n  anything: [1, .nan]\n", 5, "nan"),
    ],
)
def test_non_finite_or_huge_numbers_are_refused_where_they_are(
    front: str, line: int, shown: str
) -> None:
    error = refused(front)
    assert error.code == "S211"
    assert error.location is not None and (error.location.path, error.location.line) == (
        PATH,
        line,
    )
    assert shown in error.message and "finite number" in error.message


@pytest.mark.parametrize(
    ("front", "words"),
    [
        ("debate_rounds: 100000000\n", ("debate_rounds", "above the maximum 20")),
        ("debate_rounds: 0\n", ("debate_rounds", "below the minimum 1")),
        ("chains_to:\n  - framework: other\n    weight: 2\n", ("weight", "above the maximum 1")),
        (
            "scores:\n  dimensions:\n    - name: depth\n      max: 1e7\n",
            ("max", "above the maximum 1000000"),
        ),
    ],
)
def test_numbers_have_schema_bounds(front: str, words: tuple[str, ...]) -> None:
    error = refused(front)
    assert error.code == "S202"
    assert all(w in error.message for w in words), error.message


def test_the_limit_itself_is_accepted() -> None:
    raw = (HEAD + f"version: {NUMBER_LIMIT}\n---\n").encode("utf-8")
    result = analyse(SkillSource(path=PATH, data=raw, files=(), digest=source_digest(raw, ())))
    assert all(c.passed for c in result.checks)
