"""Mindrian agents as AgentOS serves them: Agno's external-agent protocol on the wrapper.

Serving a generated agent's Agno object (``.agent``) directly would lose what
the wrapper guarantees: Agno 3.1 completes a run whose answer fails the output
schema (the text comes back with a logged warning), drops an unreachable MCP
server silently, feeds a failed workflow step's error to the next step, and has
no pause between the steps of a guided session. So AgentOS serves the wrapper
itself, through :class:`ServedAgent`, a ``BaseExternalAgent`` (the adapter base
Agno provides for agents it does not build). Agno's base keeps what AgentOS
needs: run ids, sessions and runs in the AgentOS database (SQLite or
PostgreSQL, so replicas share them), run events and the HTTP routes.

What Agno runs is then exactly the wrapper's behaviour:

* any :class:`~mindrian.agents.base.AgentRunError` (schema mismatch, missing
  required MCP server, failed pipeline phase, ...) ends the run with status
  ``ERROR`` and the error text as content, never ``COMPLETED``;
* the MCP servers are connected and checked before the model is asked anything;
* an operator's answer is the parsed output schema (``content_type`` is its name);
* a role agent's history is the AgentOS session's, so every replica sees it;
* a guided session is one run that pauses (status ``PAUSED``) after each step;
  AgentOS's continue route (``acontinue_run``) carries the user's answer, or
  ``back``/``skip``, and the progress lives in the session's ``session_data``,
  so a restarted server or another replica continues where it stopped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from copy import copy
from time import time
from typing import Any, ClassVar

from agno.agents._config import agent_dataclass
from agno.agents.base import BaseExternalAgent, ExternalRunResult
from agno.exceptions import RunNotContinuableError, RunNotFoundError
from agno.models.message import Message
from agno.run.agent import (
    RunCompletedEvent,
    RunContentEvent,
    RunErrorEvent,
    RunOutput,
    RunOutputEvent,
    RunPausedEvent,
)
from agno.run.base import RunStatus
from agno.session.agent import AgentSession

from mindrian.agents.base import AgentReply, MindrianAgent, render_output
from mindrian.agents.errors import AgentRunError
from mindrian.agents.guided import BACK, GuidedAgent, GuidedProgress
from mindrian.agents.operator import OperatorAgent
from mindrian.agents.role import RoleAgent
from mindrian.providers import ModelUnavailableError

__all__ = ["GUIDED_STATE_KEY", "ServedAgent"]

#: Key of a guided session's progress in the AgentOS session's ``session_data``.
GUIDED_STATE_KEY = "mindrian_guided"
#: run_state key telling ``_annotate_run_output`` that the run waits for the user.
_PAUSED = "paused"


@agent_dataclass
class ServedAgent(BaseExternalAgent):
    """One Mindrian agent behind AgentOS's agent routes (build with :meth:`of`)."""

    mindrian: Any = None
    """The :class:`~mindrian.agents.base.MindrianAgent` doing the work."""

    _sdk_name: ClassVar[str] = "mindrian"
    _supports_output_schema: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        self._paused_runs: set[str] = set()
        """Runs that ended waiting for the user, until their stream's terminal event is sent."""

    @classmethod
    def of(cls, agent: MindrianAgent, *, db: Any = None) -> ServedAgent:
        """Serve ``agent``; ``db`` holds its sessions (None: AgentOS gives it its own)."""
        schema = agent.output_schema if isinstance(agent, OperatorAgent) else None
        return cls(
            mindrian=agent,
            id=agent.agent_id,
            name=agent.name or agent.agent_id,
            description=agent.description or None,
            db=db,
            output_schema=schema,
        )

    def _is_retryable_error(self, error: Exception) -> bool:
        """A run whose model cannot be asked (no API key, no SDK) fails the same way every time:
        ``retryable`` is false in its metadata, so a client does not send it again."""
        if isinstance(error, ModelUnavailableError):
            return False
        if isinstance(error, AgentRunError) and not error.retryable:
            return False
        return bool(super()._is_retryable_error(error))

    # -- a new run ----------------------------------------------------------------------

    async def _arun_adapter(
        self, input: Any, *, history: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> ExternalRunResult:
        agent: MindrianAgent = self.mindrian
        message = _text(input)
        session: AgentSession | None = kwargs.get("session")
        session_id: str = kwargs["session_id"]
        async with agent.mcp_connections():
            if isinstance(agent, GuidedAgent):
                reply = await self._guided_turn(agent, message, session, session_id)
            elif isinstance(agent, RoleAgent):
                reply = await agent.turn(message, _exchanges(history), session_id=session_id)
            else:
                owned = _owned_key(session_id, kwargs.get("user_id"))
                reply = await agent.run(message, session_id=owned)
        if reply.awaiting_input:
            kwargs["run_state"][_PAUSED] = True
        return ExternalRunResult(content=_shown(reply), structured_output=reply.structured)

    async def _arun_adapter_stream(
        self, input: Any, *, history: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> AsyncIterator[RunOutputEvent]:
        # The wrapper answers whole (its checks need the full answer): the stream is one event.
        result = await self._arun_adapter(input, history=history, **kwargs)
        yield RunContentEvent(
            run_id=kwargs.get("run_id"),
            session_id=kwargs.get("session_id"),
            agent_id=self.get_id(),
            agent_name=self.name or "",
            content=result.content,
        )
        if result.structured_output is not None:
            from agno.agents.base import ExternalRunStructuredOutputEvent

            yield ExternalRunStructuredOutputEvent(structured_output=result.structured_output)

    def _get_history_from_session(
        self, session: AgentSession, exclude_run_id: str | None = None
    ) -> list[dict[str, Any]]:
        # A failed or refused run's error text is not something the agent said.
        answered = copy(session)
        answered.runs = [r for r in session.runs or [] if r.status == RunStatus.completed]
        return super()._get_history_from_session(answered, exclude_run_id=exclude_run_id)

    def _annotate_run_output(self, run: RunOutput, run_state: dict[str, Any]) -> None:
        if run_state.get(_PAUSED) and run.status == RunStatus.completed:
            run.status = RunStatus.paused
            self._paused_runs.add(run.run_id or "")

    async def _arun_stream(self, input: Any, **kwargs: Any) -> AsyncIterator[Any]:
        # Agno ends every successful stream with RunCompleted; a paused run ends with RunPaused.
        async for event in super()._arun_stream(input, **kwargs):
            if isinstance(event, RunCompletedEvent) and event.run_id in self._paused_runs:
                self._paused_runs.discard(event.run_id)
                event = RunPausedEvent(
                    run_id=event.run_id,
                    session_id=event.session_id,
                    agent_id=event.agent_id,
                    agent_name=event.agent_name,
                    content=event.content,
                )
            yield event

    async def _guided_turn(
        self,
        agent: GuidedAgent,
        message: str,
        session: AgentSession | None,
        session_id: str,
    ) -> AgentReply:
        """Start a guided session, or take ``message`` as the answer when one is open."""
        progress = _saved_progress(session, agent)
        if progress is not None and not progress.finished(len(agent.steps)):
            moved, reply = await agent.advance(progress, message)
        else:
            moved, reply = await agent.begin(message, session_id=session_id)
        _keep_progress(session, moved)
        return reply

    # -- continuing a paused guided run -------------------------------------------------------

    def acontinue_run(
        self,
        run_id: str | None = None,
        *,
        input: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        stream: bool | None = False,
        **_options: Any,
    ) -> Any:
        """AgentOS's continue route: the user's answer to the step a paused guided run shows.

        ``input`` is the answer, ``back`` or ``skip``. The same run goes on: it
        pauses again at the next step, or completes after the last. Returns the
        run (or, with ``stream``, an iterator ending with its terminal event).
        Raises ``RunNotFoundError`` (404) for an unknown run and
        ``RunNotContinuableError`` (409) for a run that is not a paused guided step.
        """
        work = self._continue(run_id or "", input or "", session_id or "", user_id)
        return _as_events(self, work) if stream else work

    async def _continue(
        self, run_id: str, answer: str, session_id: str, user_id: str | None
    ) -> RunOutput:
        agent: MindrianAgent = self.mindrian
        session = await self.aread_or_create_session(session_id, user_id)
        run = session.get_run(run_id)
        # The guided progress is the session owner's: nobody else answers its steps (an
        # admin scope reads every session through AgentOS, but does not act as its owner).
        foreign = user_id is not None and session.user_id not in (None, user_id)
        if not isinstance(run, RunOutput) or foreign:
            raise RunNotFoundError(f"no run {run_id!r} in session {session_id!r}")
        progress = _saved_progress(session, agent) if isinstance(agent, GuidedAgent) else None
        if (
            not isinstance(agent, GuidedAgent)
            or progress is None
            or progress.finished(len(agent.steps))
            or run.status not in (RunStatus.paused, RunStatus.error)
        ):
            status = getattr(run.status, "value", run.status)
            raise RunNotContinuableError(
                f"run {run_id!r} of {self.get_id()!r} is {status}: only a guided run waiting "
                "for the user can be continued"
            )
        if answer.strip().lower() == BACK and progress.position == 0:
            raise RunNotContinuableError("cannot go back from the first step")
        self._claim_session(session, session_id, run_id)
        try:
            await self._advance(agent, progress, answer, session, run)
            await self._apersist_run_in_session(session, run)
        finally:
            self._release_session(session_id, run_id)
        return run

    async def _advance(
        self,
        agent: GuidedAgent,
        progress: GuidedProgress,
        answer: str,
        session: AgentSession,
        run: RunOutput,
    ) -> None:
        """Apply ``answer`` and record the outcome on ``run``; a failure keeps the progress."""
        now = int(time())
        run.messages = [*(run.messages or []), Message(role="user", content=answer, created_at=now)]
        try:
            async with agent.mcp_connections():
                moved, reply = await agent.advance(progress, answer)
        except AgentRunError as error:
            run.status, run.content, run.content_type = RunStatus.error, str(error), "str"
            return
        _keep_progress(session, moved)
        shown = _shown(reply)
        run.messages.append(Message(role="assistant", content=shown, created_at=now))
        run.content, run.content_type = shown, "str"
        run.status = RunStatus.paused if reply.awaiting_input else RunStatus.completed


async def _as_events(served: ServedAgent, work: Any) -> AsyncIterator[Any]:
    """The continued run as a stream: its terminal event (paused, completed or error)."""
    run: RunOutput = await work
    event = (
        RunPausedEvent
        if run.status == RunStatus.paused
        else RunErrorEvent
        if run.status == RunStatus.error
        else RunCompletedEvent
    )
    yield event(
        run_id=run.run_id,
        session_id=run.session_id,
        agent_id=served.get_id(),
        agent_name=served.name or "",
        content=run.content,
    )


def _owned_key(session_id: str, user_id: str | None) -> str:
    """The id the wrapper keys its own files by (pipeline checkpoints): the owner's session.

    A session id is free again once its owner deletes the session, so another
    user may take it; keyed by id alone, their run would resume the first
    owner's checkpoint and show its partial results.
    """
    if user_id is None:
        return session_id
    return "u-" + hashlib.sha256(f"{user_id}\0{session_id}".encode()).hexdigest()[:40]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _shown(reply: AgentReply) -> str:
    """What the user reads: the answer (with partials), and the question when the agent waits."""
    text = render_output(reply) if not reply.awaiting_input else reply.content
    return f"{text}\n\n{reply.prompt_for_user}" if reply.awaiting_input else text


def _exchanges(history: Sequence[Mapping[str, Any]] | None) -> list[tuple[str, str]]:
    """The user and assistant messages of earlier runs, as (role, content) pairs."""
    return [
        (str(m["role"]), str(m.get("content") or ""))
        for m in history or ()
        if m.get("role") in ("user", "assistant") and m.get("content")
    ]


def _saved_progress(session: AgentSession | None, agent: MindrianAgent) -> GuidedProgress | None:
    data = (session.session_data or {}).get(GUIDED_STATE_KEY) if session is not None else None
    if not isinstance(data, dict):
        return None
    progress = GuidedProgress.from_data(data)
    if progress.agent_id != agent.agent_id:
        raise AgentRunError(
            f"session {progress.session_id!r} belongs to agent {progress.agent_id!r}, "
            f"not {agent.agent_id!r}"
        )
    return progress


def _keep_progress(session: AgentSession | None, progress: GuidedProgress) -> None:
    if session is None:
        return
    if session.session_data is None:
        session.session_data = {}
    session.session_data[GUIDED_STATE_KEY] = json.loads(progress.to_json())
