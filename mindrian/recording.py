"""Recording a run's model answers as a script the ``scripted:`` provider replays.

``mindrian run … --record FILE`` (and ``mindrian workflow run … --record FILE``)
watches every model an agent builds (and the agents it delegates to) and writes
each turn the model took, in the order the turns were asked for: its text, or
the tool calls it made. The file is a model script (:mod:`mindrian.model_choice`),
so ``--model scripted:FILE`` replays the conversation with no provider: a real
run becomes a deterministic test.

Turns are recorded where Agno asks the provider (``_invoke_with_retry`` and its
async and streaming forms, the same gateways the offline pytest guard watches),
so tool execution, structured-output parsing and mindrian's checks run again on
replay exactly as they did on the recorded run. The host tools' calls (Bash,
Read…) are kept beside the turns, under ``tool_calls``, with their outcome and
output: what the tools did on the recorded run (a replay runs them again and
ignores the key).
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import yaml
from agno.models.base import Model
from agno.models.response import ModelResponse

from mindrian.atomic import atomic_write_text

__all__ = ["Recording"]

#: The first line of a recorded script (no path, no date: a recording depends on its turns only).
_HEADER = "# Recorded by mindrian --record; replay it with --model scripted:FILE\n"

#: The gateways a turn passes through: (method name, kind).
_GATEWAYS = (
    ("_invoke_with_retry", "call"),
    ("_ainvoke_with_retry", "acall"),
    ("_invoke_stream_with_retry", "stream"),
    ("_ainvoke_stream_with_retry", "astream"),
)


class Recording:
    """The turns of every watched model, by agent id, in the order they were asked for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turns: dict[str, list[dict[str, Any] | str | None]] = {}
        self._tool_calls: list[dict[str, Any]] = []

    def keep_tool_calls(self, calls: list[dict[str, Any]]) -> None:
        """Keep the run's host tool calls (``{tool, arguments, outcome, output}`` each)."""
        with self._lock:
            self._tool_calls = list(calls)

    def watch(self, model: Model, agent_id: str) -> Model:
        """Record ``model``'s turns as ``agent_id``'s answers; returns the same model."""
        for name, kind in _GATEWAYS:
            original = getattr(model, name)
            wrap = _WRAPPERS[kind]
            # An instance attribute: only this model is recorded, the class keeps its own method.
            setattr(model, name, wrap(original, functools.partial(self._slot, agent_id)))
        return model

    def script(self) -> dict[str, Any]:
        """The recorded turns as a model script (``agents:`` answers by agent id)."""
        with self._lock:
            agents = {
                agent_id: [turn for turn in turns if turn is not None]
                for agent_id, turns in sorted(self._turns.items())
            }
            calls = list(self._tool_calls)
        return {"agents": agents, "tool_calls": calls} if calls else {"agents": agents}

    def write(self, path: Path) -> None:
        """Write :meth:`script` as YAML (sorted keys, no line folding: replays byte for byte)."""
        text = yaml.safe_dump(self.script(), sort_keys=True, allow_unicode=True, width=2**31 - 1)
        atomic_write_text(path, _HEADER + text)

    def _slot(self, agent_id: str) -> Callable[[ModelResponse], None]:
        """Reserve the next turn of ``agent_id`` now; the returned function fills it in."""
        with self._lock:
            turns = self._turns.setdefault(agent_id, [])
            index = len(turns)
            turns.append(None)

        def fill(response: ModelResponse) -> None:
            with self._lock:
                turns[index] = _answer(response)

        return fill


def _answer(response: ModelResponse) -> dict[str, Any] | str:
    """One turn as a script answer: its text, or its tool calls (with any text beside them)."""
    text = response.content if isinstance(response.content, str) else None
    if response.content is not None and text is None:
        text = json.dumps(response.content, sort_keys=True, default=str)
    calls = [_call(call) for call in response.tool_calls or ()]
    if not calls:
        return {"text": text or ""}
    if len(calls) == 1 and not text:
        return {"tool_call": calls[0]}
    answer: dict[str, Any] = {"tool_calls": calls}
    if text:
        answer["text"] = text
    return answer


def _call(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    raw = function.get("arguments") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except ValueError:
        arguments = {"_unparsed": raw}
    return {"name": str(function.get("name", "")), "arguments": arguments}


def _merged(chunks: list[ModelResponse]) -> ModelResponse:
    """A streamed turn as one response: the text deltas joined, every tool call kept."""
    merged = ModelResponse(role="assistant")
    texts = [c.content for c in chunks if isinstance(c.content, str)]
    merged.content = "".join(texts) if texts else None
    merged.tool_calls = [call for c in chunks for call in c.tool_calls or ()]
    return merged


Slot = Callable[[], Callable[[ModelResponse], None]]


def _call_wrapper(original: Callable[..., ModelResponse], slot: Slot) -> Callable[..., Any]:
    def recorded(**kwargs: Any) -> ModelResponse:
        fill = slot()
        response = original(**kwargs)
        fill(response)
        return response

    return recorded


def _acall_wrapper(original: Callable[..., Any], slot: Slot) -> Callable[..., Any]:
    async def recorded(**kwargs: Any) -> ModelResponse:
        fill = slot()
        response: ModelResponse = await original(**kwargs)
        fill(response)
        return response

    return recorded


def _stream_wrapper(original: Callable[..., Iterator[ModelResponse]], slot: Slot) -> Any:
    def recorded(**kwargs: Any) -> Iterator[ModelResponse]:
        fill, chunks = slot(), []
        for chunk in original(**kwargs):
            chunks.append(chunk)
            yield chunk
        fill(_merged(chunks))

    return recorded


def _astream_wrapper(original: Callable[..., AsyncIterator[ModelResponse]], slot: Slot) -> Any:
    async def recorded(**kwargs: Any) -> AsyncIterator[ModelResponse]:
        fill, chunks = slot(), []
        async for chunk in original(**kwargs):
            chunks.append(chunk)
            yield chunk
        fill(_merged(chunks))

    return recorded


_WRAPPERS: dict[str, Callable[[Any, Slot], Callable[..., Any]]] = {
    "call": _call_wrapper,
    "acall": _acall_wrapper,
    "stream": _stream_wrapper,
    "astream": _astream_wrapper,
}
