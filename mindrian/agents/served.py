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
  so a restarted server or another replica continues where it stopped; an answer
  sent with an ``Idempotency-Key`` header is taken once: the key is kept with the
  progress (the same write), and a request with a key already taken, a client's
  retry after a timeout, is answered with where the session stands, even from
  another replica while the first is between the two writes that store the run
  (the session's row, then the run's);
* with host tools enabled (``mindrian serve --host-tools``), host tool calls
  work in a folder of the run's user, and an operator's or a role agent's call
  no rule allows pauses the run with AgentOS's human-in-the-loop confirmation: the run
  is ``PAUSED`` with one requirement per pending call, the client confirms or
  rejects each (``tools`` on the continue route, ``confirmed`` true or false),
  and the run goes on. Agno's ``requires_confirmation`` is per tool, so every
  host tool asks for it and the agent confirms itself the calls a rule allows
  (:meth:`~mindrian.agents.base.MindrianAgent._settled`): only the others reach
  the client. The paused Agno run is kept in the session's ``session_data``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from copy import copy
from dataclasses import replace
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
from agno.run.requirement import RunRequirement
from agno.session.agent import AgentSession

from mindrian.agents.base import AgentReply, ConfirmationNeeded, MindrianAgent, render_output
from mindrian.agents.errors import AgentRunError
from mindrian.agents.guided import BACK, GuidedAgent, GuidedProgress
from mindrian.agents.operator import OperatorAgent
from mindrian.agents.role import RoleAgent
from mindrian.host import ToolLog, scoped_session
from mindrian.providers import ModelUnavailableError

__all__ = [
    "ANSWERS_STATE_KEY",
    "GUIDED_STATE_KEY",
    "HOST_STATE_KEY",
    "REQUEST_KEY",
    "ServedAgent",
    "user_folder",
]

