"""The error-code registry: every code builder/ and mindrian/ report is registered, once, and
none is stale."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from builder.pipeline.codes import CODES, ErrorCode, registry
from mindrian.workflow.command import PARSE_CODE, READ_CODE, RULE_CODES, RUN_CODE
from mindrian.workflow.validate import CHECKS

BUILDER = Path(__file__).resolve().parents[3] / "builder"
#: The runtime's coded exceptions, warnings and workflow findings (GraphError,
#: RoutingBodyWarning, mindrian.workflow.command) use registered codes too, which the command
#: line prints; the runtime cannot import the registry, so this scan is what ties them to it.
RUNTIME = BUILDER.parent / "mindrian"
REGISTRY_FILE = BUILDER / "pipeline" / "codes.py"
#: A string literal that is exactly an error code: ``"S204"``.
_CODE_LITERAL = re.compile(r"""[rbuRBU]?(["'])([A-Z]\d{3})\1""")
#: A code named in a string or prose: ``error[L002]``, ``W101``, a table's ``| S204 |``.
_CODE_IN_PROSE = re.compile(r"(?<![\w-])[A-Z]\d{3}(?!\w)")
#: An f-string (its fields written ``{}``) that makes a code: ``f"W{n}"``, ``f"S2{n}0"``.
_COMPUTED_CODE = re.compile(r"[A-Z]\d{0,2}\{\}\d{0,2}")


def _sources() -> list[Path]:
    """The Python files of builder/ and mindrian/, sorted."""
    return sorted(p for folder in (BUILDER, RUNTIME) for p in folder.rglob("*.py"))


def _strings() -> Iterator[tuple[str, str]]:
    """(text, file:line) of every string literal in builder/ and mindrian/ outside the registry,
    f-strings and docstrings included."""
    for path in _sources():
        if path == REGISTRY_FILE:
            continue
        text = path.read_text(encoding="utf-8")
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING:
                yield token.string, f"{path.relative_to(BUILDER.parent)}:{token.start[0]}"


def _codes_used() -> Iterator[tuple[str, str]]:
    """(code, file:line) of every string literal that is exactly a code."""
    for text, where in _strings():
        match = _CODE_LITERAL.fullmatch(text)
        if match:
            yield match.group(2), where


def _codes_named() -> Iterator[tuple[str, str]]:
    """(code, file:line) of every code a string holds: ``"S204"``, ``f"…: error[W003]: …"``,
    a docstring's example."""
    for text, where in _strings():
        for code in _CODE_IN_PROSE.findall(text):
            yield code, where


def test_every_code_used_is_registered() -> None:
    # A code printed from inside a longer string (an f-string's ``error[W003]``) is as visible
    # to users as a constant, so every code any string names counts.
    missing = sorted({f"{code} ({where})" for code, where in _codes_named() if code not in CODES})
    assert not missing, f"codes used but not in builder/pipeline/codes.py: {missing}"


def test_every_registered_code_is_used() -> None:
    used = {code for code, _ in _codes_used()}
    assert sorted(set(CODES) - used) == []


def _computed_codes(text: str) -> Iterator[int]:
    """Lines of f-strings that build a code from a letter and a number (``f"W{101 + i}"``)."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.JoinedStr):
            shape = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            if _COMPUTED_CODE.fullmatch(shape):
                yield node.lineno


def test_no_code_is_computed() -> None:
    # The scan above sees written-out codes only; a computed one once gave workflow findings
    # the codes of skill warnings (W101-W107) without any test noticing.
    computed = [
        f"{path.relative_to(BUILDER.parent)}:{line}"
        for path in _sources()
        for line in _computed_codes(path.read_text(encoding="utf-8"))
    ]
    assert computed == []


def test_the_computed_code_scan_finds_what_it_forbids() -> None:
    text = 'a = f"W{101 + i}"\nb = f"S2{n}"\nc = f"{x}: W101"\nd = f"G{n}: bad"\ne = f"X{n}0"\n'
    assert list(_computed_codes(text)) == [1, 2, 5]


def test_workflow_findings_have_codes_of_their_own() -> None:
    # One code per lint rule, registered for the workflow under the rule's name, so that a
    # code cannot mean a workflow rule here and something else in the registry.
    assert list(RULE_CODES) == [name for name, _ in CHECKS]
    emitted = {READ_CODE: "", PARSE_CODE: "", RUN_CODE: ""}
    emitted |= {code: name for name, code in RULE_CODES.items()}
    assert len(emitted) == len(CHECKS) + 3
    for code, rule in emitted.items():
        assert CODES[code].stage == "workflow"
        assert CODES[code].meaning.startswith(f"{rule}: " if rule else "mindrian workflow")
    others = {c for c, entry in CODES.items() if entry.stage != "workflow"}
    assert not {c[0] for c in others} & {c[0] for c in emitted}


def test_every_code_the_docs_name_is_registered() -> None:
    docs = [BUILDER.parent / "README.md", BUILDER.parent / "ARCHITECTURE.md"]
    docs += sorted((BUILDER.parent / "docs").glob("*.md"))
    named = {
        f"{code} ({path.name})"
        for path in docs
        for code in _CODE_IN_PROSE.findall(path.read_text(encoding="utf-8"))
        if code not in CODES
    }
    assert sorted(named) == []


def test_codes_are_well_formed_and_described() -> None:
    for code, entry in CODES.items():
        assert entry.code == code
        assert re.fullmatch(r"[A-Z]\d{3}", code)
        assert entry.stage and entry.meaning


def test_a_code_cannot_be_registered_twice() -> None:
    with pytest.raises(ValueError, match="S204 is registered twice"):
        registry(ErrorCode("S204", "skill_analysis", "a"), ErrorCode("S204", "usage", "b"))


def test_the_scan_finds_codes_printed_inside_longer_strings() -> None:
    text = 'f"{path}: error[W003]: {m}" PY311 E402x (S204, W101) | L105 |'
    assert _CODE_IN_PROSE.findall(text) == ["W003", "S204", "W101", "L105"]


def test_the_scan_finds_codes_in_every_form_they_are_written() -> None:
    # A keyword argument, a positional argument, a constant, a class default and a runtime
    # mapping's value all count.
    found = {code for code, _ in _codes_used()}
    assert {"U008", "S204", "P003", "E000", "W701", "L113"} <= found
