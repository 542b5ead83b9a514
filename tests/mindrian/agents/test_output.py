"""The answer's ``data``: a model built from the schema the builder inferred from a skill's
output example, checked when an operator answers through a real Agno loop."""

from __future__ import annotations

from typing import Any

import pytest

from mindrian.agents import OperatorAgent
from mindrian.agents.output import data_model, data_sample, scored_output, whole_answer
from mindrian.testing import ScriptedModel

#: What phase 3 infers from ``{"success": true, "url": "…", "shots": [{"w": 1, "h": 2.5}]}``
#: beside ``{"success": false, "error": "…", "note": null}``.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "success": {"type": "boolean"},
        "url": {"type": "string"},
        "shots": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"w": {"type": "integer"}, "h": {"type": "number"}},
                "required": ["w", "h"],
            },
        },
        "error": {"type": "string"},
        "note": {},
        "retry after": {"type": ["integer", "null"]},
    },
    "required": ["success"],
}

EXAMPLE = {"success": True, "url": "https://example.com", "shots": [{"w": 1, "h": 2.5}]}


def answer(data: Any) -> dict[str, Any]:
    return {"output": "# Done", "confidence": 0.5, "data": data}


@pytest.fixture
def browser(agent_class):
    return agent_class(
        OperatorAgent,
        agent_id="browser",
        instructions="Report what the script printed.",
        output_schema=scored_output("Browser", [], data=SCHEMA),
    )


def test_an_answer_shaped_like_the_example_reaches_the_result(browser, run) -> None:
    agent = browser(model=ScriptedModel(answer(EXAMPLE)))
    result = run(agent.process_handoff(agent.create_handoff_context("Open the page")))
    assert result.success, result.error
    assert result.data == {
        **EXAMPLE,
        "shots": [{"w": 1, "h": 2.5}],
        "error": None,
        "note": None,
        "retry after": None,
    }


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"url": "x"}, "data.success: Field required"),
        ({"success": "true"}, "data.success: Input should be a valid boolean"),
        ({"success": True, "shots": [{"w": "1", "h": 2}]}, "data.shots.0.w: Input should be"),
        ({"success": True, "extra": 1}, "data.extra: Extra inputs are not permitted"),
        ({"success": True, "retry after": 1.5}, "data.retry after: Input should be a valid"),
        ("ok", "data: Input should be"),
    ],
)
def test_an_answer_that_breaks_the_example_s_shape_is_refused(browser, run, data, problem) -> None:
    agent = browser(model=ScriptedModel(answer(data)))
    result = run(agent.process_handoff(agent.create_handoff_context("Open the page")))
    assert not result.success
    assert "output did not match schema" in (result.error or "")
    assert problem in (result.error or "")


def test_an_answer_without_data_is_refused(browser, run) -> None:
    agent = browser(model=ScriptedModel({"output": "# Done"}))
    result = run(agent.process_handoff(agent.create_handoff_context("Open the page")))
    assert not result.success
    assert "data: Field required" in (result.error or "")


def test_the_model_is_sent_every_key_of_the_example() -> None:
    schema = scored_output("Browser", [], data=SCHEMA).model_json_schema()
    data = schema["$defs"]["BrowserData"]
    assert list(data["properties"]) == list(SCHEMA["properties"])
    assert data["required"] == ["success"]
    assert data["additionalProperties"] is False
    assert "data" in schema["required"]


def test_the_least_sample_is_valid_and_holds_the_required_keys_only() -> None:
    assert data_sample(SCHEMA) == {"success": False}
    data_model("Probe", SCHEMA).model_validate(data_sample(SCHEMA))
    nested = {"type": "object", "properties": {"o": SCHEMA["properties"]["shots"]["items"]}}
    nested["required"] = ["o"]
    assert data_sample(nested) == {"o": {"w": 0, "h": 0.0}}


@pytest.mark.parametrize(
    ("example", "whole"),
    [
        ({"output": "x", "confidence": 0.5}, True),
        ({"output": "x", "data": {}}, True),
        ({"output": "/path/to/page.png", "compressed": True}, False),
        ({"success": True}, False),
    ],
)
def test_a_whole_answer_holds_output_and_handoff_fields_only(example, whole) -> None:
    assert whole_answer(example) is whole
