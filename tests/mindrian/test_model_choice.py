"""``mindrian.model_choice``: --model / MINDRIAN_MODEL references and scripted model files."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agno.agent import Agent

from mindrian.agents import OperatorAgent
from mindrian.model_choice import MODEL_ENV, ModelScriptError, choose_model, load_script
from mindrian.providers import ProviderModel
from mindrian.testing import ScriptedModel


def _script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "script.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _answer(model: ScriptedModel, message: str = "hi") -> str:
    output = asyncio.run(Agent(model=model, telemetry=False).arun(message))
    return str(output.content)


def test_each_agent_replays_its_own_list_and_others_the_shared_answers(tmp_path: Path) -> None:
    script = load_script(
        _script(tmp_path, "answers: [shared]\nagents:\n  jtbd: [own one, {text: own two}]\n")
    )
    jtbd, other = script.model_for("jtbd"), script.model_for("larry")
    assert [_answer(jtbd), _answer(jtbd)] == ["own one", "own two"]
    assert _answer(other) == "shared"
    other.assert_complete()
    _answer(jtbd)  # a third turn: jtbd's list has run out, the shared answers are not taken
    with pytest.raises(AssertionError, match="beyond the end of its script"):
        jtbd.assert_complete()


def test_repeat_starts_the_script_over(tmp_path: Path) -> None:
    model = load_script(_script(tmp_path, "repeat: true\nanswers: [a, b]\n")).model_for("x")
    assert [_answer(model) for _ in range(5)] == ["a", "b", "a", "b", "a"]


def test_json_answers_are_sent_as_json_text_and_tool_calls_run_the_tool(tmp_path: Path) -> None:
    calls: list[str] = []

    def lookup(city: str) -> str:
        """Weather of a city."""
        calls.append(city)
        return "4 degrees"

    script = load_script(
        _script(
            tmp_path,
            "answers:\n"
            "  - tool_call: {name: lookup, arguments: {city: Oslo}}\n"
            "  - 'It is 4 degrees.'\n"
            "  - json: {b: 1, a: [x]}\n",
        )
    )
    model = script.model_for("any")
    agent = Agent(model=model, tools=[lookup], telemetry=False)
    assert asyncio.run(agent.arun("Weather?")).content == "It is 4 degrees."
    assert calls == ["Oslo"]
    assert _answer(model) == '{"a": ["x"], "b": 1}'


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[a, b]\n", "a model script is a mapping"),
        ("answers: a\n", "answers: expected a list of answers"),
        ("answers: [{text: 1}]\n", "'text' must be a string"),
        ("answers: [{tool_call: {arguments: {}}}]\n", "'tool_call' needs a name"),
        ("answers: [7]\n", "answers[0]: an answer is a string or a mapping with one key"),
        ("agents: [x]\n", "'agents' maps agent ids to lists of answers"),
        ("answers: [a\n", "not YAML"),
    ],
)
def test_a_malformed_script_names_the_problem(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ModelScriptError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        load_script(_script(tmp_path, text))


def test_references_without_a_provider_are_refused() -> None:
    with pytest.raises(ModelScriptError, match="is not PROVIDER:MODEL_ID"):
        choose_model("claude")


def test_the_option_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODEL_ENV, "openai:gpt-4o")
    # A chosen provider model is checked (SDK, key) before the run: a ProviderModel, not a string.
    assert choose_model("anthropic:claude-x").model_for("a") == ProviderModel("anthropic:claude-x")
    assert choose_model(None).model_for("a") == ProviderModel("openai:gpt-4o")
    monkeypatch.delenv(MODEL_ENV)
    assert choose_model(None).model_for("a") is None


class _Echo(OperatorAgent):
    agent_id = "echo"
    model = "anthropic:claude-sonnet-4-5"


def test_mindrian_model_overrides_an_agent_built_without_a_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _script(tmp_path, "agents:\n  echo:\n    - json: {output: scripted echo}\n")
    monkeypatch.setenv(MODEL_ENV, f"scripted:{path}")
    reply = asyncio.run(_Echo().run("anything"))
    assert reply.content == "scripted echo"
    explicit = ScriptedModel({"output": "explicit"})
    assert asyncio.run(_Echo(model=explicit).run("anything")).content == "explicit"
