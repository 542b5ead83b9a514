"""Shorthands (``title`` for ``name``, one text for a one-item list): phase 1 reads them as the
canonical form and says where each came from; ``mindrian fmt`` writes the canonical form."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from builder.codegen.prompt_items import prompt_items
from builder.phases.skill_analysis import analyse
from builder.pipeline.contract import SkillSource
from builder.pipeline.errors import SkillError
from builder.pipeline.serial import to_plain
from builder.schemas.reference import editor_schema
from builder.skill.fmt import FormatError, format_skill
from builder.skill.frontmatter import parse_front_matter
from builder.skill.model import SkillDefinition, StepSpec, SubAgentSpec
from builder.skill.shorthands import Shorthand, ShorthandConflict, find_shorthands

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus"

SHORTHAND = """\
---
name: pricing-review
description: Reviews a price list from several angles. Use when a price list changes.
metadata:
  mindrian:
    type: collaborative
    chains_to: devil-advocate
    behavioral_rules: Never invent a price.
    inputs:
      - title: prices
        description: The list, one item per line
    mcp_tools:
      - server: neo4j
        tools: read_neo4j_cypher
    handoff:
      can_be_called_by: larry
    sub_agents:
      - title: Buyer  # the customer's side
        role: Judges the price as a customer would.
      - id: Seller
        name: Seller
        prompt: Judges the margin.
---
Body.
"""

CANONICAL = """\
---
name: pricing-review
description: Reviews a price list from several angles. Use when a price list changes.
metadata:
  mindrian:
    type: collaborative
    chains_to: [devil-advocate]
    behavioral_rules: [Never invent a price.]
    inputs:
      - name: prices
        description: The list, one item per line
    mcp_tools:
      - server: neo4j
        tools: [read_neo4j_cypher]
    handoff:
      can_be_called_by: [larry]
    sub_agents:
      - name: Buyer  # the customer's side
        instructions: Judges the price as a customer would.
      - name: Seller
        # (one line fewer than the id that repeats the name: same line numbers below)
        instructions: Judges the margin.
