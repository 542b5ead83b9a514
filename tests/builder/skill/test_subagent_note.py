"""An ``agents/*.md`` written without front matter is read as the subagent it describes.

Two of the Mindrian author's eight subagents are written this way: a title, a summary
(a blockquote in one, a paragraph under a "Purpose" heading in the other), then the
agent's instructions, one with a ``---`` rule further down. The texts here are synthetic,
in those shapes.
"""

from __future__ import annotations

import pytest

from builder.codegen.prompt_items import prompt_items
from builder.phases.skill_analysis import analyse
from builder.pipeline.contract import SkillSource
from builder.pipeline.errors import SkillError
from builder.skill.subagent import is_subagent_note

QUOTED = """# Grant Finder Agent

> Finds funding calls that fit the venture.
> Runs on request only.

## Flow

1. Read the room.
2. Search the calls.
"""
UNDER_PURPOSE = """# Lens Agent

## Purpose

When asked for one viewpoint, this agent
answers from it alone.

```text
not a paragraph
```

---

## Rules

- Name the viewpoint first.
"""


def _analyse(path: str, text: str):  # type: ignore[no-untyped-def]
    return analyse(SkillSource(path, text.encode("utf-8")))


def test_name_from_the_file_description_from_the_first_paragraph_title_as_display_name() -> None:
    result = _analyse("plugin/agents/grant-finder.md", QUOTED)
    definition = result.output
    assert definition.name == "grant-finder"
    assert (
        definition.description == "Finds funding calls that fit the venture. Runs on request only."
    )
    assert definition.display_name == "Grant Finder Agent"
    assert definition.body == QUOTED
    assert result.warnings == (
        "plugin/agents/grant-finder.md:3:1: warning[W120]: no front matter: read as the subagent "
        "'grant-finder' (its file name), described by its first paragraph (line 3); start the "
        "file with '---', name, description, '---' to say them yourself",
    )


def test_headings_are_skipped_and_a_later_rule_is_body() -> None:
    result = _analyse("agents/lens.md", UNDER_PURPOSE)
    assert result.output.description == (
        "When asked for one viewpoint, this agent answers from it alone."
    )
    assert ":5:1: warning[W120]" in result.warnings[0]
    # The rule is no front-matter delimiter: every line of the body is still an item.
    items = prompt_items(UNDER_PURPOSE.encode("utf-8")).skill
    assert "- Name the viewpoint first." in items
    assert "# Lens Agent" in items


def test_a_note_with_no_paragraph_of_prose_is_s101() -> None:
    with pytest.raises(SkillError) as refused:
        _analyse("agents/empty.md", "# Title\n\n- only a list\n")
    assert refused.value.code == "S101"


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("agents/x.md", "# X\n", True),
        ("agents/x.md", "---\nname: x\n---\n", False),
        ("skills/x/SKILL.md", "# X\n", False),
        ("agents/x.txt", "# X\n", False),
    ],
)
def test_only_an_agents_markdown_file_without_front_matter_is_a_note(
    path: str, text: str, expected: bool
) -> None:
    assert is_subagent_note(path, text) is expected


def test_a_skill_without_front_matter_is_still_s101() -> None:
    with pytest.raises(SkillError) as refused:
        _analyse("skills/x/SKILL.md", QUOTED)
    assert refused.value.code == "S101"
