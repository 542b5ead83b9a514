"""Tool definitions: derived from Python functions, validated against seed 004's format.

``definition_from_function`` reads a function's signature, type hints and
docstring (Google ``Args:`` or reST ``:param x:`` style) and produces a
:class:`ToolDefinition` whose ``parameters`` is a JSON Schema object.
``definition_errors`` checks a definition against ``schemas/tool.schema.json``
and checks its parameter schema against the JSON Schema meta-schema.
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from typing import Any

from builder.skill.spec import ToolDefinition
from mindrian.errors import MindrianError

__all__ = [
    "UnsupportedSignature",
    "definition_errors",
    "definition_from_function",
    "definition_to_plain",
    "parse_docstring",
    "tool_schema",
]

_JSON_TYPES: Mapping[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
}
_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Returns|Return|Raises|Yields|Examples?|Notes?)\s*:\s*$"
)
_GOOGLE_ARG = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^\s*:param\s+(?:[^:\s]+\s+)?(\w+)\s*:\s*(.*)$")


class UnsupportedSignature(MindrianError, TypeError):
    """The function cannot be described as a JSON-Schema tool (says which parameter and why)."""


@functools.cache
def tool_schema() -> Mapping[str, Any]:
    """The JSON Schema of a tool definition (``builder/schemas/tool.schema.json``)."""
    text = (
        resources.files("builder").joinpath("schemas/tool.schema.json").read_text(encoding="utf-8")
    )
    schema: Mapping[str, Any] = json.loads(text)
    return schema


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a docstring into its summary text and per-parameter descriptions."""
    lines = inspect.cleandoc(doc or "").splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section, current = "", ""
    for line in lines:
        rest = _REST_PARAM.match(line)
        header = _SECTION.match(line)
        if rest:
            section, current = "rest", rest.group(1)
            params[current] = rest.group(2).strip()
        elif header:
            section, current = header.group(1).lower(), ""
        elif section in ("args", "arguments", "parameters", "params") and (
            arg := _GOOGLE_ARG.match(line)
        ):
            if current and line.startswith((" " * 8, "\t\t")):
                params[current] += " " + line.strip()
            else:
                current = arg.group(1)
                params[current] = arg.group(2).strip()
        elif (
            current
            and line.strip()
            and section in ("rest", "args", "arguments", "parameters", "params")
        ):
            params[current] = (params[current] + " " + line.strip()).strip()
        elif not section:
            summary.append(line)
    return " ".join(" ".join(summary).split()), params


def _schema_for(annotation: Any, where: str) -> dict[str, Any]:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is Any:
        return {}
    if annotation is type(None):
        return {"type": "null"}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values = [m.value for m in annotation]
        return {"enum": values}
    if annotation in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation]}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        schemas = [_schema_for(a, where) for a in options]
        if len(options) < len(args):
            schemas.append({"type": "null"})
        return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    if origin in (
        list,
        tuple,
        set,
        frozenset,
        Sequence,
        typing.Sequence,
    ) or annotation in (list, tuple):
        item = args[0] if args else Any
        if origin is tuple and len(args) != 2 and args:
            raise UnsupportedSignature(
                f"{where}: fixed-length tuples are not supported; use tuple[T, ...]"
            )
        return {"type": "array", "items": _schema_for(item, where)}
    if origin in (dict, Mapping, typing.Mapping) or annotation is dict:
        key, value = args or (str, Any)
        if key is not str:
            raise UnsupportedSignature(f"{where}: mapping keys must be str, not {key!r}")
        return {"type": "object", "additionalProperties": _schema_for(value, where)}
    raise UnsupportedSignature(f"{where}: type {annotation!r} has no JSON Schema form")


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    json.dumps(value)  # raises TypeError for values a model could not send back
    return value


def definition_from_function(
    function: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
) -> ToolDefinition:
    """Describe ``function`` as a tool; raises :class:`UnsupportedSignature` with the reason."""
    qualname = getattr(function, "__qualname__", repr(function))
    try:
        hints = typing.get_type_hints(function)
    except (NameError, TypeError) as exc:
        raise UnsupportedSignature(f"{qualname}: cannot resolve type hints ({exc})") from exc
    summary, docs = parse_docstring(inspect.getdoc(function))
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in inspect.signature(function).parameters.values():
        where = f"{qualname}({param.name})"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise UnsupportedSignature(f"{where}: *args/**kwargs cannot be described to a model")
        if param.name not in hints:
            raise UnsupportedSignature(f"{where}: parameter has no type hint")
        annotation = hints[param.name]
        if param.default is None and typing.get_origin(annotation) in (
            typing.Union,
            types.UnionType,
        ):
            # The member list is only known at run time, which the ``X | Y`` syntax cannot spell.
            annotation = typing.Union[  # noqa: UP007
                tuple(a for a in typing.get_args(annotation) if a is not type(None))
            ]
        schema = _schema_for(annotation, where)
        if param.name in docs:
            schema["description"] = docs[param.name]
        if param.default is param.empty:
            required.append(param.name)
        elif param.default is not None:
            try:
                schema["default"] = _json_default(param.default)
            except TypeError as exc:
                raise UnsupportedSignature(
                    f"{where}: default {param.default!r} is not JSON"
                ) from exc
        properties[param.name] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    text = (description or summary).strip()
    if not text:
        raise UnsupportedSignature(
            f"{qualname}: no description (give the tool one or write a docstring)"
        )
    return ToolDefinition(name=name or function.__name__, description=text, parameters=parameters)


def definition_to_plain(definition: ToolDefinition) -> dict[str, Any]:
    """The definition as the JSON object a model API receives."""
    return {
        "name": definition.name,
        "description": definition.description,
        "parameters": json.loads(json.dumps(definition.parameters)),
    }


def definition_errors(plain: Mapping[str, Any]) -> tuple[str, ...]:
    """Every way ``plain`` breaks the tool-definition format, as readable messages (empty when
    valid)."""
    import jsonschema  # imported here: a cached build loads this module without validating anything

    validator = jsonschema.Draft202012Validator(tool_schema())
    errors = [
        f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}"
        for e in sorted(validator.iter_errors(plain), key=lambda e: list(map(str, e.absolute_path)))
    ]
    arguments = plain.get("parameters", plain.get("input_schema"))
    if isinstance(arguments, Mapping):
        try:
            jsonschema.Draft202012Validator.check_schema(arguments)
        except jsonschema.SchemaError as exc:
            errors.append(f"parameters: not a valid JSON Schema: {exc.message}")
    return tuple(errors)
