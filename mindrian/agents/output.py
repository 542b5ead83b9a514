"""Output models whose JSON schema names every score of the methodology.

The schema Agno sends the model is the output model's JSON schema, so a score
the model must give has to be a declared field with its range and description
there, not a key of an open object. :func:`scored_output` builds that model
from a spec's score dimensions: one ``float`` field per dimension with
``ge``/``le`` and the skill's description, no other key accepted, and, when the
skill turns a total into a verdict, a ``total`` field that is checked against
the sum of the dimensions (or filled with it when the model leaves it out).

A skill whose output template shows the JSON it answers with gets a ``data``
field too: :func:`data_model` turns the JSON Schema the builder inferred from
that example (``handoff.returns.data_schema`` of ``spec.yaml``) into a strict
model, so an answer shaped like the example validates and one that is not is
refused.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator
from pydantic.json_schema import (
    DEFAULT_REF_TEMPLATE,
    GenerateJsonSchema,
    JsonSchemaMode,
    model_json_schema,
)

__all__ = [
    "TOTAL",
    "DataBase",
    "ScoresBase",
    "data_model",
    "data_sample",
    "scored_output",
    "whole_answer",
]


def _no_items() -> list[str]:
    """The default of a list field: a new empty list.

    A Python function, not ``list``: pydantic reads each default factory's
    signature whenever it makes a model, and ``list``'s is parsed from its text
    signature (about 60 µs a field: a third of making a package's output model).
    """
    return []


class HandoffOutput(BaseModel):
    """The content fields of a HandoffResult, as the model must return them."""

    model_config = ConfigDict(frozen=True)

    output: str = Field(description="The full answer, in markdown.")
    key_findings: list[str] = Field(default_factory=_no_items, description="Main findings.")
    recommendations: list[str] = Field(
        default_factory=_no_items, description="Recommended actions."
    )
    confidence: float = Field(
        default=0.0, ge=0.0, le=1.0, description="Confidence in the answer, 0.0-1.0."
    )
    scores: dict[str, float] = Field(
        default_factory=dict, description="Named scores of the methodology."
    )
    suggested_next_agents: list[str] = Field(
        default_factory=_no_items, description="Ids of agents worth consulting next."
    )
    open_questions: list[str] = Field(
        default_factory=_no_items, description="Questions the work left open."
    )
    needs_human_input: bool = Field(
        default=False, description="Whether a person must answer before work goes on."
    )
    human_input_reason: str = Field(default="", description="Why a person is needed.")

    @classmethod
    def model_json_schema(
        cls,
        by_alias: bool | None = None,
        ref_template: str = DEFAULT_REF_TEMPLATE,
        schema_generator: type[GenerateJsonSchema] = GenerateJsonSchema,
        mode: JsonSchemaMode = "validation",
        *,
        union_format: Literal["any_of", "primitive_type_array"] = "any_of",
    ) -> dict[str, Any]:
        """Pydantic's JSON schema of the class, built once per class and arguments.

        Agno asks for it on every run (to check it and to write the JSON prompt),
        and building it was about half of a scripted operator run; a class's
        schema never changes. Each caller gets its own copy to change.
        """
        built = _json_schema(cls, by_alias, ref_template, schema_generator, mode, union_format)
        copy: dict[str, Any] = _copied(built)
        return copy


def whole_answer(example: Mapping[str, Any]) -> bool:
    """Whether a skill's JSON example is a whole answer (an ``output`` and HandoffOutput fields);
    any other example shows the ``scores`` object or, without scores, the answer's ``data``."""
    return "output" in example and set(example) <= {*HandoffOutput.model_fields, "data"}


def _copied(value: Any) -> Any:
    """A copy of JSON data (objects and arrays copied, the rest immutable): what ``deepcopy``
    gives for a third of its time (Agno asks on every run)."""
    if type(value) is dict:
        return {key: _copied(item) for key, item in value.items()}
    if type(value) is list:
        return [_copied(item) for item in value]
    return value


#: Built JSON schemas by (class, arguments of ``model_json_schema``); classes never change.
_SCHEMAS: dict[tuple[Any, ...], dict[str, Any]] = {}


def _json_schema(
    cls: type[BaseModel],
    by_alias: bool | None,
    ref_template: str,
    schema_generator: type[GenerateJsonSchema],
    mode: JsonSchemaMode,
    union_format: Literal["any_of", "primitive_type_array"],
) -> dict[str, Any]:
    key = (cls, by_alias, ref_template, schema_generator, mode, union_format)
    if key not in _SCHEMAS:
        _SCHEMAS[key] = model_json_schema(
            cls,
            by_alias=by_alias,
            ref_template=ref_template,
            union_format=union_format,
            schema_generator=schema_generator,
            mode=mode,
        )
    return _SCHEMAS[key]


#: Key of the derived score: the sum of the dimensions.
TOTAL = "total"
#: How far a stated total may be from the sum before it counts as wrong (float rounding).
_TOLERANCE = 1e-6


class ScoresBase(BaseModel):
    """The named scores of one answer; a subclass declares one field per dimension."""

    model_config = ConfigDict(extra="forbid", serialize_by_alias=True, validate_by_name=True)

    @model_validator(mode="after")
    def _total_is_the_sum(self) -> ScoresBase:
        fields = type(self).model_fields
        if TOTAL not in fields:
            return self
        parts = math.fsum(getattr(self, n) for n in fields if n != TOTAL)
        stated = getattr(self, TOTAL)
        if stated is None:
            # The schema lets the model leave the total out; it is then what the skill says it is.
            object.__setattr__(self, TOTAL, parts)
        elif abs(stated - parts) > _TOLERANCE:
            raise ValueError(f"{TOTAL} is {stated:g} but the scores add up to {parts:g}")
        return self


def _field_name(name: str, taken: set[str]) -> str:
    # Score names are skill text; the Python attribute is a safe spelling, the alias the real key.
    base = "".join(c if c.isalnum() else "_" for c in name).strip("_") or "score"
    base = base if base[0].isalpha() else f"s_{base}"
    candidate, number = base, 2
    while candidate in taken or candidate in BaseModel.__dict__:
        candidate, number = f"{base}_{number}", number + 1
    taken.add(candidate)
    return candidate


def _scores_model(name: str, dimensions: Sequence[Mapping[str, Any]], total: bool) -> type:
    taken: set[str] = {TOTAL} if total else set()
    fields: dict[str, Any] = {}
    for d in dimensions:
        low, high = float(d["minimum"]), float(d["maximum"])
        described = str(d.get("description") or d["name"])
        fields[_field_name(str(d["name"]), taken)] = (
            float,
            Field(ge=low, le=high, alias=str(d["name"]), description=described),
        )
    if total:
        low = math.fsum(float(d["minimum"]) for d in dimensions)
        high = math.fsum(float(d["maximum"]) for d in dimensions)
        fields[TOTAL] = (
            float | None,
            Field(
                default=None,
                ge=low,
                le=high,
                description=f"Sum of the {len(dimensions)} scores above ({low:g}-{high:g}).",
            ),
        )
    return cast(type, create_model(f"{name}Scores", __base__=ScoresBase, **fields))


class DataBase(BaseModel):
    """An object of a skill's output example; a subclass declares one field per key."""

    # Strict: the example typed each value, and lax parsing would take "5" for 5 or "yes" for True.
    model_config = ConfigDict(
        extra="forbid", strict=True, serialize_by_alias=True, validate_by_name=True
    )


#: JSON Schema type names and the Python types the model checks them with.
_JSON_TYPES: Mapping[str, Any] = {
    "string": str,
    "boolean": bool,
    "integer": int,
    "number": float,
}


def _camel(key: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in _field_name(key, set()).split("_") if w)


def _annotation(name: str, schema: Mapping[str, Any]) -> Any:
    """The Python type of one value of the inferred JSON Schema subset (see :func:`data_model`)."""
    kinds = schema.get("type", ())
    kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)
    concrete = [k for k in kinds if k != "null"]
    if not concrete:
        return Any  # no type in the example (a null, an empty list's item): any JSON value
    (kind,) = concrete  # the builder never infers a union of two concrete types
    if kind == "object":
        base: Any = data_model(name, schema)
    elif kind == "array":
        base = list[_annotation(f"{name}Item", schema.get("items") or {})]  # type: ignore[misc]
    else:
        base = _JSON_TYPES[kind]
    return base | None if "null" in kinds else base


