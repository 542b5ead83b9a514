"""The output schema a skill shows by example: the JSON objects of its output template.

A skill that writes the JSON it answers with (``{"success": false, "error":
"Error message"}``) has told us its output's shape. :func:`read_examples` finds
every JSON object in a section's text, reading the relaxed JSON documentation
uses (``//`` comments, ``...`` for "and so on", trailing commas) and reporting
the objects it cannot read with their line. :func:`infer_schema` turns the
examples into one JSON Schema (the subset ``mindrian.agents.output.data_model``
reads), with one sentence per choice it made for ``mindrian explain``.

Several examples are samples of one answer: their keys are merged, a key in
every example is required, one in only some may be left out (null). A null
value says nothing of the type, so it accepts any value unless another example
types the key; an array is typed by its first item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ExampleProblem",
    "InferredSchema",
    "JsonExample",
    "infer_schema",
    "read_examples",
]


@dataclass(frozen=True)
class JsonExample:
    """One JSON object written in a section."""

    value: Mapping[str, Any]
    """The object, keys in the order written."""
    line: int
    """1-based SKILL.md line of its opening brace."""


@dataclass(frozen=True)
class ExampleProblem:
    """Text that opens like a JSON object but is not one, even read leniently."""

    line: int
    """1-based SKILL.md line of its opening brace."""
    reason: str
    """What the JSON reader refused, with the line inside the object."""


@dataclass(frozen=True)
class InferredSchema:
    """The JSON Schema of the examples and why it is what it is."""

    schema: Mapping[str, Any]
    """An ``object`` JSON Schema (``type``, ``properties``, ``required``, ``items``)."""
    decisions: tuple[str, ...]
    """One sentence per choice that the examples alone did not settle."""


_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def _tokens(text: str) -> Iterator[tuple[str, bool]]:
    """``(chunk, is_string)`` pieces of JSON-like text: string literals and what lies between."""
    start, index, size = 0, 0, len(text)
    while index < size:
        if text[index] != '"':
            index += 1
            continue
        if start < index:
            yield text[start:index], False
        end = index + 1
        while end < size and text[end] not in '"\n':
            end += 2 if text[end] == "\\" else 1
        end = min(end + 1, size)
        yield text[index:end], True
        start = index = end
    if start < size:
        yield text[start:], False


def _closing_brace(text: str, start: int) -> int:
    """Index just past the ``}`` that closes the ``{`` at ``start``, or -1."""
    depth, offset = 0, start
    for chunk, is_string in _tokens(text[start:]):
        if not is_string:
            for position, char in enumerate(chunk):
                depth += {"{": 1, "}": -1}.get(char, 0)
                if depth == 0:
                    return offset + position + 1
        offset += len(chunk)
    return -1


def _without_comments(text: str) -> str:
    """``text`` without ``//`` comments outside string literals (line breaks kept)."""
    out: list[str] = []
    index, size, in_string = 0, len(text), False
    while index < size:
        char = text[index]
        if in_string:
            if char == "\\":
                out.append(text[index : index + 2])
                index += 2
                continue
            in_string = char not in '"\n'
        elif char == '"':
            in_string = True
        elif text.startswith("//", index):
            index = text.find("\n", index)
            index = size if index < 0 else index
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _relaxed(text: str) -> str:
    """``text`` without what documentation adds to JSON: ``//`` comments, ``...``, trailing commas.

    Only outside string literals, so ``"https://example.com"`` keeps its slashes.
    Line breaks are kept, so a line of the result is the same line of the source.
    """
    pieces = []
    for chunk, is_string in _tokens(_without_comments(text)):
        if not is_string:
            # Between a trailing comma and its bracket lies only space, never a string.
            chunk = _TRAILING_COMMA.sub(r"\1", chunk.replace("...", "").replace("\u2026", ""))
        pieces.append(chunk)
    return "".join(pieces)


def read_examples(
    text: str, first_line: int
) -> tuple[tuple[JsonExample, ...], tuple[ExampleProblem, ...]]:
    """Every top-level JSON object in ``text`` (which starts at SKILL.md line ``first_line``).

    Strict JSON first; text a strict reader refuses is read again without
    comments, ellipses and trailing commas. What neither reads is a problem; a
    ``{`` with no closing brace, or not followed by a quoted key, is prose.
    """
    decoder = json.JSONDecoder()
    examples: list[JsonExample] = []
    problems: list[ExampleProblem] = []
    index = text.find("{")
    while index >= 0:
        line = first_line + text.count("\n", 0, index)
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            end = _closing_brace(text, index)
            if end < 0:
                break
            if not text[index + 1 : end].lstrip().startswith('"'):
                # ``{name}`` or ``{ ... }`` in prose is a placeholder, not an object with keys.
                index = text.find("{", index + 1)
                continue
            try:
                value = json.loads(_relaxed(text[index:end]))
            except json.JSONDecodeError as exc:
                problems.append(ExampleProblem(line, f"{exc.msg} at line {line + exc.lineno - 1}"))
                index = text.find("{", end)
                continue
        if isinstance(value, dict):
            examples.append(JsonExample(value, line))
        index = text.find("{", end)
    return tuple(examples), tuple(problems)


_KIND = {bool: "boolean", int: "integer", float: "number", str: "string"}


def _of(value: Any, path: str, decisions: list[str]) -> dict[str, Any]:
    """The schema of one example value; ``path`` names it in decisions (``data.items[]``)."""
    if value is None:
        decisions.append(f"{path}: null in the example gives no type, so it takes any value")
        return {}
    if isinstance(value, dict):
        return {
            "type": "object",
            "properties": {k: _of(v, f"{path}.{k}", decisions) for k, v in value.items()},
            "required": list(value),
        }
    if isinstance(value, list):
        if not value:
            decisions.append(f"{path}: an empty list gives no item type, so items take any value")
            return {"type": "array", "items": {}}
        return {"type": "array", "items": _of(value[0], f"{path}[]", decisions)}
    return {"type": _KIND[type(value)]}


def _kinds(schema: Mapping[str, Any]) -> tuple[str, ...]:
    kinds = schema.get("type", ())
    return (kinds,) if isinstance(kinds, str) else tuple(kinds)


def _merge(a: Mapping[str, Any], b: Mapping[str, Any], path: str, decisions: list[str]) -> Any:
    """One schema accepting what either example showed at ``path``."""
    if a == b:
        return dict(a)
    if not _kinds(a) or not _kinds(b):
        # One side takes any value (a null): the other side's type, which may now be null too.
        typed = a if _kinds(a) else b
        if not _kinds(typed):
            return {}
        decisions.append(f"{path}: null in one example, so it is a nullable {_kinds(typed)[0]}")
        return {**typed, "type": [_kinds(typed)[0], "null"]}
    nullable = "null" in _kinds(a) or "null" in _kinds(b)
    left = next(k for k in _kinds(a) if k != "null")
    right = next(k for k in _kinds(b) if k != "null")
    merged: dict[str, Any]
    if left == right == "object":
        merged = _merge_objects(a, b, path, decisions)
    elif left == right == "array":
        merged = {"type": "array", "items": _merge(a["items"], b["items"], f"{path}[]", decisions)}
    elif {left, right} == {"integer", "number"}:
        merged = {"type": "number"}
    elif left == right:
        merged = {"type": left}
    else:
        decisions.append(f"{path}: the examples give {left} and {right}, so it takes any value")
        return {}
    if nullable:
        merged["type"] = [merged["type"], "null"]
    return merged


def _merge_objects(
    a: Mapping[str, Any], b: Mapping[str, Any], path: str, decisions: list[str]
) -> dict[str, Any]:
    left, right = a.get("properties") or {}, b.get("properties") or {}
    properties = {
        key: _merge(left[key], right[key], f"{path}.{key}", decisions)
        if key in left and key in right
        else dict(left.get(key) or right[key])
        for key in [*left, *(k for k in right if k not in left)]
    }
    both = set(a.get("required") or ()) & set(b.get("required") or ())
    return {
        "type": "object",
        "properties": properties,
        "required": [k for k in properties if k in both],
    }


def infer_schema(examples: Sequence[JsonExample], path: str = "data") -> InferredSchema:
    """The ``object`` JSON Schema every example fits, built as the module docstring says."""
    decisions: list[str] = []
    schema: Mapping[str, Any] = _of(dict(examples[0].value), path, decisions)
    for example in examples[1:]:
        schema = _merge(schema, _of(dict(example.value), path, decisions), path, decisions)
    lines = ", ".join(str(e.line) for e in examples)
    optional = [k for k in schema["properties"] if k not in schema["required"]]
    summary = (
        f"{path}: the output template's JSON example (line {lines}) is the output schema"
        if len(examples) == 1
        else f"{path}: the output template's {len(examples)} JSON examples (lines {lines}) are "
        "merged into the output schema; a key in every example is required"
        + (f", {', '.join(optional)} may be left out" if optional else "")
    )
    return InferredSchema(schema, (summary, *decisions))
