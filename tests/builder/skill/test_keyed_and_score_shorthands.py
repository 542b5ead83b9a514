"""Shorthands of issue 27 (item 4): an ``id`` beside a ``name`` is a key and a title, and
``scores`` written as a list of names is scores with the default range."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from builder.phases.skill_analysis import analyse
from builder.pipeline.contract import SkillSource
from builder.pipeline.errors import SkillError
from builder.schemas.reference import editor_schema
from builder.skill.fmt import format_skill
from builder.skill.frontmatter import parse_front_matter
from builder.skill.model import ScoreDimension, StepSpec, SubAgentSpec

KEYED = """\
---
name: keyed
description: A staged method with keyed phases and named scores.
metadata:
  mindrian:
    type: pipeline
    scores: [clarity, complexity]
    phases:
      - id: decompose
        name: Decompose the problem
        instructions: Split it into parts.
      - id: abstract
        title: Abstract
        description: Lift each part.
---
Body.
"""

TEAM = """\
---
name: team
description: Two views.
type: collaborative
sub_agents:
  - id: buyer
    name: The Buyer
    instructions: Judge as a customer.
  - id: seller
    name: The Seller
    instructions: Judge the margin.
scores:
  - name: fit
    min: 0
    max: 10
  - depth
---
Body.
"""


def _definition(text: str):  # type: ignore[no-untyped-def]
    return analyse(SkillSource("x/SKILL.md", text.encode())).output


def test_an_id_beside_a_name_is_the_key_and_the_name_the_title() -> None:
    definition = _definition(KEYED)
    assert definition.steps == (
        StepSpec("Decompose the problem", "Split it into parts.", False, 9),
        StepSpec("Abstract", "Lift each part.", False, 12),
    )
    assert (
        "metadata.mindrian.phases.0.id (line 9) 'decompose' is the item's key and its name "
        "'Decompose the problem' its title: later phases use the title" in definition.decisions
    )
    assert definition.field_lines["metadata.mindrian.phases.0.name"] == 10


def test_sub_agents_take_a_key_too() -> None:
    definition = _definition(TEAM)
    assert definition.sub_agents == (
        SubAgentSpec("The Buyer", "Judge as a customer.", 6),
        SubAgentSpec("The Seller", "Judge the margin.", 9),
    )


def test_scores_as_a_list_of_names_have_the_default_range() -> None:
    definition = _definition(KEYED)
    assert definition.scores == (ScoreDimension("clarity"), ScoreDimension("complexity"))
    assert (
        "metadata.mindrian.scores (line 7) is a list, read as metadata.mindrian.scores.dimensions; "
        "a bare name is a score with the default range, 0 to 1" in definition.decisions
    )
    assert definition.field_lines["metadata.mindrian.scores"] == 7


def test_a_list_of_scores_may_mix_names_and_ranges() -> None:
    assert _definition(TEAM).scores == (ScoreDimension("fit", 0.0, 10.0), ScoreDimension("depth"))


def test_two_names_beside_an_id_still_conflict() -> None:
    title = "        title: Abstract\n"
    text = KEYED.replace(title, f"{title}        name: Lift\n")
    with pytest.raises(SkillError) as caught:
        _definition(text)
    assert caught.value.code == "S205" and caught.value.location is not None
    assert caught.value.location.line == 14


def test_a_duplicate_score_name_is_still_refused() -> None:
    with pytest.raises(SkillError) as caught:
        _definition(KEYED.replace("[clarity, complexity]", "[clarity, clarity]"))
    assert caught.value.code == "S207"


@pytest.mark.parametrize("text", [KEYED, TEAM])
def test_fmt_keeps_the_key_writes_dimensions_and_reads_the_same(text: str) -> None:
    formatted, _ = format_skill(text)
    assert "id: decompose" in formatted or "id: buyer" in formatted
    assert "dimensions:" in formatted
    before, after = _definition(text), _definition(formatted)
    assert after.scores == before.scores
    assert [(s.name, s.instructions) for s in after.steps] == [
        (s.name, s.instructions) for s in before.steps
    ]
    assert [(a.name, a.instructions) for a in after.sub_agents] == [
        (a.name, a.instructions) for a in before.sub_agents
    ]
    assert format_skill(formatted)[0] == formatted


def test_the_editor_schema_accepts_both_shorthands() -> None:
    validator = Draft202012Validator(editor_schema())
    for text in (KEYED, TEAM):
        data = parse_front_matter(text, "SKILL.md").data
        assert list(validator.iter_errors(data)) == []
