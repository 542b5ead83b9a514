"""ScriptedModel drives the real Agno run loop; the offline guard blocks real providers."""

from __future__ import annotations

import asyncio
import copy
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from agno.agent import Agent
from agno.models.message import Message
from agno.run.base import RunStatus
from pydantic import BaseModel

from mindrian.testing import (
    ScriptedModel,
    ScriptExhaustedError,
    SeenMessage,
    Step,
    ToolCall,
)
from mindrian.testing.pytest_plugin import (
    BlockedNetworkError,
    OfflineGuard,
    RealModelCallError,
)

REPO_ROOT = Path(__file__).resolve().parents[3]


class Verdict(BaseModel):
    label: str
    score: float


def agent_with(model: ScriptedModel, **options: object) -> Agent:
    return Agent(model=model, telemetry=False, **options)


class ToolSpy:
    """A tool whose calls the test can inspect."""

    def __init__(self) -> None:
        self.calls: list[dict[str, object]] = []

    def lookup(self, city: str, days: int = 1) -> str:
        """Forecast for a city."""
        self.calls.append({"city": city, "days": days})
        return f"{city}: 4 degrees for {days} day(s)"


@pytest.mark.parametrize("use_async", [False, True], ids=["run", "arun"])
def test_text_steps_are_replayed_in_order_and_calls_recorded(use_async: bool) -> None:
    model = ScriptedModel.text("first", "second")
    agent = agent_with(model, instructions="Be brief.")

    def run(message: str) -> object:
        return asyncio.run(agent.arun(message)) if use_async else agent.run(message)

    assert run("one").content == "first"
    assert run("two").content == "second"
    model.assert_complete()
    assert [call.last_user_message for call in model.calls] == ["one", "two"]
    assert "Be brief." in model.calls[0].contents("system")[0]


@pytest.mark.parametrize("use_async", [False, True], ids=["run", "arun"])
def test_tool_call_runs_the_real_tool_and_feeds_the_result_back(
    use_async: bool,
) -> None:
    spy = ToolSpy()
    model = ScriptedModel(Step.tool_call("lookup", city="Oslo", days=3), "Cold in Oslo.")
    agent = agent_with(model, tools=[spy.lookup])

    result = asyncio.run(agent.arun("Weather?")) if use_async else agent.run("Weather?")

    assert result.content == "Cold in Oslo."
    assert spy.calls == [{"city": "Oslo", "days": 3}]
    first, follow_up = model.calls
    assert first.tools == ("lookup",)
    assert ("tool", "Oslo: 4 degrees for 3 day(s)") in follow_up.pairs
    model.assert_complete()


def test_several_tool_calls_in_one_turn_all_run() -> None:
    spy = ToolSpy()
    turn = Step.tool_calls_of(
        ToolCall("lookup", {"city": "Oslo"}), ToolCall("lookup", {"city": "Rome"})
    )
    model = ScriptedModel(turn, "done")

    agent_with(model, tools=[spy.lookup]).run("Two cities")

    assert [c["city"] for c in spy.calls] == ["Oslo", "Rome"]
    assert model.calls[1].contents("tool") == (
        "Oslo: 4 degrees for 1 day(s)",
        "Rome: 4 degrees for 1 day(s)",
    )


@pytest.mark.parametrize(
    "entry",
    [
        {"label": "go", "score": 0.8},
        Verdict(label="go", score=0.8),
        Step.structured({"score": 0.8, "label": "go"}),
    ],
    ids=["dict", "pydantic", "step"],
)
def test_structured_output_is_parsed_against_the_output_schema(entry: object) -> None:
    model = ScriptedModel(entry)
    result = agent_with(model, output_schema=Verdict).run("Judge")
    assert result.content == Verdict(label="go", score=0.8)


def test_callable_entry_answers_from_the_messages_it_received() -> None:
    def echo(messages: tuple[SeenMessage, ...]) -> str:
        return "heard: " + messages[-1].content

    model = ScriptedModel(echo)
    assert agent_with(model).run("ping").content == "heard: ping"


def test_callable_entry_may_return_structured_output() -> None:
    model = ScriptedModel(lambda messages: {"label": messages[-1].content, "score": 1})
    assert agent_with(model, output_schema=Verdict).run("yes").content == Verdict(
        label="yes", score=1.0
    )


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_streaming_runs_replay_text_and_tool_calls(use_async: bool) -> None:
    spy = ToolSpy()
    model = ScriptedModel(Step.tool_call("lookup", city="Lima"), "Warm in Lima.")
    agent = agent_with(model, tools=[spy.lookup])

    async def collect_async() -> list[object]:
        return [event async for event in agent.arun("Weather?", stream=True)]

    events = asyncio.run(collect_async()) if use_async else list(agent.run("Weather?", stream=True))

    text = "".join(
        e.content
        for e in events
        if type(e).__name__ == "RunContentEvent" and isinstance(e.content, str)
    )
    assert text == "Warm in Lima."
    assert spy.calls == [{"city": "Lima", "days": 1}]
    model.assert_complete()


