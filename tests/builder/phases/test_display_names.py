"""Display names from titles (issue 27, item 6): a ``name`` that is a folder slug gives way to
``metadata.mindrian.name`` or the body's title, in the prompt, spec (AgentOS) and README; the
id stays."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from builder.phases.architecture import build_instructions
from builder.phases.skill_analysis import analyse
from builder.pipeline.contract import SkillSource

ROOT = Path(__file__).resolve().parents[3]


def _definition(front: str, body: str):  # type: ignore[no-untyped-def]
    text = f"---\n{front}description: d\n---\n{body}"
    return analyse(SkillSource("skills/x/SKILL.md", text.encode())).output


@pytest.mark.parametrize(
    ("front", "body", "shown"),
    [
        ("name: pws\n", "# PWS Validation\n\nText.\n", "PWS Validation"),
        # The explicit name wins over the heading.
        (
            "name: pws\nmetadata:\n  mindrian:\n    name: Problem Worth Solving\n",
            "# PWS\n",
            "Problem Worth Solving",
        ),
        # A name that is already a title is shown as written.
        ("name: PWS Check\n", "# Something else\n", "PWS Check"),
        # No title: a first heading of level 2 is a section, not a title.
        ("name: pws\n", "## Overview\n\n# Late\n", "pws"),
        ("name: pws\n", "No heading at all.\n", "pws"),
        # A '#' line inside a code fence is not a heading.
        ("name: pws\n", "```\n# comment\n```\n", "pws"),
    ],
)
def test_display_name(front: str, body: str, shown: str) -> None:
    definition = _definition(front, body)
    assert definition.display_name == shown
    assert definition.id == ("pws-check" if "PWS Check" in front else "pws")
    prompt = build_instructions(definition, "operator").system_prompt
    assert prompt == f"You are {shown}, a Mindrian operator agent."


def test_the_decision_names_the_line() -> None:
    definition = _definition("name: pws\n", "\n# PWS Validation\n")
    assert (
        "display name 'PWS Validation' from the body's first heading (line 6): name 'pws' is a "
        "folder slug" in definition.decisions
    )


def test_the_committed_pws_package_shows_its_title_and_keeps_its_id() -> None:
    package = ROOT / "generated" / "pws_validation"
    spec = yaml.safe_load((package / "spec.yaml").read_text(encoding="utf-8"))
    assert (spec["id"], spec["name"]) == ("pws-validation", "PWS Validation")
    assert spec["instructions"]["system_prompt"].startswith("You are PWS Validation, ")
    assert "| name | PWS Validation |" in (package / "README.md").read_text(encoding="utf-8")