---
Body.
"""


def analysed(text: str) -> SkillDefinition:
    return analyse(SkillSource("skills/pricing-review/SKILL.md", text.encode())).output


def refused(text: str) -> SkillError:
    with pytest.raises(SkillError) as caught:
        analysed(text)
    return caught.value


def step_skill(step: str) -> str:
    """A pipeline skill whose one step is written as ``step`` (mapping lines, 4-space indent)."""
    return (
        "---\nname: s\ndescription: d\nmetadata:\n  mindrian:\n    type: pipeline\n"
        f"    phases:\n      - {step}\n---\nBody.\n"
    )


def without_provenance(definition: SkillDefinition) -> dict[str, Any]:
    plain: dict[str, Any] = to_plain(definition)
    for key in ("decisions", "field_lines", "source_digest"):
        plain.pop(key)
    return plain


def unlocated(plain: Any) -> Any:
    """``plain`` without line numbers."""
    if isinstance(plain, dict):
        return {k: unlocated(v) for k, v in plain.items() if k not in ("line", "body_line")}
    if isinstance(plain, list):
        return [unlocated(v) for v in plain]
    return plain


# --- phase 1 ---------------------------------------------------------------------------------


def test_a_skill_with_shorthands_is_the_skill_written_canonically() -> None:
    short, canonical = analysed(SHORTHAND), analysed(CANONICAL)
    assert without_provenance(short) == without_provenance(canonical)
    assert short.sub_agents == (
        SubAgentSpec("Buyer", "Judges the price as a customer would.", 18),
        SubAgentSpec("Seller", "Judges the margin.", 20),
    )
    assert [c.target for c in short.chains_to] == ["devil-advocate"]
    assert short.behavioral_rules == ("Never invent a price.",)
    assert short.mcp_servers[0].tools == ("read_neo4j_cypher",)
    assert short.handoff is not None and short.handoff.can_be_called_by == ("larry",)
    # An input's own ``description`` is its description, not a synonym of anything.
    assert short.inputs[0].description == "The list, one item per line"


def test_each_shorthand_is_a_decision_naming_its_line() -> None:
    decisions = [d for d in analysed(SHORTHAND).decisions if not d.startswith("triggers")]
    prefix = "metadata.mindrian."
    assert decisions == [
        f"{prefix}chains_to (line 7) is one text, read as a one-item list",
        f"{prefix}behavioral_rules (line 8) is one text, read as a one-item list",
        f"{prefix}mcp_tools.0.tools (line 14) is one text, read as a one-item list",
        f"{prefix}handoff.can_be_called_by (line 16) is one text, read as a one-item list",
        f"{prefix}inputs.0.title (line 10) is read as {prefix}inputs.0.name",
        f"{prefix}sub_agents.0.title (line 18) is read as {prefix}sub_agents.0.name",
        f"{prefix}sub_agents.0.role (line 19) is read as {prefix}sub_agents.0.instructions",
        f"{prefix}sub_agents.1.id (line 20) repeats {prefix}sub_agents.1.name's value and is "
        "dropped",
        f"{prefix}sub_agents.1.prompt (line 22) is read as {prefix}sub_agents.1.instructions",
    ]
    assert not [d for d in analysed(CANONICAL).decisions if not d.startswith("triggers")]


def test_canonical_keys_keep_the_line_of_the_shorthand() -> None:
    lines = analysed(SHORTHAND).field_lines
    prefix = "metadata.mindrian."
    assert lines[f"{prefix}sub_agents.0.name"] == 18
    assert lines[f"{prefix}sub_agents.0.instructions"] == 19
    assert lines[f"{prefix}chains_to.0"] == 7
    assert f"{prefix}sub_agents.0.title" not in lines
    assert f"{prefix}sub_agents.1.id" not in lines


def test_a_schema_error_after_a_rewrite_points_at_the_line_as_written() -> None:
    error = refused(step_skill("title: Discover\n        waits_for_user: often"))
    assert error.code == "S202" and error.location is not None
    assert error.location.line == 9 and "phases.0.waits_for_user" in str(error)
    # A synonym does not make a missing required key appear: the sub-agent still needs
    # its instructions.
    text = SHORTHAND.replace("        prompt: Judges the margin.\n", "")
    error = refused(text)
    assert error.code == "S201" and "instructions" in str(error)


@pytest.mark.parametrize(
    ("step", "second_line"),
    [
        ("name: Discover\n        title: Explore", 9),
        # An id beside a different name is a key (see test_keyed_and_score_shorthands.py);
        # a title and a name that differ beside it are still two names.
        ("id: explore\n        name: Discover\n        title: Explore", 10),
        ("name: Discover\n        instructions: Look.\n        prompt: Search.", 10),
    ],
)
def test_two_spellings_with_different_values_are_error_s205(step: str, second_line: int) -> None:
    error = refused(step_skill(step))
    assert error.code == "S205" and error.location is not None
    assert error.location.line == second_line
    assert "give different values; keep one" in str(error) and "(line" in str(error)


def test_two_spellings_with_the_same_value_are_one() -> None:
    step = analysed(step_skill("name: Discover\n        title: Discover")).steps
    assert step == (StepSpec("Discover", "", False, 8),)


def test_shorthands_at_the_top_level_are_read_too() -> None:
    text = "---\nname: s\ndescription: d\ntype: pipeline\nphases: Discover\n---\nBody.\n"
    definition = analysed(text)
    assert definition.steps == (StepSpec("Discover", "", False, 5),)
    assert "phases (line 5) is one text, read as a one-item list" in definition.decisions


def test_a_text_where_no_list_is_expected_is_still_an_error() -> None:
    # ``sub_agents`` items need instructions: one text is not a sub-agent, so no shorthand.
    text = step_skill("Discover").replace("phases:\n      - Discover", "sub_agents: Buyer")
    assert refused(text).code == "S202"


def test_find_shorthands_leaves_foreign_metadata_alone() -> None:
    data = {"name": "s", "metadata": {"phases": "x", "steps": [{"title": "a"}]}}
    assert find_shorthands(data) == ()
    # Only phases and sub_agents items take an id as a key beside a different name.
    with pytest.raises(ShorthandConflict) as caught:
        find_shorthands({"inputs": [{"id": "a", "title": "b"}]})
    assert (caught.value.written, caught.value.other) == (
        ("inputs", 0, "title"),
        ("inputs", 0, "id"),
    )
    assert find_shorthands({"phases": [{"id": "a", "title": "a"}]}) == (
        Shorthand(("phases", 0, "id"), ("phases", 0, "name")),
        Shorthand(("phases", 0, "title"), ("phases", 0, "name"), redundant=True),
    )


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside the repository")
def test_no_corpus_skill_uses_a_shorthand() -> None:
    # The corpus has no Mindrian fields, so the rewrite must leave every one of them alone.
    skills = sorted(CORPUS.rglob("SKILL.md"))
    assert len(skills) == 49
    for path in skills:
        front = parse_front_matter(path.read_text(encoding="utf-8-sig"), str(path))
        assert find_shorthands(front.data) == (), path


def test_the_generated_tests_check_the_parts_a_shorthand_names() -> None:
    # The fidelity items are read from the skill's own text, not from phase 1's output.
    expected = {"Buyer": "Judges the price as a customer would.", "Seller": "Judges the margin."}
    assert prompt_items(SHORTHAND.encode()).parts == expected
    assert prompt_items(CANONICAL.encode()).parts == expected
    assert "Never invent a price." in prompt_items(SHORTHAND.encode()).skill


NAME_KEYS, TEXT_KEYS = ["name", "id", "title"], ["instructions", "description", "role", "prompt"]
# Mostly agreeing texts, so that many items are valid; a number now and then breaks the schema.
item_values = st.sampled_from(["Discover"] * 4 + ["Decide", 1])
items = st.builds(
    lambda names, texts: {**names, **texts},
    st.dictionaries(st.sampled_from(NAME_KEYS), item_values, min_size=1, max_size=2),
    st.dictionaries(
        st.sampled_from(TEXT_KEYS), st.sampled_from(["Look."] * 4 + ["Ask."]), max_size=2
    ),
)
lists = st.one_of(st.sampled_from(["Discover", "x"]), st.lists(items, max_size=3))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.sampled_from(["phases", "sub_agents", "inputs"]), lists, st.booleans())
def test_phase_one_and_fmt_agree_on_any_spelling(key: str, value: Any, nested: bool) -> None:
    fields = {"type": "collaborative" if key == "sub_agents" else "pipeline", key: value}
    front = {
        "name": "s",
        "description": "d",
        **({"metadata": {"mindrian": fields}} if nested else fields),
    }
    text = f"---\n{yaml.safe_dump(front, sort_keys=False)}---\nBody.\n"
    try:
        accepted = analysed(text)
    except SkillError as error:
        assert error.code in ("S201", "S202", "S205", "S207") and error.location is not None
        return
    formatted, _ = format_skill(text)
    assert unlocated(without_provenance(analysed(formatted))) == unlocated(
        without_provenance(accepted)
    )


# --- mindrian fmt and the editor schema ------------------------------------------------------


def test_fmt_writes_the_canonical_form_and_keeps_comments() -> None:
    formatted, _ = format_skill(SHORTHAND)
    assert re.search(r"\n      - name: Buyer +# the customer's side\n", formatted)
    assert "        instructions: Judges the price as a customer would.\n" in formatted
    assert "    chains_to:\n      - devil-advocate\n" in formatted
    assert "id: Seller" not in formatted and "title" not in formatted
    assert format_skill(formatted)[0] == formatted
    assert find_shorthands(parse_front_matter(formatted, "SKILL.md").data) == ()
    # The same skill; block style moved lines, so lines are left out of the comparison.
    assert unlocated(without_provenance(analysed(formatted))) == unlocated(
        without_provenance(analysed(SHORTHAND))
    )


def test_fmt_refuses_to_guess_between_two_values() -> None:
    with pytest.raises(FormatError) as caught:
        format_skill(step_skill("name: Discover\n        title: Explore"))
    assert caught.value.code == "M001" and caught.value.location is not None
    assert caught.value.location.line == 9 and "(line 8)" in str(caught.value)


def test_the_editor_schema_accepts_shorthands_and_still_requires_the_key() -> None:
    validator = Draft202012Validator(editor_schema())
    assert [e.message for e in validator.iter_errors(parse_front_matter(SHORTHAND, "S").data)] == []
    missing = {
        "name": "s",
        "description": "d",
        "metadata": {"mindrian": {"sub_agents": [{"title": "a"}]}},
    }
    assert list(validator.iter_errors(missing))
