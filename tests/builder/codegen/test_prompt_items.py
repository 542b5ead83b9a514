"""What the builder puts in front of the model and checks it keeps: prompt items read from
SKILL.md itself, merged rules, JSON examples of the output template, model settings."""

from __future__ import annotations

from dataclasses import replace

import pytest
from phase_factories import run_phases, skill

from builder.codegen.prompt_items import prompt_items
from builder.phases.architecture import settings_warnings
from builder.phases.code_generation import output_examples
from builder.pipeline.errors import ArchitectureError, CodegenError
from builder.skill.model import ScoreBand, ScoreDimension, SubAgentSpec
from builder.skill.spec import InstructionBlock, InstructionSet
from mindrian.providers import ModelSettings

SKILL = b"""---
name: sample
description: >
  Samples things
  carefully.
metadata:
  mindrian:
    tone: dry
    behavioral_rules: [Never guess., Cite the source.]
    sub_agents:
      - name: Left
        instructions: Look left.
    scores:
      dimensions:
        - {name: depth, min: 0, max: 5}
        - {name: nameless}
---

# Sample

| a | b |
|---|---|
```
  - Keep it short.
```
"""


def test_items_are_the_skill_s_own_lines_wherever_the_fields_live() -> None:
    items = prompt_items(SKILL)
    assert items.skill == (
        "Samples things carefully.",
        "dry",
        "Never guess.",
        "Cite the source.",
        "# Sample",
        "| a | b |",
        "- Keep it short.",
    )
    assert items.parts == {"Left": "Look left."}
    assert items.scores == {"depth": (0.0, 5.0)}


def test_top_level_fields_win_over_metadata_ones() -> None:
    text = SKILL.replace(b"name: sample\n", b"name: sample\ntone: wry\n")
    assert prompt_items(text).skill[1] == "wry"


def test_front_matter_rules_reach_the_instructions_beside_the_body_s_own() -> None:
    body_rules = InstructionBlock("behavioral_rules", "Rules", 10, "## Rules\n\n- Body rule one.\n")
    instructions = InstructionSet(
        system_prompt="You are x, a Mindrian role agent.",
        behavioral_rules=("Front rule.", "Body rule one."),
        blocks=(body_rules,),
    )
    text = instructions.render_markdown()
    assert text.count("Front rule.") == 1 and text.count("Body rule one.") == 1
    assert text.index("Front rule.") < text.index("## Rules")


def scored_spec(example: str, deepest: int = 5):
    definition = skill(
        scores=(ScoreDimension("depth", 0, deepest, "How deep?"), ScoreDimension("width", 0, 5)),
        score_bands=(ScoreBand("OK", 0, 10),),
    )
    spec = run_phases(definition, until=2)["architecture"].output
    block = InstructionBlock("output_template", "Output", 20, f"## Output\n\nLike\n{example}\n")
    return replace(spec, instructions=replace(spec.instructions, blocks=(block,)))


def test_an_example_that_fits_the_schema_is_kept() -> None:
    spec = scored_spec('```json\n{"depth": 2, "width": 3, "total": 5}\n```')
    assert output_examples(spec) == ({"depth": 2, "width": 3, "total": 5},)


def test_each_spec_is_held_to_its_own_scores_whichever_came_first() -> None:
    example = '```json\n{"depth": 7, "width": 3, "total": 10}\n```'
    for deepest in (9, 5, 9):  # a model of one shape is shared, never lent to another
        if deepest == 9:
            assert output_examples(scored_spec(example, deepest))[0]["depth"] == 7
        else:
            with pytest.raises(CodegenError, match="depth: Input should be less than or equal"):
                output_examples(scored_spec(example, deepest))


@pytest.mark.parametrize(
    ("example", "problem"),
    [
        ('{"depth": 2, "width": 3, "total": 6}', "total is 6 but the scores add up to 5"),
        ('{"depth": 9, "width": 3}', "depth: Input should be less than or equal to 5"),
        ('{"depth": 2, "width": 3, "height": 1}', "height: Extra inputs are not permitted"),
        (
            '{"output": "x", "confidence": 2, "scores": {"depth": 1, "width": 1}}',
            "confidence: Input should be less than or equal to 1",
        ),
    ],
)
def test_an_example_the_schema_rejects_is_a_located_error(example: str, problem: str) -> None:
    with pytest.raises(CodegenError) as error:
        output_examples(scored_spec(example))
    assert error.value.code == "C026"
    assert problem in str(error.value)
    assert error.value.location.line == 23  # the block starts at 20; the example three lines on


def test_settings_the_provider_lacks_are_named_in_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        "mindrian.providers.unsupported_settings", lambda provider, s: ("thinking_budget",)
    )
    notes = settings_warnings("groq", ModelSettings(None, 1000, 500))
    assert notes == (
        "thinking_budget=500 will not be applied: Agno's groq model lacks the field, "
        "so a run drops it",
    )


def test_an_uninstalled_provider_is_said_to_be_unchecked() -> None:
    notes = settings_warnings("mistral", ModelSettings(0.2, 1000, None))
    assert len(notes) == 1 and "not checked" in notes[0]


def test_a_model_its_provider_refuses_with_the_settings_fails_phase_2() -> None:
    definition = skill(
        model="anthropic:claude-3-haiku-20240307",
        type="collaborative",
        sub_agents=(SubAgentSpec("A", "a"), SubAgentSpec("B", "b")),
    )
    with pytest.raises(ArchitectureError) as error:
        run_phases(definition, until=2)
    assert error.value.code == "A006"
    assert "does not support extended thinking" in str(error.value)
