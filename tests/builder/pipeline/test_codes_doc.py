"""README's workflow code table is the registry's wording, and a hand edit of it is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.pipeline.codes import CODES, ErrorCode, registry
from builder.pipeline.codes_doc import README_PATH, render_readme, workflow_table, write

REPO = Path(__file__).resolve().parents[3]


def test_the_committed_table_is_current() -> None:
    assert write(REPO, check=True) == []


def test_a_hand_edited_row_is_stale_and_write_restores_it(tmp_path: Path) -> None:
    readme = (REPO / README_PATH).read_text(encoding="utf-8")
    row = "| L105 | error | `reachable`: a node the start cannot reach |"
    assert row in readme
    edited = readme.replace(row, "| L105 | warning | `reachable`: an island |")
    (tmp_path / README_PATH).write_text(edited, encoding="utf-8")
    assert write(tmp_path, check=True) == [tmp_path / README_PATH]
    assert (tmp_path / README_PATH).read_text(encoding="utf-8") == edited
    assert write(tmp_path) == [tmp_path / README_PATH]
    assert (tmp_path / README_PATH).read_bytes() == (REPO / README_PATH).read_bytes()


def test_every_workflow_code_has_one_row_with_the_registry_wording() -> None:
    rows = workflow_table().splitlines()[2:]
    workflow = sorted(c for c, entry in CODES.items() if entry.stage == "workflow")
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows] == workflow
    assert "| L106 | warning | `reaches_exit`: a node from which no exit can be reached |" in rows


def test_a_meaning_without_its_severity_is_refused() -> None:
    codes = registry(ErrorCode("L101", "workflow", "single_start: no start node"))
    with pytest.raises(ValueError, match=r"L101's meaning does not end with \(error\)"):
        workflow_table(codes)


def test_a_pipe_in_a_meaning_stays_inside_its_cell() -> None:
    codes = registry(ErrorCode("L101", "workflow", "rule: a | b (warning)"))
    assert workflow_table(codes).splitlines()[2] == "| L101 | warning | `rule`: a \\| b |"


def test_a_readme_without_the_markers_is_refused() -> None:
    with pytest.raises(ValueError, match=r"README\.md lacks the markers"):
        render_readme("# no table here\n")
