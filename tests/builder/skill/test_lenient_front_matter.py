"""Front matter a host accepts and strict YAML refuses (issue 27, item 3).

Shapes seen in public skills: an unquoted ``': '`` inside a one-line description
(``description: Use when: …``) and ``compatibility`` written as a mapping. Phase 1 reads
them as the host does, with a located warning; ``mindrian fmt`` rewrites them into YAML
that strict parsers (and ``agentskills validate``) accept; the package test reads the
description as phase 1 does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from builder.codegen.prompt_items import prompt_items
from builder.phases.skill_analysis import analyse
from builder.pipeline.contract import SkillSource
from builder.pipeline.errors import SkillError
from builder.skill.fmt import format_skill

COLON = """\
---
name: colon-skill
description: Use when: the user asks "why" \\ or how  # a comment
license: MIT
---
# Colon skill

Answer.
"""

FOLDED = """\
---
name: folded-skill
description: Use when: a long text
  continues: on the next line

  and a new paragraph
license: MIT
---
Body.
"""

IN_ITEM = """\
---
name: item-skill
description: Fine.
phases:
  - name: Frame
    instructions: Ask: what is the problem?
---
Body.
"""

MAPPING = """\
---
name: mapping-skill
description: Fine.
compatibility:
  claude-code: ">=1.0"
allowed-tools:
  - Read
---
Body.
"""


def _analyse(text: str):  # type: ignore[no-untyped-def]
    return analyse(SkillSource("x/SKILL.md", text.encode()))


def _lenient(warnings: tuple[str, ...]) -> tuple[str, ...]:
    """The warnings of lenient reading: W106 (the fixtures' names differ from their folder x)
    left out."""
    return tuple(w for w in warnings if "warning[W106]" not in w)


def test_unquoted_colon_is_read_as_the_text_with_a_located_warning() -> None:
    result = _analyse(COLON)
    assert result.output.description == 'Use when: the user asks "why" \\ or how'
    assert result.output.license == "MIT"
    assert _lenient(result.warnings) == (
        "x/SKILL.md:3:1: warning[W103]: description: the value holds ': ' unquoted, which "
        'strict YAML refuses; it is read as text. Quote it (description: "…") or run mindrian fmt',
    )
    # Quoting happens inside the line: keys below keep their lines.
    assert result.output.field_lines["license"] == 4


def test_a_folded_plain_value_is_read_as_yaml_folds_it() -> None:
    result = _analyse(FOLDED)
    assert result.output.description == (
        "Use when: a long text continues: on the next line\nand a new paragraph"
    )
    assert result.output.field_lines["license"] == 7


def test_an_item_key_is_recovered_too() -> None:
    result = _analyse(IN_ITEM)
    assert result.output.steps[0].instructions == "Ask: what is the problem?"
    assert any(":6:5: warning[W103]: instructions:" in w for w in result.warnings)


@pytest.mark.parametrize(
    "front",
    [
        "description: fine\nmetadata: {a: b: c}",  # inside a flow mapping
        'description: "quoted": then more',  # a quoted value followed by text
        "description: fine\n  nested: wrong",  # a mis-indented key, not a value with ': '
    ],
)
def test_every_other_yaml_error_stays_s102(front: str) -> None:
    with pytest.raises(SkillError) as caught:
        _analyse(f"---\nname: bad\n{front}\n---\nBody.\n")
    assert caught.value.code == "S102"


def test_a_mapping_compatibility_is_kept_as_metadata_with_a_warning() -> None:
    result = _analyse(MAPPING)
    assert result.output.compatibility is None
    assert result.output.metadata["compatibility"] == {"claude-code": ">=1.0"}
    assert result.output.allowed_tools == ("Read",)
    assert _lenient(result.warnings) == (
        "x/SKILL.md:4:1: warning[W104]: compatibility is a mapping; the Agent Skills standard "
        "defines it as text, so it is kept as metadata.compatibility and not used",
    )


def test_the_package_test_reads_the_description_as_phase_1_does() -> None:
    items = prompt_items(COLON.encode())
    assert items.skill[0] == 'Use when: the user asks "why" \\ or how'


@pytest.mark.parametrize("text", [COLON, FOLDED, IN_ITEM, MAPPING])
def test_fmt_writes_strict_yaml_that_reads_as_the_same_skill(text: str) -> None:
    formatted, _ = format_skill(text)
    front = formatted.split("---\n")[1]
    yaml.safe_load(front)  # strict YAML now
    before, after = _analyse(text).output, _analyse(formatted).output
    # fmt moves Mindrian fields under metadata.mindrian: lines may change, values may not.
    assert [(s.name, s.instructions) for s in after.steps] == [
        (s.name, s.instructions) for s in before.steps
    ]
    assert (after.description, after.metadata, after.compatibility) == (
        before.description,
        before.metadata,
        before.compatibility,
    )
    assert not any("W103" in w or "W104" in w for w in _analyse(formatted).warnings)
    assert format_skill(formatted)[0] == formatted


def test_fmt_output_passes_the_agent_skills_validator(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "agentskills"
    folder = tmp_path / "mapping-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text(format_skill(MAPPING.replace("\n  - Read", " Read"))[0])
    done = subprocess.run(
        [str(script), "validate", str(folder)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_tool_list_whose_item_became_a_mapping_is_kept_as_metadata() -> None:
    # ``- Query (or fallback: Read)`` is a one-key mapping in YAML, not a tool name.
    text = MAPPING.replace('compatibility:\n  claude-code: ">=1.0"\n', "").replace(
        "  - Read\n", "  - Read\n  - Query (or fallback: Search)\n"
    )
    result = _analyse(text)
    assert result.output.allowed_tools == ()
    assert result.output.metadata["allowed-tools"] == ["Read", {"Query (or fallback": "Search)"}]
    assert _lenient(result.warnings) == (
        "x/SKILL.md:4:1: warning[W104]: allowed-tools is a list whose item on line 6 is a "
        "mapping; the Agent Skills standard defines it as text, or a list of texts, so it is "
        "kept as metadata.allowed-tools and not used",
    )


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "{limit: .inf}", "[Read, .nan]"])
def test_a_field_kept_as_metadata_holds_finite_numbers_only(value: str) -> None:
    # Found by the fuzz suite: `allowed-tools: .inf` was set aside as metadata before the
    # number check ran, and reached the phase's output as an infinity.
    text = f"---\nname: odd\ndescription: Fine.\nallowed-tools: {value}\n---\nBody.\n"
    with pytest.raises(SkillError) as raised:
        _analyse(text)
    assert raised.value.code == "S211"
    assert raised.value.location is not None and raised.value.location.line == 4
