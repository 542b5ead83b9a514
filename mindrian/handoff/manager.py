"""``HandoffManager``: runs handoffs between registered agents and keeps their history.

Nothing in ``execute*`` raises because an agent misbehaved: an unknown agent,
an exception inside an agent and a timeout all come back as
``HandoffResult(success=False, error=...)``, so the orchestrating conversation
can recover (seed 001, principle 5). Cancellation of the caller still
propagates, as asyncio requires.

Two optional observers see every handoff:

* ``frames``: control frames (seed 002, namespace ``MINDRIAN``) for a terminal
  manager, one per line: ``HANDOFF`` when an agent is handed work (``to``, ``from``,
  ``handoff_id``, ``type``, ``mode``), ``ERROR`` when a handoff failed (``code``
  ``HANDOFF_FAILED``, or ``ESCALATED`` when a person is needed; ``message``,
  ``handoff_id``, ``agent``), then ``READY`` when control is back with the agent
  that receives the result (``stage``, ``handoff_id``, ``ok``). No timestamps, so
  the same run prints the same frames.
* ``usage``: a registry (anything with ``record_usage``) credited with one
  ``USED_BY {success}`` per delegated handoff, to the handoff's session (or to a
  session of its own when it has none). Recording is opt-in: pass the registry.

Neither may break a handoff: a frame that cannot be written or a usage record
the registry refuses is logged and the handoff goes on.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol, TextIO

from mindrian.frames import FrameError, emit
from mindrian.handoff._markdown import bullets
from mindrian.handoff.adapter import AgentRunner, adapt_agent
from mindrian.handoff.context import (
    DEFAULT_TIMEOUT_SECONDS,
    ConversationSummary,
    HandoffContext,
    HandoffRecord,
    HandoffResult,
    PreviousAnalysis,
    ProblemClarity,
    new_handoff_id,
    utc_now,
)
from mindrian.handoff.synthesis import merge_results
from mindrian.handoff.types import HandoffMode, HandoffType, ReturnBehavior

__all__ = [
    "FRAME_NAMESPACE",
    "HUMAN_AGENT_ID",
    "Chooser",
    "FrameSink",
    "HandoffManager",
    "UsageRecorder",
    "handoff_manager",
    "registry_chooser",
    "selection_text",
]

logger = logging.getLogger(__name__)

#: ``to_agent`` of an escalation: the person behind the conversation.
HUMAN_AGENT_ID = "human"

#: Namespace of the control frames a manager emits.
FRAME_NAMESPACE = "MINDRIAN"

#: Router for selective handoffs: ``(context, candidates) -> agent id``, sync or async.
Chooser = Callable[[HandoffContext, tuple[str, ...]], "str | Awaitable[str]"]

#: Where frames go: a text stream (one frame per line, flushed) or a callable taking each line.
FrameSink = TextIO | Callable[[str], object]


class UsageRecorder(Protocol):
    """What usage tracking needs of a registry (:class:`mindrian.graph.Registry` has it)."""

    def record_usage(
        self, framework_id: str, session_id: str, handoff_id: str, success: bool
    ) -> bool:
        """Record one handoff; False when the framework is not registered."""
        ...


class _SelectsText(Protocol):
    def select_text(
        self,
        text: str,
        problem_types: Iterable[str] = (),
        previous: Iterable[str] = (),
        limit: int = 5,
    ) -> Sequence[Any]: ...


class HandoffManager:
    """Registry of agents plus the executor for every handoff type and mode."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = utc_now,
        id_factory: Callable[[], str] = new_handoff_id,
        default_timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        frames: FrameSink | None = None,
        registry: _SelectsText | None = None,
        usage: UsageRecorder | None = None,
    ) -> None:
        """``clock`` measures durations, ``now`` stamps new contexts, ``id_factory`` names them.

        ``frames`` receives control frames; ``registry`` backs :meth:`execute_selective`
        when no chooser is given; ``usage`` records every delegated handoff (see the module).
        """
        self._clock = clock
        self._now = now
        self._new_id = id_factory
        self._default_timeout = default_timeout_seconds
        self._frames = frames
        self._registry = registry
        self._usage = usage
        self._agents: dict[str, AgentRunner] = {}
        # Each agent's declared return behaviour (phase 3's contract); None: the context's.
        self._return_behaviors: dict[str, ReturnBehavior | None] = {}
        self._history: list[HandoffRecord] = []
        # Per session, the chain of owners opened by transfers; the last one talks to the user.
        self._owners: dict[str, list[str]] = {}

    # --- registry and history -------------------------------------------------

    def register_agent(self, agent_id: str, agent: object) -> None:
        """Make ``agent`` reachable as ``agent_id``; a later registration under the same id replaces
        it."""
        if not isinstance(agent_id, str) or not agent_id:
            raise ValueError("agent_id must be a non-empty string")
        self._agents[agent_id] = adapt_agent(agent)
        declared = getattr(agent, "return_behavior", None)
        self._return_behaviors[agent_id] = ReturnBehavior(declared) if declared else None

    @property
    def agents(self) -> tuple[str, ...]:
        """Registered agent ids, sorted."""
        return tuple(sorted(self._agents))

    @property
    def history(self) -> tuple[HandoffRecord, ...]:
        """Every handoff run so far, in the order they finished."""
        return tuple(self._history)

    def export_history(self) -> list[dict[str, Any]]:
        """The history as JSON-safe plain data."""
        return [record.to_dict() for record in self._history]

    def owner(self, session_id: str) -> str | None:
        """The agent currently talking to the user in ``session_id``, if a transfer ever set one."""
        chain = self._owners.get(session_id)
        return chain[-1] if chain else None

    # --- building contexts ----------------------------------------------------

    def create_delegation(
        self,
        from_agent: str,
        to_agent: str,
        task: str,
        problem_clarity: ProblemClarity | Mapping[str, Any] | None = None,
        expected_output: str = "",
        focus_areas: Iterable[str] = (),
        ignore_areas: Iterable[str] = (),
        return_behavior: ReturnBehavior | str = ReturnBehavior.SYNTHESIZE,
        previous_analyses: Iterable[PreviousAnalysis | Mapping[str, Any]] = (),
        conversation: ConversationSummary | Mapping[str, Any] | None = None,
        timeout_seconds: float | None = None,
        handoff_id: str | None = None,
        *,
        timestamp: datetime | None = None,
        session_id: str | None = None,
        return_to: str = "",
        priority: int = 0,
        handoff_mode: HandoffMode | str = HandoffMode.SEQUENTIAL,
    ) -> HandoffContext:
        """A DELEGATE context from ``from_agent`` to ``to_agent``; ids and time come from the
        manager."""
        return HandoffContext(
            handoff_id=handoff_id or self._new_id(),
            timestamp=timestamp or self._now(),
            problem_clarity=ProblemClarity.coerce(problem_clarity),
            conversation=ConversationSummary.coerce(conversation),
            session_id=session_id,
            previous_analyses=tuple(PreviousAnalysis.coerce(a) for a in previous_analyses),
            task_description=task,
            expected_output=expected_output,
            focus_areas=tuple(focus_areas),
            ignore_areas=tuple(ignore_areas),
            from_agent=from_agent,
            to_agent=to_agent,
            return_to=return_to,
            return_behavior=ReturnBehavior(return_behavior),
            handoff_type=HandoffType.DELEGATE,
            handoff_mode=HandoffMode(handoff_mode),
            priority=priority,
            timeout_seconds=(
                timeout_seconds if timeout_seconds is not None else self._default_timeout
            ),
        )

    # --- execution ------------------------------------------------------------

    async def execute(self, context: HandoffContext) -> HandoffResult:
        """Run one handoff and deliver its result as its agent declares; always returns a result.

        An agent declaring ``return_behavior`` ``synthesize`` (phase 3's contract)
        has a successful result handed to ``return_to``, when that is a registered
        agent other than itself, and the synthesis ``return_to`` writes is
        returned; ``passthrough`` and ``iterate`` results come back as they are,
        to forward or to run the next step with. An agent declaring nothing
        leaves the context's ``return_behavior`` to whoever receives the result.
        """
        result = await self._execute(context)
        behavior = self._return_behaviors.get(context.to_agent)
        folds = (
            behavior is ReturnBehavior.SYNTHESIZE
            and result.success
            and context.return_to in self._agents
            and context.return_to != context.to_agent
        )
        if not folds:
            return result
        return await self.synthesize((result,), context, synthesizer=context.return_to)

    async def _execute(self, context: HandoffContext) -> HandoffResult:
        """Run one handoff and record it; the result is not delivered anywhere."""
        start = self._clock()
        return self._finish(context, await self._run(context), start)

    async def execute_sequential(
        self, contexts: Sequence[HandoffContext]
    ) -> tuple[HandoffResult, ...]:
        """Run one after another; each later context also gets the earlier successful results."""
        results: list[HandoffResult] = []
        for context in contexts:
            earlier = tuple(PreviousAnalysis.from_result(r) for r in results if r.success)
            step = replace(
                context,
                previous_analyses=context.previous_analyses + earlier,
                handoff_mode=HandoffMode.SEQUENTIAL,
            )
            results.append(await self._execute(step))
        return tuple(results)

    async def execute_parallel(
        self, contexts: Sequence[HandoffContext]
    ) -> tuple[HandoffResult, ...]:
        """Run all at once; results come back in the order of ``contexts``."""
        return await self._gather([replace(c, handoff_mode=HandoffMode.PARALLEL) for c in contexts])

    async def execute_selective(
        self,
        context: HandoffContext,
        candidates: Sequence[str],
        choose: Chooser | None = None,
    ) -> HandoffResult:
        """Let ``choose`` pick one of ``candidates`` and hand ``context`` to it.

        Without ``choose``, the manager's registry picks: the candidate its free-text
        selection ranks highest for the context (see :func:`registry_chooser`).
        """
        start = self._clock()
        options = tuple(candidates)
        step = replace(context, handoff_mode=HandoffMode.SELECTIVE)
        if choose is None:
            if self._registry is None:
                error = "no chooser given and the manager has no registry to choose with"
                return self._finish(step, HandoffResult.failure(step, error), start)
            choose = registry_chooser(self._registry)
        try:
            choice = choose(step, options)
            if inspect.isawaitable(choice):
                choice = await choice
        except Exception as exc:
            return self._finish(
                step,
                HandoffResult.failure(step, f"router raised {_describe(exc)}"),
                start,
            )
        if choice not in options:
            listed = ", ".join(options) or "(none)"
            error = f"router chose {choice!r}, which is not one of the candidates: {listed}"
            return self._finish(step, HandoffResult.failure(step, error), start)
        chosen = replace(step, to_agent=choice)
        return self._finish(chosen, await self._run(chosen), start)

    async def execute_debate(
        self, contexts: Sequence[HandoffContext], rounds: int = 2
    ) -> tuple[tuple[HandoffResult, ...], ...]:
        """Run the participants in parallel for ``rounds`` rounds; returns the results of every
        round.

        From round two on, each participant is shown the successful positions of
        the others from the round before, as previous analyses.
        """
        if rounds < 1:
            raise ValueError(f"a debate needs at least one round, got {rounds}")
        if len(contexts) < 2:
            raise ValueError(f"a debate needs at least two participants, got {len(contexts)}")
        openers = [replace(c, handoff_mode=HandoffMode.DEBATE) for c in contexts]
        outcomes = [await self._gather(openers)]
        for number in range(2, rounds + 1):
            turns = [
                self._debate_turn(c, i, outcomes[-1], number, rounds) for i, c in enumerate(openers)
            ]
            outcomes.append(await self._gather(turns))
        return tuple(outcomes)

    async def synthesize(
        self,
        results: Sequence[HandoffResult],
        context: HandoffContext,
        synthesizer: str | None = None,
    ) -> HandoffResult:
        """Combine ``results``: merged by the manager, or by the ``synthesizer`` agent when
        given."""
        results = tuple(results)
        if synthesizer is None:
            return merge_results(results, context)
        return await self._execute(self._synthesis_context(results, context, synthesizer))

    # --- control: transfer, return, escalate -------------------------------------

    async def transfer(self, context: HandoffContext) -> HandoffResult:
        """Give the session to ``context.to_agent``, which answers first; it owns the session until
        it returns."""
        start = self._clock()
        step = replace(context, handoff_type=HandoffType.TRANSFER)
        session = step.session_id
        if session is None:
            result = HandoffResult.failure(step, "a transfer needs a session_id")
        elif (current := self.owner(session)) not in (None, step.from_agent):
            result = HandoffResult.failure(
                step,
                f"{step.from_agent} cannot transfer session {session}: {current} owns it",
            )
        else:
            result = await self._run(step)
            if result.success:
                self._owners.setdefault(session, [step.from_agent]).append(step.to_agent)
        return self._finish(step, result, start)

    def return_control(self, session_id: str, from_agent: str, output: str = "") -> HandoffResult:
        """``from_agent`` hands ``session_id`` back to whoever transferred it; ``output`` summarises
        its part."""
        chain = self._owners.get(session_id, [])
        back_to = chain[-2] if len(chain) >= 2 else from_agent
        context = HandoffContext(
            handoff_id=self._new_id(),
            timestamp=self._now(),
            session_id=session_id,
            task_description=f"Return control of session {session_id}",
            from_agent=from_agent,
            to_agent=back_to,
            return_to=back_to,
            return_behavior=ReturnBehavior.PASSTHROUGH,
            handoff_type=HandoffType.RETURN,
        )
        start = self._clock()
        if len(chain) < 2:
            return self._finish(
                context,
                HandoffResult.failure(context, f"no transfer to return in session {session_id}"),
                start,
            )
        if chain[-1] != from_agent:
            error = f"{from_agent} cannot return session {session_id}: {chain[-1]} owns it"
            return self._finish(context, HandoffResult.failure(context, error), start)
        chain.pop()
        # Routing is spelled out because the returning agent is the context's sender here.
        result = HandoffResult(
            handoff_id=context.handoff_id,
            from_agent=from_agent,
            to_agent=back_to,
            success=True,
            output=output,
        )
        return self._finish(context, result, start)

    def escalate(self, context: HandoffContext, reason: str) -> HandoffResult:
        """Record that ``context.to_agent`` cannot go on without a person, and say why."""
        if not reason:
            raise ValueError("an escalation needs a reason")
        start = self._clock()
        step = replace(
            context,
            handoff_id=self._new_id(),
            timestamp=self._now(),
            handoff_type=HandoffType.ESCALATE,
            from_agent=context.to_agent,
            to_agent=HUMAN_AGENT_ID,
            return_to=context.return_to,
        )
        result = HandoffResult(
            handoff_id=step.handoff_id,
            from_agent=step.from_agent,
            to_agent=step.return_to,
            success=False,
            needs_human_input=True,
            human_input_reason=reason,
            error=f"escalated to a human: {reason}",
        )
        return self._finish(step, result, start)

    # --- internals ------------------------------------------------------------

    async def _run(self, context: HandoffContext) -> HandoffResult:
        self._frame(
            "HANDOFF",
            {
                "to": context.to_agent,
                "from": context.from_agent,
                "handoff_id": context.handoff_id,
                "type": context.handoff_type.value,
                "mode": context.handoff_mode.value,
            },
        )
        runner = self._agents.get(context.to_agent)
        if runner is None:
            known = ", ".join(self.agents) or "(none)"
            return HandoffResult.failure(
                context, f"unknown agent {context.to_agent!r}; registered: {known}"
            )
        try:
            async with asyncio.timeout(context.timeout_seconds) as scope:
                return await runner(context)
        except TimeoutError as exc:
            # Only our own deadline is a timeout; a TimeoutError raised by the agent is its error.
            if scope.expired():
                return HandoffResult.failure(
                    context,
                    f"agent {context.to_agent!r} timed out after {context.timeout_seconds:g}s",
                )
            return HandoffResult.failure(
                context, f"agent {context.to_agent!r} raised {_describe(exc)}"
            )
        except Exception as exc:
            return HandoffResult.failure(
                context, f"agent {context.to_agent!r} raised {_describe(exc)}"
            )

    def _finish(
        self, context: HandoffContext, result: HandoffResult, start: float
    ) -> HandoffResult:
        result = replace(result, duration_seconds=max(0.0, self._clock() - start))
        self._history.append(HandoffRecord(context=context, result=result))
        self._record_usage(context, result)
        if not result.success:
            self._frame(
                "ERROR",
                {
                    "code": "ESCALATED" if result.needs_human_input else "HANDOFF_FAILED",
                    "message": result.error or result.human_input_reason or "failed",
                    "handoff_id": result.handoff_id,
                    "agent": result.from_agent,
                },
            )
        self._frame(
            "READY",
            {"stage": result.to_agent, "handoff_id": result.handoff_id, "ok": result.success},
        )
        return result

    def _frame(self, type_: str, payload: Mapping[str, Any]) -> None:
        if self._frames is None:
            return
        try:
            line = emit(FRAME_NAMESPACE, type_, payload) + "\n"
        except FrameError as exc:
            logger.warning("no %s frame for handoff %s: %s", type_, payload.get("handoff_id"), exc)
            return
        write = getattr(self._frames, "write", None)
        if write is None:
            self._frames(line)  # type: ignore[operator]
            return
        write(line)
        flush = getattr(self._frames, "flush", None)
        if callable(flush):
            flush()

    def _record_usage(self, context: HandoffContext, result: HandoffResult) -> None:
        if self._usage is None or context.handoff_type is not HandoffType.DELEGATE:
            return
        try:
            self._usage.record_usage(
                context.to_agent,
                context.session_id or context.handoff_id,
                context.handoff_id,
                result.success,
            )
        except Exception as exc:  # a broken usage store must not fail the handoff
            logger.warning("usage of %s not recorded: %s", context.to_agent, _describe(exc))

    async def _gather(self, contexts: Sequence[HandoffContext]) -> tuple[HandoffResult, ...]:
        outcomes = await asyncio.gather(
            *(self._execute(c) for c in contexts), return_exceptions=True
        )
        return tuple(
            (
                outcome
                if isinstance(outcome, HandoffResult)
                else self._finish(
                    context,
                    HandoffResult.failure(context, _describe(outcome)),
                    self._clock(),
                )
            )
            for context, outcome in zip(contexts, outcomes, strict=True)
        )

    def _debate_turn(
        self,
        opener: HandoffContext,
        index: int,
        previous: Sequence[HandoffResult],
        number: int,
        rounds: int,
    ) -> HandoffContext:
        others = tuple(
            PreviousAnalysis.from_result(r)
            for i, r in enumerate(previous)
            if i != index and r.success
        )
        return replace(
            opener,
            handoff_id=self._new_id(),
            timestamp=self._now(),
            previous_analyses=opener.previous_analyses + others,
            task_description=(
                f"{opener.task_description}\n\nDebate round {number} of {rounds}: respond to the "
                "other "
                "positions under Previous Analyses, defending or revising your own."
            ),
        )

    def _synthesis_context(
        self,
        results: Sequence[HandoffResult],
        context: HandoffContext,
        synthesizer: str,
    ) -> HandoffContext:
        done = tuple(PreviousAnalysis.from_result(r) for r in results if r.success)
        failed = tuple(f"{r.from_agent}: {r.error or 'failed'}" for r in results if not r.success)
        task = (
            f"Synthesize the {len(done)} analyses under Previous Analyses into one answer to: "
            f"{context.task_description}"
        )
        if failed:
            task += f"\n\nThese handoffs failed and are not included:\n{bullets(failed)}"
        return replace(
            context,
            handoff_id=self._new_id(),
            timestamp=self._now(),
            previous_analyses=context.previous_analyses + done,
            task_description=task,
            from_agent=context.return_to,
            to_agent=synthesizer,
            handoff_type=HandoffType.DELEGATE,
            handoff_mode=HandoffMode.SEQUENTIAL,
        )


