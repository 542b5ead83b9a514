"""An output model's JSON schema is built once per class; every caller gets its own copy."""

from __future__ import annotations

from pydantic import BaseModel
from pydantic.json_schema import model_json_schema

from mindrian.agents.output import HandoffOutput, scored_output


def _scored() -> type[HandoffOutput]:
    dimensions = [{"name": "problem", "minimum": 0, "maximum": 25, "description": "How real."}]
    model: type[HandoffOutput] = scored_output("Pws", dimensions, total=True)
    return model


def test_the_cached_schema_is_pydantics() -> None:
    for model in (HandoffOutput, _scored()):
        for mode in ("validation", "serialization"):
            expected = model_json_schema(model, mode=mode)
            assert model.model_json_schema(mode=mode) == expected
            assert model.model_json_schema(mode=mode) == expected  # from the cache


def test_a_caller_changing_its_copy_changes_nobody_elses() -> None:
    first = HandoffOutput.model_json_schema()
    first["properties"]["output"]["description"] = "changed"
    first["required"].append("scores")

    again = HandoffOutput.model_json_schema()
    assert again["properties"]["output"]["description"] == "The full answer, in markdown."
    assert again == model_json_schema(HandoffOutput)


def test_each_class_has_its_own_schema() -> None:
    scored = _scored()
    assert "PwsScores" in str(scored.model_json_schema())
    assert "PwsScores" not in str(HandoffOutput.model_json_schema())
    assert issubclass(scored, BaseModel)