def test_running_out_of_steps_raises_a_clear_error_on_direct_invoke() -> None:
    model = ScriptedModel("only", id="tiny")
    model.invoke(messages=[Message(role="user", content="a")])
    with pytest.raises(
        ScriptExhaustedError, match=r"'tiny' ran out of scripted steps on call 2.*'b'"
    ):
        model.invoke(messages=[Message(role="user", content="b")])


def test_an_overrun_swallowed_by_agno_still_fails_assert_complete() -> None:
    model = ScriptedModel()
    result = agent_with(model).run("anything")
    assert result.status == RunStatus.error
    assert "ran out of scripted steps" in str(result.content)
    with pytest.raises(AssertionError, match="beyond the end of its script"):
        model.assert_complete()


def test_assert_complete_fails_while_steps_remain() -> None:
    model = ScriptedModel("used", "unused")
    agent_with(model).run("hi")
    assert model.remaining == 1
    with pytest.raises(AssertionError, match="1 scripted step"):
        model.assert_complete()


def test_unusable_entry_is_rejected_at_construction() -> None:
    with pytest.raises(TypeError, match="script entry"):
        ScriptedModel(42)


def test_copies_share_the_script_and_the_call_log() -> None:
    model = ScriptedModel("a", "b")
    clone = copy.deepcopy(model)
    clone.invoke(messages=[])
    assert model.remaining == 1
    assert len(model.calls) == 1


# -- the offline guard ----------------------------------------------------------


def test_real_provider_model_is_blocked(offline_guard: OfflineGuard) -> None:
    from agno.models.anthropic import Claude

    with offline_guard.expect_blocked() as caught:
        with pytest.raises(RealModelCallError, match="inject a ScriptedModel"):
            Claude(id="claude-sonnet-4-5").invoke(
                messages=[], assistant_message=Message(role="assistant")
            )
    assert caught == ["real model call: Claude(id='claude-sonnet-4-5').invoke"]


def test_agent_with_a_provider_string_cannot_reach_the_provider(
    offline_guard: OfflineGuard,
) -> None:
    with offline_guard.expect_blocked() as caught:
        result = Agent(model="anthropic:claude-sonnet-4-5", telemetry=False).run("hi")
    assert result.status == RunStatus.error
    assert caught and all(c.startswith("real model call: Claude") for c in caught)


def test_outbound_socket_is_blocked(offline_guard: OfflineGuard) -> None:
    with offline_guard.expect_blocked() as caught:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            with pytest.raises(BlockedNetworkError):
                sock.connect(("203.0.113.7", 443))
    assert caught == ["network connection to 203.0.113.7:443"]


def test_loopback_connections_are_allowed() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=5):
            pass


def test_a_swallowed_real_model_call_still_fails_the_test(tmp_path: Path) -> None:
    test_file = tmp_path / "test_offender.py"
    test_file.write_text(
        textwrap.dedent("""
            from agno.agent import Agent

            def test_offender():
                # Agno reports the blocked call as an errored run instead of raising.
                Agent(model="anthropic:claude-sonnet-4-5", telemetry=False).run("hi")

            def test_innocent():
                assert True
            """),
        encoding="utf-8",
    )
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "mindrian.testing.pytest_plugin",
            "-p",
            "no:cacheprovider",
            str(test_file),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**_clean_env(), "PYTHONPATH": str(REPO_ROOT)},
    )
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "1 failed, 1 passed" in completed.stdout
    assert "real model call: Claude" in completed.stdout


def test_a_provider_imported_inside_a_test_is_covered(tmp_path: Path) -> None:
    # In a fresh process no provider SDK is loaded when the guard installs; the
    # import hook must cover the class before the test body can call it directly.
    test_file = tmp_path / "test_late_import.py"
    test_file.write_text(
        textwrap.dedent("""
            import sys
            from agno.models.message import Message

            def test_direct_invoke():
                assert "agno.models.anthropic" not in sys.modules
                from agno.models.anthropic import Claude
                Claude(id="claude-sonnet-4-5").invoke(
                    messages=[], assistant_message=Message(role="assistant")
                )
            """),
        encoding="utf-8",
    )
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "mindrian.testing.pytest_plugin",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:hypothesispytest",
            str(test_file),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**_clean_env(), "PYTHONPATH": str(REPO_ROOT)},
    )
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "RealModelCallError" in completed.stdout, completed.stdout


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
