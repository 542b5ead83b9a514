"""README's workflow code table is the registry's wording, and a hand edit of it is caught."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from builder.pipeline.codes import CODES, ErrorCode, registry
from builder.pipeline.codes_doc import README_PATH, render_readme, workflow_table, write
from mindrian.workflow.command import RULE_CODES

#: The module, not the function ``mindrian.workflow`` exports under the same name.
validate_module = importlib.import_module("mindrian.workflow.validate")

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


def _made_with() -> dict[str, set[str]]:
    """The severities validate.py's checks make each rule's issues with, by rule: the third
    argument of ``_issue(rule, message, SEVERITY, ...)``, or ``Issue(rule, message)``'s default."""
    source = Path(validate_module.__file__).read_text(encoding="utf-8")
    checks = {check.__name__ for _, check in validate_module.CHECKS}
    made: dict[str, set[str]] = {}
    for function in ast.walk(ast.parse(source)):
        if not (isinstance(function, ast.FunctionDef) and function.name in checks):
            continue
        for call in ast.walk(function):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                continue
            if call.func.id not in ("_issue", "Issue"):
                continue
            rule = call.args[0]
            assert isinstance(rule, ast.Constant), f"line {call.lineno}: a rule that is no literal"
            given = [k.value for k in call.keywords if k.arg == "severity"] + call.args[2:3]
            severity = validate_module.ERROR
            if given:
                assert isinstance(given[0], ast.Name), f"line {call.lineno}: a computed severity"
                severity = getattr(validate_module, given[0].id)
            made.setdefault(rule.value, set()).add(severity)
    return made


def test_the_severity_column_is_the_one_each_rule_is_reported_with() -> None:
    # The column comes from the registry's wording; this ties that wording to the runtime.
    stated = {
        row.split(" | ")[0][2:]: row.split(" | ")[1] for row in workflow_table().splitlines()[2:]
    }
    made = _made_with()
    assert set(made) == set(RULE_CODES)
    assert {rule: {stated[code]} for rule, code in RULE_CODES.items()} == made
