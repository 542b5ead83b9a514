"""``cypher_literal``: the one function that writes values into Cypher text.

``graph export --format cypher`` uses it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import Any

import ladybug
import pytest

from builder.graph import cypher_lint
from builder.graph.export import cypher_literal, export_text

#: Text that tries to leave a literal, end a statement, start a comment, or smuggle an escape.
HOSTILE = {
    "injection": "1.0', f.pwned = true, f.note = '",
    "double quote": 'say "hi"',
    "backslash quote": "\\' RETURN 1 //",
    "trailing backslash": "ends with \\",
    "escaped unicode text": "\\u0027 stays text",
    "newlines": "line one\nline two\r\nthree",
    "tab and controls": "a\tb\x01c\x1fd\x7f",
    "line separators": "x\u2028y\u2029z\x85",
    "comment markers": "/* not a comment */ // nor this",
    "statement end": "'; MATCH (n) DETACH DELETE n; //",
    "parameter sign": "$frameworks",
    "braces and backticks": "{id: `x`}",
    "unicode": "Gründer – 決定 😀",
    "empty": "",
}

#: What each literal must look like, character by character.
EXACT = {
    "it's": "'it\\'s'",
    'a"b': "'a\"b'",
    "a\\b": "'a\\\\b'",
    "a\nb": "'a\\nb'",
    "a\x01b": "'a\\u0001b'",
    "a\u2028b": "'a\\u2028b'",
    "😀": "'😀'",
}


@pytest.fixture(scope="module")
def engine() -> Iterator[Any]:
    database = ladybug.Database(":memory:")
    connection = ladybug.Connection(database)
    yield connection
    connection.close()
    database.close()


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_string_survives_as_one_value(engine: Any, case: str) -> None:
    value = HOSTILE[case]
    literal = cypher_literal(value)
    assert "\n" not in literal and "\r" not in literal
    assert engine.execute(f"RETURN {literal} AS v, 1 AS marker").get_all() == [[value, 1]]


@pytest.mark.parametrize(("value", "literal"), sorted(EXACT.items()))
def test_exact_escapes(value: str, literal: str) -> None:
    assert cypher_literal(value) == literal


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (3, "3"),
        (0.8, "0.8"),
        (1e-20, "1e-20"),
        ([], "[]"),
        (("a", "b'"), "['a', 'b\\'']"),
        ([1.0, None, 2.5], "[1.0, null, 2.5]"),
        ([["x"], ["y", "z"]], "[['x'], ['y', 'z']]"),
    ],
)
def test_other_values(engine: Any, value: Any, literal: str) -> None:
    assert cypher_literal(value) == literal
    if value is not None and value != []:  # an untyped null or empty list has no column type here
        got = engine.execute(f"RETURN {literal} AS v").get_all()[0][0]
        assert got == (list(value) if isinstance(value, tuple) else value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_refused(value: float) -> None:
    with pytest.raises(ValueError, match="has no Cypher literal"):
        cypher_literal(value)


@pytest.mark.parametrize("value", [{"a": 1}, b"bytes", object()])
def test_other_types_are_refused(value: Any) -> None:
    with pytest.raises(TypeError, match="no Cypher literal"):
        cypher_literal(value)


def test_neo4j_front_end_reads_every_literal_as_one_expression() -> None:
    reason = cypher_lint.unavailable_reason()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Cypher linter required in CI: {reason}")
        pytest.skip(f"Cypher linter unavailable: {reason}")
    texts = {
        case: f"RETURN {cypher_literal(value)} AS v, 1 AS marker" for case, value in HOSTILE.items()
    }
    texts["numbers"] = f"RETURN {cypher_literal([0.8, 1e-20, 3, True, None])} AS v"
    found = cypher_lint.lint(texts)
    assert {case: d for case, d in found.items() if d} == {}


def test_unknown_export_format() -> None:
    with pytest.raises(ValueError, match="unknown export format 'xml'"):
        export_text((), "xml")
