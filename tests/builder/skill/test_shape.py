"""Where a skill's text stops for the user, and the guided steps those gates cut it into."""

from __future__ import annotations

import pytest
from build_factories import make_project

from builder.phases.architecture import PHASE as ARCHITECTURE
from builder.skill.shape import find_gates, gate_steps, persona_line

GATES = [
    "Wait for the user's response before drafting.",
    "- Wait for their answer; the choice decides the rest.",
    "Wait for the reviewer to confirm the assessment.",
    "**Do not proceed until the user responds.**",
    "Only proceed once the user approves.",
    "7. Implement after approval.",
    "Ask the user which items should be fixed.",
    "Ask if they are ready to move on to the next section.",
    "Confirm with the user before the first run.",
    "3. **Ask via AskUserQuestion**: two options and a recommendation.",
    "展示方案，等待用户确认后再执行。",  # noqa: RUF001 - Chinese punctuation is the point
    "列出清单，问“就这些吗”，确认后才开始讲解。",  # noqa: RUF001
]
NOT_GATES = [
    "If anything is unclear, wait for the user's answer.",
    "Search first; if several results appear, ask the user which one to use.",
    "- **Scope:** When the user names no file, ask which scope to apply. "
    "Do not start until the user confirms.",
    "Ask before proceeding only when a decision cannot be undone.",
    "| semi-automatic | stop at key points and wait for the user's confirmation |",
    "Wait for `networkidle` before reading the page.",
    "Do not stop for things you can decide.",
    "严重的问题必须人工确认后才能提出。",
]


@pytest.mark.parametrize("line", GATES)
def test_a_gate_on_the_user_is_found_on_its_line(line: str) -> None:
    body = f"# Skill\n\nIntro.\n\n{line}\n\nThe rest.\n"
    assert [g.line for g in find_gates(body, 10)] == [14]


@pytest.mark.parametrize("line", NOT_GATES)
def test_exceptions_tables_and_other_waits_are_no_gate(line: str) -> None:
    assert find_gates(f"# Skill\n\n{line}\n", 1) == ()


def test_a_gate_nested_under_a_conditional_item_is_no_gate() -> None:
    body = "1. Detect the language.\n2. **If it cannot be inferred**:\n   - Use AskUserQuestion.\n"
    assert find_gates(body, 1) == ()


def test_code_is_never_read() -> None:
    assert find_gates("```\nWait for the user's answer.\n```\n", 1) == ()


def test_the_gates_cut_the_body_into_steps_that_end_on_their_question() -> None:
    body = (
        "# Fixer\n\n## 1) Inspect\nList the comments.\n\n## 2) Ask\n"
        "- Ask the user which comments should be addressed\n\n## 3) Fix\nApply the fixes.\n"
    )
    gates = find_gates(body, 5)
    steps = gate_steps(body, 5, gates)
    assert [(s.name, s.waits_for_user, s.line) for s in steps] == [
        ("Ask", True, 5),
        ("Fix", False, 13),
    ]
    assert steps[0].question == "Ask the user which comments should be addressed"
    assert steps[0].instructions.startswith("# Fixer") and steps[0].instructions.endswith(
        "addressed"
    )
    assert steps[1].instructions == "\n## 3) Fix\nApply the fixes.".strip("\n")
    # Nothing of the body is lost between the steps.
    assert "\n".join(s.instructions for s in steps).split() == body.split()


def test_two_gates_under_one_heading_get_distinct_names() -> None:
    body = "## Interview\nWait for the user's answer.\nThen wait for their approval.\n"
    names = [s.name for s in gate_steps(body, 1, find_gates(body, 1))]
    assert names == ["Interview", "Interview (2)"]


@pytest.mark.parametrize(
    "name,body,expected",
    [
        ("coach-personality", "Be warm.\n", 0),
        ("coach", "# Coach Persona\n\nBe warm.\n", 3),
        ("coach", "# Coach\n\n## Your Persona\n\nBe warm.\n", 5),
        ("novelist", "# Novelist\n\n## Character\n\nGive each a motive.\n", None),
        ("analyst", "You are a professional analyst.\n\n## Rules\n\n- Cite.\n", None),
    ],
)
def test_a_persona_is_named_not_implied(name: str, body: str, expected: int | None) -> None:
    assert persona_line(name, body, 3) == expected


GATED = """---
name: comment-fixer
description: Fixes the review comments of a pull request that the user picks.
---

# Comment fixer

## 1) Inspect
List every open review comment with a number.

## 2) Ask
- Ask the user which numbered comments should be addressed

## 3) Fix
Apply the fixes for the chosen comments.
"""


@pytest.mark.slow
def test_a_gated_skill_builds_into_a_guided_agent_that_pauses_with_its_question(
    cli, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    project = make_project(tmp_path, {"comment-fixer": GATED})
    result = cli(["build", "skills/comment-fixer", "--jobs", "1", "--quiet"], project)
    assert result.code == 0, result.err
    spec = (project / "generated" / "comment_fixer" / "spec.yaml").read_text(encoding="utf-8")
    assert "type: guided\ntype_rule: user_gate\n" in spec
    assert "question: Ask the user which numbered comments should be addressed\n" in spec
    explained = cli(["explain", "comment-fixer"], project)
    assert explained.code == 0, explained.err
    assert "stops for the user at line 12" in explained.out


def test_phase_two_gives_the_gated_steps_to_the_spec() -> None:
    from phase_factories import phase_input, skill

    body = GATED.split("---\n", 2)[2]
    spec = ARCHITECTURE.run(phase_input({"skill_analysis": skill(body=body, body_line=5)})).output
    assert (spec.type, spec.type_rule) == ("guided", "user_gate")
    assert [s.question for s in spec.steps] == [
        "Ask the user which numbered comments should be addressed",
        "",
    ]
    assert "line 12" in spec.type_reason


def test_a_heading_of_nothing_but_marks_names_no_step() -> None:
    body = "## **\nWait for the user's answer.\nThen go on.\n"
    assert [s.name for s in gate_steps(body, 1, find_gates(body, 1))] == ["Step 1", "Step 2"]
