"""``mindrian.recording``: a run's model turns written as a script that replays the run exactly."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mindrian.agents import OperatorAgent, PipelineAgent
from mindrian.handoff import HandoffResult
from mindrian.model_choice import choose_model, load_script
from mindrian.recording import Recording
from mindrian.testing import ScriptedModel, Step, ToolCall

_CARD = {"output": "# Card", "confidence": 0.5, "key_findings": ["one"]}


class Market:
    """A tool the model calls; it answers the same on replay."""

    def size(self, segment: str) -> str:
        """Size of a market segment."""
        return f"{segment}: 1.2M buyers"


class _Scorer(OperatorAgent):
    agent_id = "scorer"
    instructions = "Score it."
    tools = (Market().size,)


class _Phased(PipelineAgent):
    agent_id = "phased"
    phases = (("one", "First."), ("two", "Second."))


def _handoff(agent: Any, text: str = "Lab equipment resale") -> HandoffResult:
    context = agent.create_handoff_context(text)
    result: HandoffResult = asyncio.run(agent.process_handoff(context))
    return result


def _data(result: HandoffResult) -> dict[str, Any]:
    """A result's data less what differs between any two runs (its id and its duration)."""
    return {
        k: v for k, v in result.to_dict().items() if k not in ("handoff_id", "duration_seconds")
    }


def test_a_recorded_run_with_tool_calls_replays_to_the_same_result(tmp_path: Path) -> None:
    recording = Recording()
    stand_in = ScriptedModel(
        Step.tool_calls_of(
            ToolCall("size", {"segment": "labs"}), ToolCall("size", {"segment": "b"})
        ),
        Step.tool_call("size", segment="universities"),
        _CARD,
    )
    first = _handoff(_Scorer(model=recording.watch(stand_in, "scorer")))
    recording.write(tmp_path / "rec.yaml")

    script = load_script(tmp_path / "rec.yaml")
    replay = script.model_for("scorer")
    second = _handoff(_Scorer(model=replay))

    assert first.success, first.error
    assert _data(first) == _data(second)
    replay.assert_complete()
    assert [len(call.pairs) for call in replay.calls] == [len(c.pairs) for c in stand_in.calls]


def test_the_script_lists_each_turn_as_it_was_asked_for(tmp_path: Path) -> None:
    recording = Recording()
    model = ScriptedModel(Step.tool_call("size", segment="labs"), "plain text", _CARD)
    _handoff(_Scorer(model=recording.watch(model, "scorer")))
    assert recording.script() == {
        "agents": {
            "scorer": [
                {"tool_call": {"name": "size", "arguments": {"segment": "labs"}}},
                {"text": "plain text"},
            ]
        }
    }


def test_every_part_of_an_agent_records_under_its_id_in_order(tmp_path: Path) -> None:
    recording = Recording()
    choice = choose_model(f"scripted:{_script(tmp_path, ['first', 'second'])}", recording=recording)
    _handoff(_Phased(model=choice.model_for("phased"), state_dir=tmp_path))
    recording.write(tmp_path / "rec.yaml")
    assert load_script(tmp_path / "rec.yaml").agents == {"phased": ("first", "second")}
    text = (tmp_path / "rec.yaml").read_text(encoding="utf-8")
    assert text == (
        "# Recorded by mindrian --record; replay it with --model scripted:FILE\n"
        "agents:\n  phased:\n  - text: first\n  - text: second\n"
    )


def _script(folder: Path, answers: list[str]) -> Path:
    path = folder / "script.yaml"
    path.write_text("answers:\n" + "".join(f"  - {a}\n" for a in answers), encoding="utf-8")
    return path