def data_model(name: str, schema: Mapping[str, Any]) -> type[DataBase]:
    """A :class:`DataBase` subclass ``name`` for an ``object`` JSON Schema.

    The schema is the subset the builder infers from an example: ``type`` (one
    of string, boolean, integer, number, object, array, optionally with
    ``null``; absent for any value), ``properties`` and ``required`` of an
    object, ``items`` of an array. A property that is not required may be left
    out (it is then null).
    """
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    taken: set[str] = set()
    fields: dict[str, Any] = {}
    for key, value in properties.items():
        annotation = _annotation(f"{name}{_camel(key)}", value)
        if key in required:
            fields[_field_name(key, taken)] = (annotation, Field(alias=key))
        else:
            fields[_field_name(key, taken)] = (annotation | None, Field(default=None, alias=key))
    return cast(type[DataBase], create_model(name, __base__=DataBase, **fields))


#: The least value of each JSON Schema type, for :func:`data_sample`.
_LEAST: Mapping[str, Any] = {"string": "", "boolean": False, "integer": 0, "number": 0.0}


def data_sample(schema: Mapping[str, Any]) -> Any:
    """The smallest value :func:`data_model` accepts for ``schema``: required keys only, each at
    its type's least value (``""``, ``False``, ``0``, an empty list; null where any value goes).

    A scripted answer needs one when the skill's own example is not at hand (phase 7's probe).
    """
    kinds = schema.get("type", ())
    kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)
    kind = next((k for k in kinds if k != "null"), None)
    if kind == "object":
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required = schema.get("required") or ()
        return {k: data_sample(v) for k, v in properties.items() if k in required}
    if kind == "array":
        return []
    return _LEAST.get(kind or "")


def scored_output(
    name: str,
    dimensions: Sequence[Mapping[str, Any]],
    *,
    total: bool = False,
    data: Mapping[str, Any] | None = None,
) -> type[HandoffOutput]:
    """A :class:`HandoffOutput` subclass ``<name>Output`` whose ``scores`` are declared fields.

    ``dimensions`` are spec score mappings (``name``, ``minimum``, ``maximum``,
    ``description``); ``total`` adds the derived ``total`` score. Without
    dimensions ``scores`` must be empty. ``data``, an ``object`` JSON Schema
    inferred from the skill's output example, adds a required ``data`` field of
    that shape (:func:`data_model`).
    """
    scores = _scores_model(name, dimensions, total and bool(dimensions))
    what = "The methodology's scores." if dimensions else "No scores: leave this empty."
    extra: dict[str, Any] = {}
    if data:
        extra["data"] = (
            data_model(f"{name}Data", data),
            Field(description="The answer's data, shaped as the skill's output example."),
        )
    model = create_model(
        f"{name}Output",
        __base__=HandoffOutput,
        __doc__=f"The HandoffResult fields, with {name}'s scores declared one by one.",
        scores=(scores, Field(default_factory=scores, description=what)),
        **extra,
    )
    return model
