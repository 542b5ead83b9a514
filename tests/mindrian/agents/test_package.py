"""The runtime side of a generated package: loader, model settings, scored outputs, the handoff
contract, the collaborative synthesiser, return behaviour in the manager, and the prompt view."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from pydantic import ValidationError

from mindrian.agents import CollaborativeAgent, OperatorAgent, RoleAgent
from mindrian.agents.output import scored_output
from mindrian.agents.package import AgentPackage
from mindrian.handoff import HandoffManager, HandoffResult, HandoffType, ReturnBehavior
from mindrian.providers import (
    ModelSettings,
    ModelSettingsError,
    configured_model,
    setting_values,
)
from mindrian.testing import ScriptedModel, Step
from mindrian.testing.contract import clear_problem, sent_schema, system_text
from mindrian.testing.prompts import render_prompts, system_prompts


def run(awaitable: Any) -> Any:
    return asyncio.run(awaitable)


# --- model settings -------------------------------------------------------------------


def test_claude_gets_temperature_and_response_cap() -> None:
    model = configured_model("anthropic:claude-sonnet-4-5", ModelSettings(0.3, 4096, None))
    assert (model.temperature, model.max_tokens, model.thinking) == (0.3, 4096, None)


def test_claude_gets_the_thinking_budget_in_its_own_form() -> None:
    model = configured_model("anthropic:claude-opus-4-1", ModelSettings(None, 16000, 8000))
    assert model.max_tokens == 16000
    assert model.thinking == {"type": "enabled", "budget_tokens": 8000}


def test_a_provider_check_failing_is_a_settings_error() -> None:
    # Agno's Claude refuses thinking on models without it; that must not wait for a run.
    with pytest.raises(ValueError, match="does not support extended thinking"):
        configured_model("anthropic:claude-3-haiku-20240307", ModelSettings(None, 2048, 1024))


def test_a_setting_the_provider_has_no_field_for_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ScriptedModel, like a provider without sampling options, has none of the three fields.
    assert setting_values(ScriptedModel, ModelSettings(0.5, 100, 10)) == (
        {},
        ["temperature", "max_tokens", "thinking_budget"],
    )
    monkeypatch.setattr("agno.models.utils.get_model", lambda ref: ScriptedModel())
    with pytest.raises(ModelSettingsError, match="cannot take temperature"):
        configured_model("scripted:any", ModelSettings(temperature=0.5))
    assert isinstance(configured_model("scripted:any", ModelSettings()), ScriptedModel)


# --- scored outputs -------------------------------------------------------------------

PILLARS = [
    {"name": n, "minimum": 0, "maximum": 25, "description": f"How strong is the {n} pillar?"}
    for n in ("problem", "solution", "business", "people")
]


def test_each_score_is_a_declared_field_with_range_and_description() -> None:
    output = scored_output("Pws", PILLARS, total=True)
    scores = output.model_json_schema()["$defs"]["PwsScores"]
    assert scores["required"] == ["problem", "solution", "business", "people"]
    assert scores["additionalProperties"] is False
    for pillar in PILLARS:
        declared = scores["properties"][pillar["name"]]
        assert (declared["minimum"], declared["maximum"]) == (0, 25)
        assert declared["description"] == pillar["description"]
    total = scores["properties"]["total"]["anyOf"][0]
    assert (total["minimum"], total["maximum"]) == (0, 100)


def test_the_total_is_checked_or_computed() -> None:
    output = scored_output("Pws", PILLARS, total=True)
    given = {"problem": 18, "solution": 14, "business": 11, "people": 20}
    stated = output.model_validate({"output": "x", "scores": {**given, "total": 63}})
    computed = output.model_validate({"output": "x", "scores": given})
    assert stated.model_dump()["scores"]["total"] == computed.model_dump()["scores"]["total"] == 63
    with pytest.raises(ValidationError, match="total is 64 but the scores add up to 63"):
        output.model_validate({"output": "x", "scores": {**given, "total": 64}})


@pytest.mark.parametrize(
    "scores",
    [
        {"problem": 1, "solution": 2, "business": 3},
        {"problem": 1, "solution": 2, "business": 3, "people": 26},
        {"problem": 1, "solution": 2, "business": 3, "people": 4, "extra": 1},
    ],
)
def test_missing_out_of_range_or_unknown_scores_are_refused(scores: dict[str, int]) -> None:
    with pytest.raises(ValidationError):
        scored_output("Pws", PILLARS).model_validate({"output": "x", "scores": scores})


def test_score_names_that_are_not_identifiers_keep_their_key() -> None:
    output = scored_output("Odd", [{"name": "go/no-go", "minimum": 0, "maximum": 1}])
    answer = output.model_validate({"output": "x", "scores": {"go/no-go": 1}})
    assert answer.model_dump(mode="json")["scores"] == {"go/no-go": 1.0}


def test_without_declared_scores_only_an_empty_object_passes() -> None:
    output = scored_output("Plain", [])
    assert output.model_validate({"output": "x"}).model_dump()["scores"] == {}
    with pytest.raises(ValidationError):
        output.model_validate({"output": "x", "scores": {"made_up": 1}})


# --- the handoff contract -------------------------------------------------------------


class StrictAgent(OperatorAgent):
    agent_id: ClassVar[str] = "strict"
    description: ClassVar[str] = "Checks strictly."
    min_clarity: ClassVar[float] = 0.6
    allowed_callers: ClassVar[frozenset[str]] = frozenset({"larry"})


ANSWER = {"output": "Done.", "key_findings": ["one"], "confidence": 0.5}


def strict_handoff(model: ScriptedModel, **options: Any) -> HandoffResult:
    agent = StrictAgent(model=model)
    options.setdefault("from_agent", "larry")
    options.setdefault("problem_clarity", clear_problem())
    return run(agent.process_handoff(agent.create_handoff_context("Check it", **options)))


def test_too_little_clarity_asks_for_clarification_without_calling_the_model() -> None:
    model = ScriptedModel(Step.structured(ANSWER))
    clarity = {"what": "x", "what_clarity": 0.9, "who_clarity": 0.3, "success_clarity": 0.2}
    result = strict_handoff(model, problem_clarity=clarity)
    assert (result.success, result.error_code, result.needs_human_input) == (
        False,
        "needs_clarification",
        True,
    )
    assert "who (0.3), success (0.2)" in (result.error or "")
    assert "what (" not in (result.error or "")
    assert result.open_questions == (
        "Who has this problem? (clarity 0.3)",
        "What does success look like? (clarity 0.2)",
    )
    assert not model.calls


def test_a_caller_outside_the_contract_is_refused() -> None:
    model = ScriptedModel(Step.structured(ANSWER))
    result = strict_handoff(model, from_agent="mallory")
    assert result.error_code == "caller_refused" and "mallory" in (result.error or "")
    assert not model.calls


def test_a_handoff_type_outside_the_contract_is_refused() -> None:
    result = strict_handoff(ScriptedModel(), handoff_type=HandoffType.TRANSFER)
    assert result.error_code == "handoff_type_refused"
    assert "accepts: delegate" in (result.error or "")


def test_a_handoff_inside_the_contract_runs() -> None:
    result = strict_handoff(ScriptedModel(Step.structured(ANSWER)))
    assert result.success, result.error
    assert result.error_code is None and result.key_findings == ("one",)


# --- return behaviour in the manager --------------------------------------------------


class Declaring(OperatorAgent):
    agent_id: ClassVar[str] = "declaring"


class Summariser(RoleAgent):
    agent_id: ClassVar[str] = "caller"


@pytest.mark.parametrize(
    ("behavior", "folded"), [(ReturnBehavior.SYNTHESIZE, True), (ReturnBehavior.PASSTHROUGH, False)]
)
def test_the_manager_delivers_a_result_as_its_agent_declares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behavior: ReturnBehavior, folded: bool
) -> None:
    monkeypatch.setattr(Declaring, "return_behavior", behavior)
    caller_model = ScriptedModel("The caller's synthesis.")
    manager = HandoffManager()
    manager.register_agent("declaring", Declaring(model=ScriptedModel(Step.structured(ANSWER))))
    manager.register_agent("caller", Summariser(model=caller_model, state_dir=tmp_path))
    context = manager.create_delegation(from_agent="caller", to_agent="declaring", task="Do it")
    result = run(manager.execute(context))
    assert result.success, result.error
    if folded:
        assert result.output == "The caller's synthesis."
        assert "Done." in caller_model.calls[0].last_user_message
    else:
        assert result.output == "Done." and not caller_model.calls


# --- collaborative synthesiser --------------------------------------------------------


class Council(CollaborativeAgent):
    agent_id: ClassVar[str] = "council"
    description: ClassVar[str] = "A small council."
    instructions: ClassVar[str] = "COUNCIL METHOD: weigh every view."
    perspectives: ClassVar[tuple[tuple[str, str], ...]] = (
        ("Optimist", "OPTIMIST: find the upside."),
        ("Pessimist", "PESSIMIST: find the risk."),
        ("Chair", "CHAIR: summarise the others and decide."),
    )
    synthesizer: ClassVar[str] = "Chair"
    output_schema: ClassVar[Any] = scored_output("Council", [])


def test_the_named_synthesiser_leads_and_writes_the_structured_synthesis() -> None:
    leader = ScriptedModel(
        Step.tool_call("delegate_task_to_members", task="Decide"), Step.structured(ANSWER)
    )
    members = {n: ScriptedModel(f"{n} position") for n in ("Optimist", "Pessimist")}
    agent = Council(model=leader, part_models=members)
    context = agent.create_handoff_context("Decide", problem_clarity=clear_problem())
    result = run(agent.process_handoff(context))
    assert result.success, result.error
    assert result.key_findings == ("one",) and result.output.startswith("Done.")
    led = system_text(leader.calls[0])
    assert "CHAIR: summarise the others" in led and "COUNCIL METHOD" in led
    assert "Optimist position" in leader.calls[-1].contents("tool")[-1]
    for name, model in members.items():
        told = system_text(model.calls[0])
        assert "COUNCIL METHOD" in told and "A small council." in told
        assert f"{name.upper()}:" in told and "CHAIR" not in told


def test_a_synthesiser_that_is_no_perspective_is_refused() -> None:
    class Broken(Council):
        synthesizer: ClassVar[str] = "Nobody"

    with pytest.raises(TypeError, match="'Nobody' is not one of the perspectives"):
        _ = Broken(model=ScriptedModel()).agent


# --- the package loader and the prompt view -------------------------------------------


def write_package(folder: Path, **spec_changes: Any) -> Path:
    spec = {
        "id": "tiny-check",
        "identifier": "tiny_check",
        "name": "tiny-check",
        "description": "Checks tiny things.",
        "type": "operator",
        "model": {"string": "anthropic:claude-sonnet-4-5", "temperature": 0.2, "max_tokens": 999},
        "scores": [{"name": "size", "minimum": 0, "maximum": 3, "description": "How tiny?"}],
        "score_bands": [],
        "handoff": {
            "receives": {"min_clarity": 0.5},
            "routing": {"can_be_called_by": ["larry"], "return_behavior": "passthrough"},
            "supports": ["delegate", "escalate"],
        },
        "tools": {"mcp_servers": [], "custom_tools": [], "global_actions": []},
        "metadata": {},
    }
    spec.update(spec_changes)
    folder.mkdir(parents=True)
    (folder / "spec.yaml").write_text("# header\n" + yaml.safe_dump(spec), encoding="utf-8")
    (folder / "instructions.md").write_text(
        "<!--\n  generated\n-->\nYou are tiny-check.\n\nRULE: be tiny.\n", encoding="utf-8"
    )
    return folder / "agent.py"


def test_a_package_becomes_the_class_attributes(tmp_path: Path) -> None:
    package = AgentPackage.load(write_package(tmp_path / "tiny_check"))

    class TinyCheckAgent(OperatorAgent, package=package):
        """A package-declared agent."""

    assert TinyCheckAgent.agent_id == "tiny-check"
    assert TinyCheckAgent.instructions == "You are tiny-check.\n\nRULE: be tiny.\n"
    assert TinyCheckAgent.model_settings == ModelSettings(0.2, 999, None)
    assert TinyCheckAgent.min_clarity == 0.5
    assert TinyCheckAgent.allowed_callers == frozenset({"larry"})
    assert TinyCheckAgent.accepted_handoffs == frozenset(
        {HandoffType.DELEGATE, HandoffType.ESCALATE}
    )
    assert TinyCheckAgent.return_behavior is ReturnBehavior.PASSTHROUGH
    assert TinyCheckAgent.output_schema.__name__ == "TinyCheckOutput"
    built = TinyCheckAgent().agent.model
    assert (built.temperature, built.max_tokens) == (0.2, 999)


def test_a_package_of_another_type_is_refused(tmp_path: Path) -> None:
    package = AgentPackage.load(write_package(tmp_path / "tiny_check", type="role"))
    with pytest.raises(TypeError, match="is a role agent, not a operator agent"):

        class Wrong(OperatorAgent, package=package):
            """Declared on the wrong base."""


def test_the_prompt_view_shows_what_the_model_receives(tmp_path: Path) -> None:
    package = AgentPackage.load(write_package(tmp_path / "tiny_check"))

    class TinyCheckAgent(OperatorAgent, package=package):
        """A package-declared agent."""

    prompts = system_prompts(TinyCheckAgent)
    assert list(prompts) == ["agent"]
    assert prompts["agent"].startswith("Checks tiny things.\nYou are tiny-check.")
    assert "RULE: be tiny." in prompts["agent"]
    assert render_prompts(prompts).startswith("=== agent ===\nChecks tiny things.")


def test_the_schema_sent_to_a_model_without_native_output_is_read_back(tmp_path: Path) -> None:
    package = AgentPackage.load(write_package(tmp_path / "tiny_check"))

    class TinyCheckAgent(OperatorAgent, package=package):
        """A package-declared agent."""

    model = ScriptedModel(Step.structured({"output": "x", "scores": {"size": 1}}))
    run(TinyCheckAgent(model=model).run("Check"))
    schema = sent_schema(model.calls[0])
    assert json.dumps(schema).count('"How tiny?"') == 1
