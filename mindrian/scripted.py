"""A deterministic Agno model that replays scripted turns: offline tests, and model scripts
(``--model scripted:PATH``, :mod:`mindrian.model_choice`) that run and serve agents without an
API key. :mod:`mindrian.testing` re-exports it for tests.

Each time Agno asks the model for a turn it pops the next entry of the script.
An entry is one of:

* a ``str``: the assistant answers with that text;
* a ``dict`` or a pydantic object: structured output, sent as JSON text so that
  Agno parses it against the agent's ``output_schema`` exactly as it would a
  real model's JSON answer;
* a :class:`Step` made with :meth:`Step.text`, :meth:`Step.structured` or
  :meth:`Step.tool_call` (one or several tool calls in one turn);
* a callable taking the messages received (a tuple of :class:`SeenMessage`) and
  returning any of the above, for answers that depend on what the model was sent.

A tool-call turn makes Agno run the real tool function and call the model again
with the tool result; that follow-up turn consumes the next script entry.

Every turn is recorded as a :class:`ModelCall` (messages as role/content pairs,
names of the tools offered). :meth:`ScriptedModel.assert_complete` fails while
entries remain, and asking for a turn after the script ran out raises
:class:`ScriptExhaustedError` naming the model and the last message it got.

Example::

    model = ScriptedModel(
        Step.tool_call("lookup", city="Oslo"),
        "It is 4 degrees in Oslo.",
    )
    Agent(model=model, tools=[lookup]).run("Weather in Oslo?")
    model.assert_complete()
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

from agno.models.base import Model
from agno.models.message import Message
from agno.models.response import ModelResponse
from pydantic import BaseModel

from mindrian.errors import MindrianError

__all__ = [
    "ModelCall",
    "ScriptEntry",
    "ScriptExhaustedError",
    "ScriptedModel",
    "SeenMessage",
    "Step",
    "ToolCall",
]


#: Turns a cycling model remembers in ``calls``.
_CYCLE_CALLS_KEPT = 1000


class ScriptExhaustedError(MindrianError, AssertionError):
    """The model was asked for a turn its script does not have."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call the scripted model asks Agno to make."""

    name: str
    """Name of the tool as the agent registered it."""
    arguments: Mapping[str, Any]
    """Keyword arguments, sent to Agno as a JSON object."""


@dataclass(frozen=True)
class Step:
    """One scripted model turn: text, or one or more tool calls."""

    content: str | None = None
    """Assistant text of the turn, if any."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls of the turn; Agno runs them and asks for another turn."""

    @classmethod
    def text(cls, content: str) -> Step:
        """A plain text answer."""
        return cls(content=content)

    @classmethod
    def structured(cls, value: Mapping[str, Any] | BaseModel) -> Step:
        """A structured answer, serialised to JSON text for Agno to parse."""
        data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
        return cls(content=json.dumps(data, sort_keys=True))

    @classmethod
    def tool_call(cls, name: str, /, **arguments: Any) -> Step:
        """A turn that calls a single tool with ``arguments``."""
        return cls(tool_calls=(ToolCall(name, arguments),))

    @classmethod
    def tool_calls_of(cls, *calls: ToolCall) -> Step:
        """A turn that calls several tools at once."""
        return cls(tool_calls=calls)


@dataclass(frozen=True)
class SeenMessage:
    """A message as the model received it, reduced to plain data."""

    role: str
    """system, user, assistant or tool."""
    content: str
    """Text content ("" when the message had none)."""
    tool_name: str | None = None
    """For tool results: the tool that produced it."""

    def as_tuple(self) -> tuple[str, str]:
        """The (role, content) pair."""
        return (self.role, self.content)