#: Key of a guided session's progress in the AgentOS session's ``session_data``.
GUIDED_STATE_KEY = "mindrian_guided"
#: Key of the paused Agno runs waiting for host tool confirmations, by run id, in
#: ``session_data``.
HOST_STATE_KEY = "mindrian_host_pending"
#: Key of the guided answers taken, by ``Idempotency-Key``, in ``session_data``: what each
#: answered (a digest of the run and the answer), oldest first.
ANSWERS_STATE_KEY = "mindrian_guided_answers"
#: The ``Idempotency-Key`` of the request being served (set by ``mindrian serve``'s middleware,
#: :class:`mindrian.serve.IdempotencyKey`); None without one.
REQUEST_KEY: ContextVar[str | None] = ContextVar("mindrian_request_key", default=None)
#: Answers' keys a session keeps: a retry comes soon after its answer.
_KEPT_ANSWERS = 64
#: run_state key telling ``_annotate_run_output`` that the run waits for the user.
_PAUSED = "paused"
#: run_state key holding the host tool calls a paused run waits on.
_CONFIRM = "confirm"
_PLAIN_USER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@agent_dataclass
class ServedAgent(BaseExternalAgent):
    """One Mindrian agent behind AgentOS's agent routes (build with :meth:`of`)."""

    mindrian: Any = None
    """The :class:`~mindrian.agents.base.MindrianAgent` doing the work."""

    _sdk_name: ClassVar[str] = "mindrian"
    _supports_output_schema: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        self._paused_runs: dict[str, list[RunRequirement] | None] = {}
        """Runs that ended waiting for the user (with the host tool calls they wait on), until
        their stream's terminal event is sent."""

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
        user_id: str | None = kwargs.get("user_id")
        async with agent.mcp_connections():
            try:
                with _host_scope(agent, user_id):
                    if isinstance(agent, GuidedAgent):
                        reply = await self._guided_turn(agent, message, session, session_id)
                    elif isinstance(agent, RoleAgent):
                        exchanges = _exchanges(history)
                        reply = await agent.turn(message, exchanges, session_id=session_id)
                    else:
                        owned = _owned_key(session_id, user_id)
                        reply = await agent.run(message, session_id=owned)
            except ConfirmationNeeded as pause:
                return _await_confirmation(pause, session, kwargs)
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
            self._paused_runs[run.run_id or ""] = None
        if run_state.get(_CONFIRM) and run.status == RunStatus.completed:
            run.status = RunStatus.paused
            run.requirements = [RunRequirement(tool_execution=c) for c in run_state[_CONFIRM]]
            self._paused_runs[run.run_id or ""] = run.requirements

    async def _arun_stream(self, input: Any, **kwargs: Any) -> AsyncIterator[Any]:
        # Agno ends every successful stream with RunCompleted; a paused run ends with RunPaused.
        async for event in super()._arun_stream(input, **kwargs):
            if isinstance(event, RunCompletedEvent) and event.run_id in self._paused_runs:
                waiting = self._paused_runs.pop(event.run_id or "")
                event = RunPausedEvent(
                    run_id=event.run_id,
                    session_id=event.session_id,
                    agent_id=event.agent_id,
                    agent_name=event.agent_name,
                    content=event.content,
                    requirements=waiting,
                    tools=[r.tool_execution for r in waiting or () if r.tool_execution],
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
        answers = _answers(_options.get("requirements") or ())
        key = REQUEST_KEY.get()
        work = self._continue(run_id or "", input or "", session_id or "", user_id, answers, key)
        return _as_events(self, work) if stream else work

    async def _continue(
        self,
        run_id: str,
        answer: str,
        session_id: str,
        user_id: str | None,
        answers: Mapping[str, bool] | None = None,
        key: str | None = None,
    ) -> RunOutput:
        agent: MindrianAgent = self.mindrian
        session = await self.aread_or_create_session(session_id, user_id)
        run = session.get_run(run_id)
        # The guided progress is the session owner's: nobody else answers its steps (an
        # admin scope reads every session through AgentOS, but does not act as its owner).
        foreign = user_id is not None and session.user_id not in (None, user_id)
        if not isinstance(run, RunOutput) or foreign:
            raise RunNotFoundError(f"no run {run_id!r} in session {session_id!r}")
        held = _held_runs(session).get(run_id)
        if held is not None and run.status == RunStatus.paused:
            return await self._confirmed(agent, session, run, held, answers or {}, user_id)
        try:
            progress = _saved_progress(session, agent) if isinstance(agent, GuidedAgent) else None
        except AgentRunError as damaged:
            raise RunNotContinuableError(str(damaged)) from None
        if isinstance(agent, GuidedAgent) and progress is not None and key is not None:
            taken = _taken(session, key)
            if taken is not None:
                if taken != _answer_digest(run_id, answer):
                    raise RunNotContinuableError(
                        f"Idempotency-Key {key!r} was sent with another answer: a new answer "
                        "needs a new key"
                    )
                return _as_it_stands(agent, progress, run)
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
            await self._advance(agent, progress, answer, session, run, key)
            await self._apersist_run_in_session(session, run)
        finally:
            self._release_session(session_id, run_id)
        return run

    async def _confirmed(
        self,
        agent: MindrianAgent,
        session: AgentSession,
        run: RunOutput,
        held: dict[str, Any],
        answers: Mapping[str, bool],
        user_id: str | None,
    ) -> RunOutput:
        """Go on with a run whose host tool calls waited for the client, each now answered."""
        paused = RunOutput.from_dict(held)
        waiting = [r for r in paused.active_requirements if r.needs_confirmation]
        missing = [_label(r) for r in waiting if _call_id(r) not in answers]
        if missing:
            raise RunNotContinuableError(
                "confirm or reject every pending call (tools: [{tool_call_id, confirmed}]): "
                + ", ".join(missing)
            )
        for requirement in waiting:
            _answer(paused, requirement, answers[_call_id(requirement)])
        run_id, session_id = run.run_id or "", run.session_id or ""
        self._claim_session(session, session_id, run_id)
        try:
            await self._resumed(agent, session, run, paused, user_id)
            await self._apersist_run_in_session(session, run)
        finally:
            self._release_session(session_id, run_id)
        return run

    async def _resumed(
        self,
        agent: MindrianAgent,
        session: AgentSession,
        run: RunOutput,
        paused: RunOutput,
        user_id: str | None,
    ) -> None:
        """Resume ``paused`` and record on ``run`` how it ended: paused again, failed or done."""
        held = _held_runs(session)
        try:
            with _host_scope(agent, user_id):
                reply = await agent.resume(paused)
        except ConfirmationNeeded as pause:
            held[run.run_id or ""] = _plain(pause.run)
            pending = [RunRequirement(tool_execution=r.tool_execution) for r in pause.pending]
            run.requirements = pending
            run.content, run.content_type = f"Waiting for confirmation: {pause}", "str"
            return
        except AgentRunError as error:
            held.pop(run.run_id or "", None)
            run.status, run.content, run.content_type = RunStatus.error, str(error), "str"
            return
        held.pop(run.run_id or "", None)
        run.status, run.content, run.content_type = RunStatus.completed, _shown(reply), "str"
        run.requirements = None
        self._apply_output_schema(run, self.output_schema, reply.structured)

    async def _advance(
        self,
        agent: GuidedAgent,
        progress: GuidedProgress,
        answer: str,
        session: AgentSession,
        run: RunOutput,
        key: str | None = None,
    ) -> None:
        """Apply ``answer`` and record the outcome on ``run``; a failure keeps the progress.

        ``key`` (the request's ``Idempotency-Key``) is kept with the progress it led to."""
        now = int(time())
        run.messages = [*(run.messages or []), Message(role="user", content=answer, created_at=now)]
        try:
            async with agent.mcp_connections():
                with _host_scope(agent, session.user_id):
                    moved, reply = await agent.advance(progress, answer)
        except AgentRunError as error:
            run.status, run.content, run.content_type = RunStatus.error, str(error), "str"
            return
        _keep_progress(session, moved)
        if key is not None:
            _remember(session, key, _answer_digest(run.run_id or "", answer))
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


def user_folder(user_id: str | None) -> str:
    """The folder of a served user's host tools under the served root: the user id when it is
    a plain name, else a digest of it (never ``..``, a path, or another user's name)."""
    if user_id is None:
        return "anonymous"
    if _PLAIN_USER.fullmatch(user_id) and user_id != "anonymous":
        return user_id
    return "u-" + hashlib.sha256(user_id.encode()).hexdigest()[:32]


def _host_scope(agent: MindrianAgent, user_id: str | None) -> AbstractContextManager[None]:
    """The run's host tools in its user's own folder (created on first use), with a log of its
    own; nothing when the agent has no host tools."""
    own = agent.host
    if own is None:
        return nullcontext()
    folder = own.workspace / user_folder(user_id)
    folder.mkdir(mode=0o700, exist_ok=True)
    return scoped_session(replace(own, workspace=folder, log=ToolLog()))


def _await_confirmation(
    pause: ConfirmationNeeded, session: AgentSession | None, kwargs: dict[str, Any]
) -> ExternalRunResult:
    """The run's answer while its host tool calls wait: the paused Agno run is kept with the
    session, the calls become the run's requirements (``_annotate_run_output``)."""
    if session is None:
        raise AgentRunError("a run waiting for confirmation needs the session database")
    _held_runs(session)[kwargs["run_id"]] = _plain(pause.run)
    kwargs["run_state"][_CONFIRM] = [r.tool_execution for r in pause.pending]
    return ExternalRunResult(content=f"Waiting for confirmation: {pause}")


def _held_runs(session: AgentSession) -> dict[str, Any]:
    if session.session_data is None:
        session.session_data = {}
    held = session.session_data.setdefault(HOST_STATE_KEY, {})
    assert isinstance(held, dict)
    return held


def _plain(run: RunOutput) -> dict[str, Any]:
    """A run as JSON-ready data (the session database stores JSON)."""
    data: dict[str, Any] = json.loads(json.dumps(run.to_dict(), default=str))
    return data


def _answers(requirements: Iterable[Any]) -> dict[str, bool]:
    """The client's answer to each pending call, by tool call id."""
    answers = {}
    for requirement in requirements:
        execution = getattr(requirement, "tool_execution", requirement)
        said = getattr(requirement, "confirmation", None)
        said = execution.confirmed if said is None else said
        if execution is not None and execution.tool_call_id and said is not None:
            answers[execution.tool_call_id] = bool(said)
    return answers


def _call_id(requirement: RunRequirement) -> str:
    execution = requirement.tool_execution
    return (execution.tool_call_id if execution is not None else None) or ""


def _answer(paused: RunOutput, requirement: RunRequirement, yes: bool) -> None:
    """Record an answer where Agno reads it: the requirement and the run's tool execution."""
    requirement.confirmation = yes
    for execution in [requirement.tool_execution, *(paused.tools or ())]:
        if execution is not None and execution.tool_call_id == _call_id(requirement):
            execution.confirmed = yes


def _label(requirement: RunRequirement) -> str:
    execution = requirement.tool_execution
    return f"{_call_id(requirement)} ({execution.tool_name if execution else '?'})"


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
    if session is None:
        return None
    data = (session.session_data or {}).get(GUIDED_STATE_KEY)
    if not isinstance(data, dict):
        return None
    try:
        progress = GuidedProgress.from_data(data)
    except (KeyError, TypeError, ValueError) as error:
        # As a damaged state file (mindrian.agents._state.load_state): named, not a KeyError.
        raise AgentRunError(
            f"session {session.session_id!r}: damaged guided progress in its session_data "
            f"[{GUIDED_STATE_KEY!r}] ({type(error).__name__}: {error}); delete the session to "
            "start over",
            retryable=False,
        ) from None
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


def _answer_digest(run_id: str, answer: str) -> str:
    """What an ``Idempotency-Key`` stands for: one answer to one run."""
    return hashlib.sha256(f"{run_id}\0{answer}".encode()).hexdigest()


def _taken(session: AgentSession, key: str) -> str | None:
    """The digest of the answer taken with ``key`` in ``session``, or None."""
    taken = (session.session_data or {}).get(ANSWERS_STATE_KEY)
    found = taken.get(key) if isinstance(taken, dict) else None
    return found if isinstance(found, str) else None


def _remember(session: AgentSession, key: str, digest: str) -> None:
    """Keep ``key`` beside the progress it led to (one write), the oldest beyond
    :data:`_KEPT_ANSWERS` dropped."""
    if session.session_data is None:
        session.session_data = {}
    kept = session.session_data.get(ANSWERS_STATE_KEY)
    taken = {k: v for k, v in kept.items() if k != key} if isinstance(kept, dict) else {}
    taken[key] = digest
    session.session_data[ANSWERS_STATE_KEY] = dict(list(taken.items())[-_KEPT_ANSWERS:])


def _as_it_stands(agent: GuidedAgent, progress: GuidedProgress, run: RunOutput) -> RunOutput:
    """``run`` showing where the session stands, from its progress: the stored run may not have
    been written yet (a retry between the two writes), and nothing is written here."""
    reply = agent.current_reply(progress)
    shown = copy(run)
    shown.content, shown.content_type = _shown(reply), "str"
    shown.status = RunStatus.paused if reply.awaiting_input else RunStatus.completed
    return shown