#: Ranks every registered framework, so a candidate is never cut off by the selection limit.
_RANK_ALL = 10_000


def selection_text(context: HandoffContext) -> str:
    """The words of a context the registry's free-text selection reads: task, problem, focus."""
    clarity = context.problem_clarity
    parts = (
        context.task_description,
        clarity.what or "",
        clarity.who or "",
        clarity.success or "",
        *context.focus_areas,
    )
    return "\n".join(p for p in parts if p)


def registry_chooser(registry: _SelectsText) -> Chooser:
    """A chooser picking the candidate the registry ranks highest for the context.

    The frameworks of the context's previous analyses count as already used, so
    the chain bonus goes to their successors. Raises LookupError (a failed
    handoff) when the registry ranks none of the candidates.
    """

    def choose(context: HandoffContext, candidates: tuple[str, ...]) -> str:
        text = selection_text(context)
        previous = tuple(a.agent_id for a in context.previous_analyses)
        ranked = registry.select_text(text, previous=previous, limit=_RANK_ALL)
        for selection in ranked:
            if selection.id in candidates:
                return str(selection.id)
        raise LookupError(
            f"the registry ranks none of the candidates ({', '.join(candidates) or 'none'}) "
            "for this context"
        )

    return choose


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


#: Process-wide manager for applications that want one (seed 000 §7.3); tests make their own.
handoff_manager = HandoffManager()