@dataclass(frozen=True)
class ModelCall:
    """One turn the model was asked for."""

    messages: tuple[SeenMessage, ...]
    """Everything the model was sent, in order."""
    tools: tuple[str, ...]
    """Names of the tools offered, sorted."""
    response_format: Any = None
    """What Agno asked the answer to follow: an output model class, a JSON-mode dict, or None."""

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The messages as (role, content) tuples."""
        return tuple(m.as_tuple() for m in self.messages)

    @property
    def last_user_message(self) -> str:
        """Text of the last user message ("" when there is none)."""
        users = [m.content for m in self.messages if m.role == "user"]
        return users[-1] if users else ""

    def contents(self, role: str) -> tuple[str, ...]:
        """Texts of the messages with ``role``."""
        return tuple(m.content for m in self.messages if m.role == role)


#: What a script entry may be (see the module docstring).
ScriptEntry: TypeAlias = (
    "str | Mapping[str, Any] | BaseModel | Step | Callable[[tuple[SeenMessage, ...]], Any]"
)


def _as_step(entry: Any) -> Step:
    if isinstance(entry, Step):
        return entry
    if isinstance(entry, str):
        return Step.text(entry)
    if isinstance(entry, (Mapping, BaseModel)):
        return Step.structured(entry)
    raise TypeError(
        "a script entry must be str, dict, pydantic model, Step or callable; got "
        f"{type(entry).__name__}"
    )


def _seen(message: Message) -> SeenMessage:
    content = message.content
    text = content if isinstance(content, str) else message.get_content_string()
    return SeenMessage(role=message.role, content=text, tool_name=message.tool_name)


def _tool_name(tool: Any) -> str:
    if isinstance(tool, Mapping):
        function = tool.get("function")
        if isinstance(function, Mapping):
            return str(function.get("name", ""))
        return str(tool.get("name", ""))
    return str(getattr(tool, "name", tool))


class ScriptedModel(Model):
    """An Agno ``Model`` answering from a fixed script instead of a provider.

    Deep-copying it (as Agno may do when it copies agents or teams) returns the
    model itself, so a test observes every turn through the object it created.
    """

    def __init__(
        self, *script: Any, id: str = "scripted", name: str = "ScriptedModel", cycle: bool = False
    ) -> None:
        super().__init__(id=id, name=name, provider="scripted")
        for entry in script:
            if not callable(entry):
                _as_step(entry)  # fail at construction on an unusable entry
        self._script: deque[Any] = deque(script)
        # A demo or benchmark server answers forever: the script starts over when it runs out.
        self._cycle: tuple[Any, ...] = tuple(script) if cycle else ()
        # A cycling script may serve for days: keep only the latest turns then.
        self._calls: deque[ModelCall] = deque(maxlen=_CYCLE_CALLS_KEPT if cycle else None)
        self._lock = threading.Lock()
        self._tool_counter = 0
        self._overruns = 0

    @classmethod
    def text(cls, *answers: str, id: str = "scripted") -> ScriptedModel:
        """A model answering with each text in turn."""
        return cls(*answers, id=id)

    def __deepcopy__(self, memo: dict[int, Any]) -> ScriptedModel:
        # The script is shared test state: a copy must consume the same queue.
        memo[id(self)] = self
        return self

    @property
    def calls(self) -> tuple[ModelCall, ...]:
        """Every turn asked for so far, oldest first."""
        with self._lock:
            return tuple(self._calls)

    @property
    def remaining(self) -> int:
        """Number of script entries not yet consumed."""
        with self._lock:
            return len(self._script)

    def assert_complete(self) -> None:
        """Fail if entries were left unused or turns were asked for beyond the script.

        The second case matters because Agno turns a model exception into an
        errored run instead of raising it, so an overrun can otherwise go unseen.
        """
        with self._lock:
            overruns = self._overruns
        if overruns:
            raise AssertionError(
                f"{self.id}: asked for {overruns} turn(s) beyond the end of its script"
            )
        left = self.remaining
        if left:
            raise AssertionError(
                f"{self.id}: {left} scripted step(s) were never used "
                f"(model was called {len(self.calls)} time(s))"
            )

    # -- the Agno Model interface ------------------------------------------

    def invoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self._next_response(kwargs)

    async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self._next_response(kwargs)

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Iterator[ModelResponse]:
        yield self._next_response(kwargs)

    async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelResponse]:
        yield self._next_response(kwargs)

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return cast(ModelResponse, response)

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return cast(ModelResponse, response)

    # -- script replay --------------------------------------------------------

    def _next_response(self, kwargs: Mapping[str, Any]) -> ModelResponse:
        messages = tuple(_seen(m) for m in kwargs.get("messages") or ())
        tools = tuple(sorted(_tool_name(t) for t in kwargs.get("tools") or ()))
        with self._lock:
            call = ModelCall(
                messages=messages, tools=tools, response_format=kwargs.get("response_format")
            )
            self._calls.append(call)
            if not self._script and self._cycle:
                self._script.extend(self._cycle)
            if not self._script:
                self._overruns += 1
                raise ScriptExhaustedError(self._exhausted_message(messages))
            entry = self._script.popleft()
        if callable(entry):
            entry = entry(messages)
        return self._response(_as_step(entry))

    def _exhausted_message(self, messages: tuple[SeenMessage, ...]) -> str:
        last = messages[-1].content if messages else ""
        return (
            f"ScriptedModel {self.id!r} ran out of scripted steps on call "
            f"{len(self._calls)}; last message received: {last[:200]!r}"
        )

    def _response(self, step: Step) -> ModelResponse:
        response = ModelResponse(role="assistant", content=step.content)
        if step.tool_calls:
            response.tool_calls = [self._tool_call_dict(call) for call in step.tool_calls]
        return response

    def _tool_call_dict(self, call: ToolCall) -> dict[str, Any]:
        with self._lock:
            self._tool_counter += 1
            call_id = f"call_{self._tool_counter}"
        return {
            "id": call_id,
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": json.dumps(dict(call.arguments), sort_keys=True),
            },
        }
