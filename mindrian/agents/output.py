"""Output models whose JSON schema names every score of the methodology.

The schema Agno sends the model is the output model's JSON schema, so a score
the model must give has to be a declared field with its range and description
there, not a key of an open object. :func:`scored_output` builds that model
from a spec's score dimensions: one ``float`` field per dimension with
``ge``/``le`` and the skill's description, no other key accepted, and, when the
skill turns a total into a verdict, a ``total`` field that is checked against
the sum of the dimensions (or filled with it when the model leaves it out).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from copy import deepcopy
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator
from pydantic.json_schema import (
    DEFAULT_REF_TEMPLATE,
    GenerateJsonSchema,
    JsonSchemaMode,
    model_json_schema,
)

__all__ = ["TOTAL", "ScoresBase", "scored_output"]


class HandoffOutput(BaseModel):
    """The content fields of a HandoffResult, as the model must return them."""

    model_config = ConfigDict(frozen=True)

    output: str = Field(description="The full answer, in markdown.")
    key_findings: list[str] = Field(default_factory=list, description="Main findings.")
    recommendations: list[str] = Field(default_factory=list, description="Recommended actions.")
    confidence: float = Field(
        default=0.0, ge=0.0, le=1.0, description="Confidence in the answer, 0.0-1.0."
    )
    scores: dict[str, float] = Field(
        default_factory=dict, description="Named scores of the methodology."
    )
    suggested_next_agents: list[str] = Field(
        default_factory=list, description="Ids of agents worth consulting next."
    )
    open_questions: list[str] = Field(
        default_factory=list, description="Questions the work left open."
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
        return deepcopy(built)


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


def scored_output(
    name: str, dimensions: Sequence[Mapping[str, Any]], *, total: bool = False
) -> type[HandoffOutput]:
    """A :class:`HandoffOutput` subclass ``<name>Output`` whose ``scores`` are declared fields.

    ``dimensions`` are spec score mappings (``name``, ``minimum``, ``maximum``,
    ``description``); ``total`` adds the derived ``total`` score. Without
    dimensions ``scores`` must be empty.
    """
    scores = _scores_model(name, dimensions, total and bool(dimensions))
    what = "The methodology's scores." if dimensions else "No scores: leave this empty."
    model = create_model(
        f"{name}Output",
        __base__=HandoffOutput,
        __doc__=f"The HandoffResult fields, with {name}'s scores declared one by one.",
        scores=(scores, Field(default_factory=scores, description=what)),
    )
    return model
