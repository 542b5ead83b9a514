"""Whether a value surely satisfies a JSON Schema, without importing jsonschema.

Phase 1 checks every front matter against ``skill.schema.json``, and jsonschema's import is
most of what ``mindrian validate`` of one skill costs. Nearly every front matter is valid, so
:func:`surely_valid` answers first: True only when the value satisfies every keyword, as
jsonschema's Draft 2020-12 validator reads it. Anything it does not model (a keyword outside
the subset the project's schemas use, a reference outside ``#/$defs/``, a value of a type JSON
does not have, a float where an integer is asked, unique items that are not all text) makes it
answer False, and so does an invalid value: the caller then asks jsonschema, which finds and
words the errors. The answer is never True for a value jsonschema refuses; a False only costs
time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ANNOTATIONS", "KEYWORDS", "surely_valid"]

#: Keywords that never make a value invalid.
ANNOTATIONS = frozenset(
    ("$schema", "$id", "$comment", "title", "description", "examples", "default", "$defs")
)

_Check = Callable[[Any, Any, Mapping[str, Any]], bool]


def _type_holds(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    wanted = expected if isinstance(expected, list) else [expected]
    return any(_is_type(name, value) for name in wanted)


def _is_type(name: str, value: Any) -> bool:
    # Exact classes: a float that jsonschema takes for an integer, or any other number class,
    # is left to jsonschema.
    kind = type(value)
    return {
        "object": kind is dict,
        "array": kind is list,
        "string": kind is str,
        "integer": kind is int,
        "number": kind in (int, float),
        "boolean": kind is bool,
        "null": value is None,
    }.get(name, False)


def _enum_holds(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    # jsonschema tells True from 1 and takes 1.0 for 1; a same-class match is equal for both.
    return type(value) in (str, int, bool, type(None)) and any(
        type(option) is type(value) and option == value for option in expected
    )


def _pattern_holds(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    return not isinstance(value, str) or re.search(expected, value) is not None


def _min_length_holds(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    return not isinstance(value, str) or len(value) >= expected


def _minimum_holds(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    return type(value) not in (int, float) or value >= expected


def _maximum_holds(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    return type(value) not in (int, float) or value <= expected


def _required_holds(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    return not isinstance(value, dict) or all(key in value for key in expected)


def _properties_hold(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    if not isinstance(value, dict):
        return True
    return all(_holds(schema, value[key], root) for key, schema in expected.items() if key in value)


def _items_hold(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    return not isinstance(value, list) or all(_holds(expected, item, root) for item in value)


def _unique_holds(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    if not expected or not isinstance(value, list):
        return True
    return all(type(item) is str for item in value) and len(set(value)) == len(value)


def _all_of_holds(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    return all(_holds(schema, value, root) for schema in expected)


def _any_of_holds(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    return any(_holds(schema, value, root) for schema in expected)


def _ref_holds(expected: Any, value: Any, root: Mapping[str, Any]) -> bool:
    prefix = "#/$defs/"
    if not isinstance(expected, str) or not expected.startswith(prefix):
        return False
    name = expected[len(prefix) :]
    if not name or "/" in name or "~" in name:
        return False
    definitions = root.get("$defs", {})
    return name in definitions and _holds(definitions[name], value, root)


#: The keywords :func:`surely_valid` models, each with its test of one value.
KEYWORDS: Mapping[str, _Check] = {
    "type": _type_holds,
    "enum": _enum_holds,
    "pattern": _pattern_holds,
    "minLength": _min_length_holds,
    "minimum": _minimum_holds,
    "maximum": _maximum_holds,
    "required": _required_holds,
    "properties": _properties_hold,
    "items": _items_hold,
    "uniqueItems": _unique_holds,
    "allOf": _all_of_holds,
    "anyOf": _any_of_holds,
    "$ref": _ref_holds,
}


def _additional_hold(schema: Mapping[str, Any], value: Any, root: Mapping[str, Any]) -> bool:
    if "additionalProperties" not in schema or not isinstance(value, dict):
        return True
    if "patternProperties" in schema:
        return False
    named = schema.get("properties", {})
    extra = [key for key in value if key not in named]
    return all(_holds(schema["additionalProperties"], value[key], root) for key in extra)


def _holds(schema: Any, value: Any, root: Mapping[str, Any]) -> bool:
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict):
        return False
    for keyword, expected in schema.items():
        if keyword in ANNOTATIONS or keyword == "additionalProperties":
            continue
        check = KEYWORDS.get(keyword)
        if check is None or not check(expected, value, root):
            return False
    return _additional_hold(schema, value, root)


def surely_valid(schema: Mapping[str, Any], value: Any) -> bool:
    """True only when ``value`` satisfies ``schema`` (Draft 2020-12, the keywords in
    :data:`KEYWORDS`); False when it does not, or when this check cannot tell."""
    try:
        return _holds(schema, value, schema)
    except RecursionError:  # a reference cycle, or a value nested past the interpreter's limit
        return False
