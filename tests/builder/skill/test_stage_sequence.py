"""A stage sequence written as prose in one SKILL.md (issue 27, item 5, last sentence).

A numbered list under a heading named for stages, plus one section per listed stage, is a
pipeline with one phase per stage; every other numbered list stays the steps of one method.
The texts are synthetic, in the shape of the Mindrian author's CHAIN.md ("## Stage Sequence",
"1. **decompose** -- …") with its stages written as sections of the same file.
"""

from __future__ import annotations

import pytest
from build_factories import make_project

from builder.phases.architecture import decide_type
from builder.phases.skill_analysis import analyse
from builder.pipeline.contract import SkillSource
from builder.skill.model import SkillDefinition

FRONT = "---\nname: relay-method\ndescription: Gathers, weighs and reports.\n---\n"
LIST = """# Relay Method

## Stage Sequence

1. **gather** -- collect the facts the question needs
2. **weigh** -- rank them by how much they bear on it
3. **report** -- answer with the ranked facts
"""
SECTIONS = """
## Stage 1: Gather

Collect every fact the question depends on.

## Stage 2: Weigh

Rank the facts.

### Ties

Break ties by recency.

## Stage 3: Report

Answer in three sentences.

## Notes

Not a stage.
"""
SKILL = FRONT + LIST + SECTIONS


def _definition(text: str) -> SkillDefinition:
    return analyse(SkillSource("relay/SKILL.md", text.encode("utf-8"))).output


def _rule(text: str) -> str:
    return decide_type(_definition(text)).rule


def test_a_stage_list_with_a_section_per_stage_is_a_pipeline_of_those_sections() -> None:
    definition = _definition(SKILL)
    assert [s.name for s in definition.steps] == ["gather", "weigh", "report"]
    assert [s.instructions for s in definition.steps] == [
        "Collect every fact the question depends on.",
        "Rank the facts.\n\n### Ties\n\nBreak ties by recency.",
        "Answer in three sentences.",
    ]
    lines = SKILL.split("\n")
    for step in definition.steps:
        assert lines[step.line - 1] == step.instructions.split("\n")[0]
    assert definition.stage_list is not None
    assert (definition.stage_list.heading, definition.stage_list.line) == ("Stage Sequence", 7)
    decision = decide_type(definition)
    assert (decision.type, decision.rule) == ("pipeline", "stage_sequence")
    assert "'Stage Sequence' (line 7)" in decision.reason


def test_the_decision_names_the_list_and_each_stage_section() -> None:
    decisions = " ".join(_definition(SKILL).decisions)
    assert "3 steps from the numbered stage list under 'Stage Sequence' (line 7)" in decisions
    for heading, line in (("Stage 1: Gather", 13), ("Stage 2: Weigh", 17), ("Stage 3: Report", 25)):
        assert f"{heading!r} (line {line})" in decisions


@pytest.mark.parametrize(
    "heading", ["Phases", "Stages", "The Three Stages", "Pipeline", "Phase Order", "Stage order:"]
)
def test_other_stage_list_headings(heading: str) -> None:
    assert _rule(SKILL.replace("## Stage Sequence", f"## {heading}")) == "stage_sequence"


@pytest.mark.parametrize(
    ("sections", "why"),
    [
        (SECTIONS.replace("Stage 2: Weigh", "Phase 2 - weigh"), "another prefix"),
        (SECTIONS.replace("Stage 2: Weigh", "2. Weigh"), "a bare number"),
        (SECTIONS.replace("Stage 2: Weigh", "Weigh"), "the name alone"),
        (SECTIONS.replace("Stage 2: Weigh", "Stage 2"), "the number alone"),
        (SECTIONS.replace("Stage 3: Report", "Stage 3: Report (final)"), "a qualifier"),
    ],
)
def test_a_stage_section_may_be_headed_in_several_ways(sections: str, why: str) -> None:
    assert _rule(FRONT + LIST + sections) == "stage_sequence", why


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (SKILL.replace("## Stage Sequence", "## Overview"), "a list not named for stages"),
        (SKILL.replace("## Stage Sequence", "## Steps"), "steps are one method's"),
        (SKILL.replace("## Stage Sequence", "## Workflow"), "a workflow is one method's"),
        (
            SKILL.replace("1. **gather", "- **gather")
            .replace("2. **", "- **")
            .replace("3. **", "- **"),
            "a bulleted list",
        ),
        (
            FRONT + LIST + SECTIONS.replace("## Stage 2: Weigh", "## Weighing"),
            "a stage lacks a section",
        ),
        (FRONT + LIST + SECTIONS + "\n## Gather\n\nAgain.\n", "a stage has two sections"),
        (FRONT + LIST + SECTIONS.replace("Stage 2: Weigh", "Stage 4: Weigh"), "a wrong number"),
        (FRONT + LIST + SECTIONS.replace("## Stage 3: Report", "### Stage 3: Report"), "levels"),
        (
            FRONT
            + LIST
            + SECTIONS.replace("## Stage 1: Gather", "## Stage 9: Tmp").replace(
                "## Notes", "## Stage 1: Gather"
            ),
            "sections out of the list's order",
        ),
        (
            FRONT
            + LIST
            + SECTIONS.replace("Rank the facts.\n\n### Ties\n\nBreak ties by recency.\n", ""),
            "an empty section",
        ),
        (FRONT + LIST.split("2.")[0] + SECTIONS, "a single stage"),
        (FRONT + LIST, "a list without sections"),
    ],
)
def test_anything_less_is_not_a_stage_sequence(text: str, why: str) -> None:
    definition = _definition(text)
    assert definition.stage_list is None, why
    assert decide_type(definition).rule != "stage_sequence", why


def test_a_phases_list_without_stage_sections_keeps_its_items_as_steps() -> None:
    text = FRONT + "## Phases\n\n1. Gather: collect facts\n2. Report: answer\n"
    definition = _definition(text)
    assert [(s.name, s.instructions) for s in definition.steps] == [
        ("Gather", "collect facts"),
        ("Report", "answer"),
    ]
    # Without a stage sequence, numbered steps are one agent's procedure.
    assert (decide_type(definition).type, decide_type(definition).rule) == ("operator", "default")


def test_declared_phases_win_over_a_stage_list() -> None:
    text = SKILL.replace("description:", "phases: [one, two]\ndescription:")
    definition = _definition(text)
    assert [s.name for s in definition.steps] == ["one", "two"]
    assert definition.stage_list is None


def test_the_body_still_reaches_the_prompt_whole() -> None:
    definition = _definition(SKILL)
    assert definition.body == SKILL.split("---\n", 2)[2]


@pytest.mark.slow
def test_a_stage_sequence_builds_through_phase_7_and_explain_gives_the_rule(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    project = make_project(tmp_path, {"relay-method": SKILL})
    result = cli(["build", "skills/relay-method", "--jobs", "1", "--quiet"], project)
    assert result.code == 0, result.err
    spec = (project / "generated" / "relay_method" / "spec.yaml").read_text(encoding="utf-8")
    assert "type: pipeline\ntype_rule: stage_sequence\n" in spec
    explained = cli(["explain", "relay-method"], project)
    assert explained.code == 0, explained.err
    assert "3 steps from the numbered stage list under 'Stage Sequence' (line 7)" in explained.out
    assert "type_rule: stage_sequence" in explained.out
