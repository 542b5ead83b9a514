"""Turning whatever was registered as an agent into one callable shape.

Three kinds of agent are accepted, tried in this order:

1. an object with ``process_handoff(context)`` (the :class:`HandoffAgent` protocol,
   which the ``mindrian.agents`` base classes implement);
2. an object with an async ``arun(message)``, such as an Agno ``Agent`` or ``Team``:
   it is sent ``context.to_prompt()`` and its response's ``content`` is used;
3. a plain callable ``(context) -> HandoffResult | str``, async or not.

Whatever comes back is normalised into a :class:`HandoffResult` by
:func:`coerce_result`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import fields, replace
from typing import Any, Protocol, runtime_checkable

from mindrian.handoff.context import HandoffContext, HandoffResult

__all__ = ["AgentRunner", "HandoffAgent", "adapt_agent", "coerce_result"]

#: The shape every registered agent is adapted to.
AgentRunner = Callable[[HandoffContext], Awaitable[HandoffResult]]

#: Result fields the manager owns: routing comes from the context, duration from its clock.
_MANAGED_FIELDS = frozenset({"handoff_id", "from_agent", "to_agent", "duration_seconds"})

#: Result fields an agent's structured content may set.
_CONTENT_FIELDS = tuple(f.name for f in fields(HandoffResult) if f.name not in _MANAGED_FIELDS)

#: Agno run statuses that mean the run did not produce an answer.
_FAILED_RUN_STATUSES = frozenset({"ERROR", "CANCELLED"})


@runtime_checkable
class HandoffAgent(Protocol):
    """An agent that answers handoffs directly."""

    async def process_handoff(self, context: HandoffContext) -> HandoffResult:
        """Do the work described by ``context`` and report on it."""
        ...


def adapt_agent(agent: object) -> AgentRunner:
    """Wrap ``agent`` so it can be called as ``await runner(context)``; TypeError if it fits no
    kind."""
    process = getattr(agent, "process_handoff", None)
    if callable(process):
        return _runner(process)
    arun = getattr(agent, "arun", None)
    if callable(arun):
        return _agno_runner(arun)
    if callable(agent):
        return _runner(agent)
    raise TypeError(
        f"cannot use {type(agent).__name__} as a handoff agent: it needs process_handoff(context), "
        "an async arun(message), or must itself be callable"
    )


def _runner(call: Callable[[HandoffContext], Any]) -> AgentRunner:
    async def run(context: HandoffContext) -> HandoffResult:
        value = call(context)
        if inspect.isawaitable(value):
            value = await value
        return coerce_result(value, context)

    return run


def _agno_runner(arun: Callable[..., Any]) -> AgentRunner:
    async def run(context: HandoffContext) -> HandoffResult:
        # The session id keeps Agno's own memory of the conversation attached to it.
        kwargs = {"session_id": context.session_id} if context.session_id else {}
        response = await arun(context.to_prompt(), **kwargs)
        status = getattr(getattr(response, "status", None), "value", None)
        content = getattr(response, "content", None)
        if status in _FAILED_RUN_STATUSES:
            return HandoffResult.failure(
                context, f"agent run ended with status {status}: {content}"
            )
        return coerce_result(content, context)

    return run


def coerce_result(value: Any, context: HandoffContext) -> HandoffResult:
    """Normalise an agent's answer into a result whose routing matches ``context``."""
    if isinstance(value, HandoffResult):
        return replace(
            value,
            handoff_id=context.handoff_id,
            from_agent=context.to_agent,
            to_agent=context.return_to,
        )
    if isinstance(value, str):
        return _routed(context, success=True, output=value)
    if value is None:
        return HandoffResult.failure(context, "agent returned no content")
    data = _as_mapping(value)
    if data is None:
        return HandoffResult.failure(
            context, f"agent returned unsupported {type(value).__name__} content"
        )
    known = {name: data[name] for name in _CONTENT_FIELDS if name in data}
    if not known:
        # Structured output of some other schema is still an answer: keep it as JSON.
        return _routed(
            context, success=True, output=json.dumps(data, sort_keys=True), output_format="json"
        )
    known.setdefault("success", True)
    return _routed(context, **known)


def _routed(context: HandoffContext, **content: Any) -> HandoffResult:
    """A result of ``content`` sent back along ``context``'s route (to whoever delegated)."""
    return HandoffResult(
        handoff_id=context.handoff_id,
        from_agent=context.to_agent,
        to_agent=context.return_to,
        **content,
    )


def _as_mapping(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, Mapping):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        dumped = dump(mode="json")
        return dumped if isinstance(dumped, Mapping) else None
    return None
