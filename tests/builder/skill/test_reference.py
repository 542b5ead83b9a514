"""docs/skill-format.md and docs/skill.schema.json stay in step with phase 1's schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from builder.phases.skill_analysis import skill_schema
from builder.schemas.reference import (
    DOC_PATH,
    EDITOR_SCHEMA_PATH,
    FIELD_DOCS,
    editor_schema,
    render_doc,
    write,
)
from builder.skill.frontmatter import parse_front_matter

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO.parent / "shared" / "corpus"
SKILLS = sorted((REPO / "skills").glob("*/SKILL.md")) + sorted(CORPUS.rglob("SKILL.md"))


def test_every_schema_field_is_documented_and_nothing_else() -> None:
    schema = skill_schema()
    fields = {*schema["properties"], *schema["$defs"]["mindrian"]["properties"]}
    assert set(FIELD_DOCS) == fields


def test_the_committed_reference_and_editor_schema_are_current(tmp_path: Path) -> None:
    assert write(REPO, check=True) == []
    # And the check notices drift: a copy with an edited table is stale.
    (tmp_path / "docs").mkdir()
    doc = (REPO / DOC_PATH).read_text(encoding="utf-8")
    (tmp_path / DOC_PATH).write_text(doc.replace("| `tone` |", "| `voice` |"), encoding="utf-8")
    (tmp_path / EDITOR_SCHEMA_PATH).write_bytes((REPO / EDITOR_SCHEMA_PATH).read_bytes())
    assert write(tmp_path, check=True) == [tmp_path / DOC_PATH]


def test_the_table_lists_every_field_with_where_it_goes() -> None:
    table = render_doc((REPO / DOC_PATH).read_text(encoding="utf-8"))
    for name in FIELD_DOCS:
        assert f"| `{name}` |" in table
    assert "| `triggers` | metadata.mindrian |" in table and "| `name` | top level |" in table


def test_the_editor_schema_is_valid_and_flags_top_level_mindrian_fields() -> None:
    schema = json.loads((REPO / EDITOR_SCHEMA_PATH).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema == editor_schema()
    assert schema["properties"]["triggers"]["deprecated"] is True
    assert "deprecated" not in schema["properties"]["name"]


@pytest.mark.parametrize("path", SKILLS, ids=lambda p: p.parent.name)
def test_the_editor_schema_accepts_what_phase_one_accepts(path: Path) -> None:
    front = parse_front_matter(path.read_text(encoding="utf-8-sig"), str(path)).data
    validator = Draft202012Validator(editor_schema())
    assert [e.message for e in validator.iter_errors(front)] == []


def test_the_editor_schema_rejects_what_phase_one_rejects() -> None:
    validator = Draft202012Validator(editor_schema())
    bad = {"name": "a", "description": "b", "metadata": {"mindrian": {"inputs": [{"nam": "x"}]}}}
    assert list(validator.iter_errors(bad))
