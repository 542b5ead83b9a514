"""Reading the JSON examples of an output template and inferring one schema from them."""

from __future__ import annotations

import pytest

from builder.skill.output_example import JsonExample, infer_schema, read_examples


def test_strict_objects_are_found_with_their_lines_and_placeholders_are_prose() -> None:
    text = 'as `{"a": 1}` or\n{"b": [1, {"c": 2}]}, not {a: n}, {name} nor { ... }.'
    examples, problems = read_examples(text, 10)
    assert examples == (JsonExample({"a": 1}, 10), JsonExample({"b": [1, {"c": 2}]}, 11))
    assert problems == ()


def test_comments_ellipses_and_trailing_commas_are_read_outside_strings() -> None:
    text = (
        "{\n"
        '  "url": "https://example.com/a//b",  // where it went\n'
        '  "note": "keeps ... and // inside",\n'
        '  "list": [1, 2, ...],\n'
        "  ... // more keys\n"
        "}"
    )
    (example,), problems = read_examples(text, 1)
    assert example.value == {
        "url": "https://example.com/a//b",
        "note": "keeps ... and // inside",
        "list": [1, 2],
    }
    assert problems == ()


def test_an_object_no_reader_accepts_is_a_problem_at_its_line() -> None:
    examples, (problem,) = read_examples('ok\n\n{"id": <the id>}\n{"b": true}', 7)
    assert examples == (JsonExample({"b": True}, 10),)
    assert problem.line == 9
    assert "at line 9" in problem.reason


def test_an_unclosed_brace_ends_the_search() -> None:
    assert read_examples('{"a": 1} then {"b": ', 1) == ((JsonExample({"a": 1}, 1),), ())


def test_values_give_their_types_and_nulls_and_empty_lists_take_anything() -> None:
    inferred = infer_schema(
        [
            JsonExample(
                {
                    "s": "x",
                    "b": False,
                    "i": 3,
                    "f": 0.5,
                    "n": None,
                    "e": [],
                    "o": {"k": [{"z": 1}]},
                },
                4,
            )
        ]
    )
    assert inferred.schema == {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "b": {"type": "boolean"},
            "i": {"type": "integer"},
            "f": {"type": "number"},
            "n": {},
            "e": {"type": "array", "items": {}},
            "o": {
                "type": "object",
                "properties": {
                    "k": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"z": {"type": "integer"}},
                            "required": ["z"],
                        },
                    }
                },
                "required": ["k"],
            },
        },
        "required": ["s", "b", "i", "f", "n", "e", "o"],
    }
    assert inferred.decisions == (
        "data: the output template's JSON example (line 4) is the output schema",
        "data.n: null in the example gives no type, so it takes any value",
        "data.e: an empty list gives no item type, so items take any value",
    )


@pytest.mark.parametrize(
    ("first", "second", "merged", "decision"),
    [
        (1, 2.5, {"type": "number"}, None),
        (
            None,
            "x",
            {"type": ["string", "null"]},
            "data.v: null in one example, so it is a nullable string",
        ),
        (
            "x",
            None,
            {"type": ["string", "null"]},
            "data.v: null in one example, so it is a nullable string",
        ),
        ("x", True, {}, "data.v: the examples give string and boolean, so it takes any value"),
        (
            [1],
            ["a"],
            {"type": "array", "items": {}},
            "data.v[]: the examples give integer and string, so it takes any value",
        ),
    ],
)
def test_several_examples_merge_key_by_key(first, second, merged, decision) -> None:  # type: ignore[no-untyped-def]
    inferred = infer_schema([JsonExample({"v": first}, 1), JsonExample({"v": second, "w": 1}, 2)])
    assert inferred.schema["properties"]["v"] == merged
    assert inferred.schema["required"] == ["v"]
    assert "w may be left out" in inferred.decisions[0]
    if decision:
        assert decision in inferred.decisions
    else:
        assert inferred.decisions[1:] == ()


def test_a_list_at_the_top_level_gives_its_objects_and_scalars_give_nothing() -> None:
    examples, problems = read_examples('```json\n[{"a": 1}, {"a": 2.5}]\n```\n["x", 3]\n', 1)
    assert [e.value for e in examples] == [{"a": 1}, {"a": 2.5}]
    assert problems == ()
    assert infer_schema(examples).schema["properties"] == {"a": {"type": "number"}}
