"""What every Mindrian agent shares: identity, lazy Agno construction, handoff handling.

A generated agent is a subclass of one of the per-type bases that only sets
class attributes (id, name, model, instructions, tools, ...). Behaviour lives
here and in the per-type modules, so regenerating an agent never touches logic.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from agno.agent import Agent
from agno.models.base import Model
from agno.run.base import RunStatus

from mindrian.agents.errors import AgentRunError, HandoffRefusedError
from mindrian.agents.mcp import connected_servers
from mindrian.handoff import (
    HandoffContext,
    HandoffResult,
    HandoffType,
    PreviousAnalysis,
    ProblemClarity,
    ReturnBehavior,
)
from mindrian.host.gate import HostGrant
from mindrian.model_choice import ModelRef, model_from_environment
from mindrian.model_settings import ModelSettings
from mindrian.providers import ModelUnavailableError, missing_key, run_model

if TYPE_CHECKING:
    from mindrian.agents.package import AgentPackage
    from mindrian.host import HostSession

__all__ = [
    "STATE_DIR_ENV",
    "AgentReply",
    "ConfirmationNeeded",
    "MindrianAgent",
    "ModelRef",
    "Partial",
    "check_run",
    "failed_status",
    "render_output",
    "resolve_state_dir",
    "slug",
    "text_of",
]

#: Environment variable naming the directory where agents keep state.
STATE_DIR_ENV = "MINDRIAN_STATE_DIR"

#: Where a run says what it changed in the spec's model settings (one line each, on stderr).
_LOG = logging.getLogger("mindrian.agents")


class ConfirmationNeeded(Exception):  # a signal, like the workflow's Pause
    """A served run's host tool calls wait for the client's confirmation (not a failure).

    Raised only where the agent's tools pause the run (``HostSession.confirm_in_run``): the
    served agent stores ``run`` with the session, shows ``pending`` to the client, and gives
    the run back to :meth:`MindrianAgent.resume` once each call is confirmed or rejected.
    """

    def __init__(self, run: Any, pending: tuple[Any, ...]) -> None:
        super().__init__(", ".join(_call_label(r.tool_execution) for r in pending))
        self.run = run
        """The paused Agno ``RunOutput``."""
        self.pending = pending
        """Its ``RunRequirement`` objects that need someone's answer."""


def _call_label(execution: Any) -> str:
    arguments = execution.tool_args or {}
    subject = next(iter(arguments.values()), "") if arguments else ""
    return f"{execution.tool_name}({subject})"


@dataclass(frozen=True)
class Partial:
    """One named intermediate output: a pipeline phase, a team member, a guided step."""

    name: str
    """Phase, member or step name."""
    output: str
    """What it produced."""
    status: str = "done"
    """done, or skipped (guided steps the user skipped)."""
    user_input: str = ""
    """What the user answered after seeing it (guided steps)."""


@dataclass(frozen=True)
class AgentReply:
    """The outcome of one ``run``."""

    content: str
    """The final answer as text (markdown)."""
    structured: Mapping[str, Any] | None = None
    """Fields of the output schema, when the agent has one."""
    partials: tuple[Partial, ...] = ()
    """Intermediate outputs in the order they were produced."""
    awaiting_input: bool = False
    """True when the agent paused for the user (guided agents)."""
    prompt_for_user: str = ""
    """What the user is asked when ``awaiting_input``."""


_process_state_dir: Path | None = None

#: Public methods that start work on the agent's tools: ``run`` and the guided session API.
_RUN_METHODS = ("run", "start", "respond")
#: ids of the agents whose MCP servers the current task already holds (nested calls reuse them).
_HOLDING_SERVERS: ContextVar[frozenset[int]] = ContextVar(
    "mindrian_holding_servers", default=frozenset()
)
_R = TypeVar("_R")

#: HandoffResult fields an agent's structured answer may fill; the rest come from the context or the
#: run.
_CONTENT_FIELDS = frozenset(f.name for f in fields(HandoffResult)) - {
    "handoff_id",
    "from_agent",
    "to_agent",
    "success",
    "output",
    "output_format",
    "duration_seconds",
    "error",
}


def resolve_state_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The state directory: ``explicit``, else ``$MINDRIAN_STATE_DIR``, else a per-process temp dir.

    The temp dir is made once per process and shared by every agent in it; a
    restarted process makes a new one and so does not find earlier state. Pass a
    directory (or set the variable) for state that must outlive the process.
    """
    global _process_state_dir
    chosen = explicit if explicit is not None else os.environ.get(STATE_DIR_ENV)
    if chosen:
        path = Path(chosen)
    else:
        if _process_state_dir is None:
            _process_state_dir = Path(tempfile.mkdtemp(prefix="mindrian-state-"))
        path = _process_state_dir
    path.mkdir(parents=True, exist_ok=True)
    return path


def failed_status(status: Any) -> bool:
    """Whether an Agno run status means the run produced no answer."""
    return status is not None and status != RunStatus.completed


def text_of(content: Any) -> str:
    """Run content as text: strings as they are, None as "", anything else via str()."""
    return content if isinstance(content, str) else ("" if content is None else str(content))


class MindrianAgent(ABC):
    """Base of the five agent types.

    Subclasses (usually generated) set the class attributes; tests pass
    ``model=`` (a model object such as ``ScriptedModel``, or a "provider:id"
    string) and, for agents made of several Agno agents, ``part_models=`` keyed
    by part name (perspective, phase or step); parts without an entry use ``model``.
    Without ``model=``, ``$MINDRIAN_MODEL`` (see :mod:`mindrian.model_choice`) overrides
    the class's ``model``.
    """

    agent_id: ClassVar[str] = ""
    """Stable id (e.g. ``pws-validation``); the handoff address of the agent."""
    name: ClassVar[str] = ""
    """Human-readable name."""
    agent_type: ClassVar[str] = ""
    """The name of its type (:mod:`mindrian.agent_types`), set by each base."""
    model: ClassVar[str] = "anthropic:claude-sonnet-4-5"
    """Default model as "provider:model_id"."""
    description: ClassVar[str] = ""
    """One-line description, given to Agno."""
    instructions: ClassVar[str] = ""
    """The agent's instructions (methodology, rules, output template)."""
    tools: ClassVar[tuple[Any, ...]] = ()
    """Tools (functions or Agno toolkits) given to every Agno agent built."""
    mcp_servers: ClassVar[tuple[Mapping[str, Any], ...]] = ()
    """Plain specs of the MCP servers behind the ``MCPTools`` in ``tools`` (spec.yaml ``tools``).

    Each has at least ``name`` (the toolkit's name), ``required`` and ``tools``
    (names the agent uses). Before every run the toolkits are connected and a
    required server that is down, or lacks one of its tools, fails the run.
    """
    accepted_handoffs: ClassVar[frozenset[HandoffType]] = frozenset({HandoffType.DELEGATE})
    """Handoff types ``process_handoff`` accepts; others fail."""
    references: ClassVar[Mapping[str, Path]] = {}
    """On-demand reference elements: name -> its file (in the package's ``skill/`` folder);
    when any, Agno agents get ``read_reference``, which reads the file at the call."""
    model_settings: ClassVar[ModelSettings] = ModelSettings()
    """Temperature, response cap and thinking budget applied to every model built from a string."""
    min_clarity: ClassVar[float] = 0.0
    """Overall problem clarity a handoff needs; below it the model is not asked."""
    allowed_callers: ClassVar[frozenset[str]] = frozenset()
    """Agent ids that may hand work to this agent; empty means anyone."""
    return_behavior: ClassVar[ReturnBehavior | None] = None
    """How ``HandoffManager`` delivers this agent's results; None leaves it to the context."""
    package: ClassVar[AgentPackage | None] = None
    """The generated package the class was declared from, if any."""
    host_grant: ClassVar[HostGrant] = HostGrant()
    """The host tools the package grants (Bash, Read…) and the calls it pre-approves."""
    skill_dir: ClassVar[Path | None] = None
    """The package's copy of the skill's files (readable by the host tools, never writable)."""

    def __init_subclass__(cls, package: AgentPackage | None = None, **kwargs: Any) -> None:
        # A generated class names its package; the package's data becomes the class attributes.
        super().__init_subclass__(**kwargs)
        if package is not None:
            attributes = package.class_attributes(cls.agent_type)
            attributes.update(cls.type_attributes(package))
            for name, value in attributes.items():
                setattr(cls, name, value)
        # The run methods are the subclasses' own; wrapping them checks MCP servers on every path
        # in.
        for name in _RUN_METHODS:
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "_holds_servers", False):
                setattr(cls, name, _holding_servers(method))

    @classmethod
    def type_attributes(cls, package: AgentPackage) -> dict[str, Any]:
        """The class attributes only this type has, read from ``package`` (each base says)."""
        return {}

    def __init__(
        self,
        *,
        model: ModelRef | None = None,
        part_models: Mapping[str, ModelRef] | None = None,
    ) -> None:
        if not self.agent_id:
            raise TypeError(f"{type(self).__name__} must set the class attribute agent_id")
        if model is None:
            model = model_from_environment(self.agent_id, self.model)
        self._model: ModelRef = model if model is not None else self.model
        self._part_models: dict[str, ModelRef] = dict(part_models or {})
        self._warned: set[str] = set()
        self.host: HostSession | None = None
        """Where the host tools work, who approves their calls, the log (None: no host tool)."""

    def use_host(self, session: HostSession) -> None:
        """Give the agent its granted host tools in ``session`` (before its first run)."""
        if "agent" in self.__dict__:
            raise RuntimeError(f"{self.agent_id}: host tools must be given before the first run")
        self.host = session

    @cached_property
    def agent(self) -> Any:
        """The Agno object doing the work, built on first use."""
        return self._build()

    @abstractmethod
    def _build(self) -> Any:
        """Construct the Agno object (called once, by ``agent``)."""

    def model_for(self, part: str) -> ModelRef:
        """The model of a named part (its own entry in ``part_models``, else the main model)."""
        return self._part_models.get(part, self._model)

    def built_model(self, model: ModelRef) -> Model:
        """``model`` as an Agno model; a string or provider choice gets ``model_settings``.

        A setting the provider cannot take is dropped with one warning per agent
        (the parts of a pipeline or team share it), not refused: the skill's spec
        was checked against its own model, and the run chose another.
        """
        if isinstance(model, Model):
            return model
        return run_model(model, self.model_settings, warn=self._warn_once)

    def _warn_once(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            _LOG.warning("warning: %s: %s", self.agent_id, message)

    def _new_agno_agent(
        self,
        *,
        name: str,
        agent_id: str,
        instructions: str,
        model: ModelRef,
        **options: Any,
    ) -> Agent:
        options.setdefault("description", self.description or None)
        return Agent(
            id=agent_id,
            name=name,
            model=self.built_model(model),
            instructions=(instructions + self._host_note()) or None,
            tools=self._agno_tools(),
            telemetry=False,
            # The skill's text is data: Agno would otherwise run it (and the user's message)
            # through string.Template, turning ``$$`` into ``$`` and ``{task}`` into a value.
            resolve_in_context=False,
            **options,
        )

    def _agno_tools(self) -> list[Any]:
        tools = list(self.tools)
        if self.references:
            # Imported here: most agents have no references, and Agno's Function is heavy.
            from mindrian.agents.references import read_reference_tool

            tools.append(read_reference_tool(self.references))
        host = self._host_tools()
        if host is not None:
            from mindrian.host import host_functions

            tools.extend(host_functions(host))
        return tools

    def _host_tools(self) -> Any:
        """The agent's host tools in its session; None without a session or a grant."""
        if self.host is None or not self.host_grant.grant:
            return None
        from mindrian.host import HostTools

        return HostTools(self.host_grant, self.host, self.skill_dir)

    async def _settled(self, agno_agent: Any, output: Any, session_id: str | None) -> Any:
        """``output`` once its paused host tool calls are settled: those a rule allows (or that
        will be refused anyway) are confirmed and the run goes on; any other raises
        :class:`ConfirmationNeeded` for the client to answer."""
        host = self._host_tools()
        while getattr(output, "status", None) == RunStatus.paused and host is not None:
            pending = []
            for requirement in output.active_requirements:
                call = requirement.tool_execution
                if not requirement.needs_confirmation:
                    continue
                if host.runs_without_asking(call.tool_name, dict(call.tool_args or {})):
                    requirement.confirm()
                else:
                    pending.append(requirement)
            if pending:
                raise ConfirmationNeeded(output, tuple(pending))
            output = await agno_agent.acontinue_run(
                run_response=output, requirements=output.requirements, session_id=session_id
            )
        return output

    async def resume(self, paused: Any) -> AgentReply:
        """Go on with a run that raised :class:`ConfirmationNeeded`, each pending call answered
        (``confirmation`` set on its requirement and tool execution). Types whose runs cannot
        pause have no such run to resume."""
        raise AgentRunError(f"{self.agent_type} agents do not pause for confirmation")

    def _host_note(self) -> str:
        """Where the skill's files and the workspace are, told at load time (never generated)."""
        host = self._host_tools()
        if host is None:
            return ""
        from mindrian.host import host_note

        return host_note(host)

    @abstractmethod
    async def run(self, message: str, *, session_id: str | None = None) -> AgentReply:
        """Answer ``message``; raises :class:`AgentRunError` when no usable answer comes back.

        A required MCP server that cannot be used raises
        :class:`~mindrian.agents.mcp.McpUnavailableError` (an ``AgentRunError``)
        before the model is asked anything.
        """

    @asynccontextmanager
    async def mcp_connections(self) -> AsyncIterator[None]:
        """Keep the agent's MCP toolkits connected for a block, after checking the required servers.

        Re-entering from inside the block (a run calling another run method)
        reuses the connections. Connections are closed when the block ends.
        """
        holding = _HOLDING_SERVERS.get()
        if id(self) in holding:
            yield
            return
        async with connected_servers(self.tools, self.mcp_servers):
            token = _HOLDING_SERVERS.set(holding | {id(self)})
            try:
                yield
            finally:
                _HOLDING_SERVERS.reset(token)

    # -- handoffs ----------------------------------------------------------------

    def create_handoff_context(
        self,
        challenge: str,
        problem_clarity: ProblemClarity | Mapping[str, Any] | None = None,
        previous_analyses: Sequence[PreviousAnalysis | Mapping[str, Any]] | None = None,
        *,
        from_agent: str = "user",
        session_id: str | None = None,
        handoff_type: HandoffType = HandoffType.DELEGATE,
        **options: Any,
    ) -> HandoffContext:
        """A context asking this agent to work on ``challenge`` (seed 000 §7.2)."""
        return HandoffContext(
            task_description=challenge,
            problem_clarity=ProblemClarity.coerce(problem_clarity),
            previous_analyses=tuple(PreviousAnalysis.coerce(a) for a in previous_analyses or ()),
            from_agent=from_agent,
            to_agent=self.agent_id,
            session_id=session_id,
            handoff_type=handoff_type,
            **options,
        )

    async def process_handoff(self, context: HandoffContext) -> HandoffResult:
        """Do the work of ``context``; never raises: every failure is a failed result."""
        start = time.monotonic()
        deadline = asyncio.timeout(context.timeout_seconds)
        try:
            self._check_accepted(context)
            async with deadline, self.mcp_connections():
                reply = await self._answer(context)
            return self._result(context, reply, time.monotonic() - start)
        except HandoffRefusedError as exc:
            return HandoffResult.failure(
                context, str(exc), time.monotonic() - start, code=exc.refusal, **exc.details
            )
        except Exception as exc:  # the handoff contract: report, never raise
            error = self._describe_failure(exc, context, deadline.expired())
            return HandoffResult.failure(context, error, time.monotonic() - start)

    def _check_accepted(self, context: HandoffContext) -> None:
        """Refuse what the agent's contract excludes, before any model or server is touched."""
        if context.handoff_type not in self.accepted_handoffs:
            accepted = ", ".join(sorted(t.value for t in self.accepted_handoffs))
            raise HandoffRefusedError(
                "handoff_type_refused",
                f"{self.agent_type} agent {self.agent_id!r} does not accept "
                f"{context.handoff_type.value} handoffs (accepts: {accepted})",
            )
        if self.allowed_callers and context.from_agent not in self.allowed_callers:
            raise HandoffRefusedError(
                "caller_refused",
                f"agent {self.agent_id!r} cannot be called by {context.from_agent!r} "
                f"(callers: {', '.join(sorted(self.allowed_callers))})",
            )
        self._check_clarity(context.problem_clarity)

    def _check_clarity(self, clarity: ProblemClarity) -> None:
        if clarity.overall_clarity >= self.min_clarity:
            return
        scores = {
            "what": clarity.what_clarity,
            "who": clarity.who_clarity,
            "success": clarity.success_clarity,
        }
        weak = [f"{name} ({value:g})" for name, value in scores.items() if value < self.min_clarity]
        reason = (
            f"problem clarity {clarity.overall_clarity:.2f} is below the {self.min_clarity:g} "
            f"agent {self.agent_id!r} needs; clarify: {', '.join(weak)}"
        )
        raise HandoffRefusedError(
            "needs_clarification",
            f"needs_clarification: {reason}",
            needs_human_input=True,
            human_input_reason=reason,
            open_questions=tuple(
                f"{_CLARITY_QUESTIONS[name]} (clarity {scores[name]:g})"
                for name in scores
                if scores[name] < self.min_clarity
            ),
        )

    def _describe_failure(self, exc: Exception, context: HandoffContext, expired: bool) -> str:
        # Only our own deadline is a timeout; a TimeoutError from inside the agent is its error.
        if expired and isinstance(exc, TimeoutError):
            return f"agent {self.agent_id!r} timed out after {context.timeout_seconds:g}s"
        if isinstance(exc, (AgentRunError, ModelUnavailableError)):
            return str(exc)
        return f"{type(exc).__name__}: {exc}"

    async def _answer(self, context: HandoffContext) -> AgentReply:
        return await self.run(context.to_prompt(), session_id=context.session_id)

    def _result(self, context: HandoffContext, reply: AgentReply, duration: float) -> HandoffResult:
        content = {k: v for k, v in (reply.structured or {}).items() if k in _CONTENT_FIELDS}
        if reply.awaiting_input:
            content["needs_human_input"] = True
            content["human_input_reason"] = reply.prompt_for_user
        return HandoffResult(
            handoff_id=context.handoff_id,
            from_agent=context.to_agent,
            to_agent=context.return_to,
            success=True,
            output=render_output(reply),
            output_format="structured" if reply.structured is not None else "markdown",
            duration_seconds=duration,
            **content,
        )


#: The question behind each clarity dimension, as a refused handoff lists it.
_CLARITY_QUESTIONS: Mapping[str, str] = {
    "what": "What is the problem?",
    "who": "Who has this problem?",
    "success": "What does success look like?",
}


def _holding_servers(
    method: Callable[..., Awaitable[_R]],
) -> Callable[..., Awaitable[_R]]:
    """``method`` run inside the agent's :meth:`~MindrianAgent.mcp_connections`."""

    @functools.wraps(method)
    async def run_with_servers(self: MindrianAgent, *args: Any, **kwargs: Any) -> _R:
        async with self.mcp_connections():
            return await method(self, *args, **kwargs)

    run_with_servers._holds_servers = True  # type: ignore[attr-defined]
    return run_with_servers


def render_output(reply: AgentReply) -> str:
    """The reply as markdown: the answer, then every partial under its own heading."""
    if not reply.partials:
        return reply.content
    sections = [reply.content, "## Partial results"]
    for partial in reply.partials:
        heading = f"### {partial.name}" + (" (skipped)" if partial.status == "skipped" else "")
        body = partial.output
        if partial.user_input:
            body += f"\n\n**User:** {partial.user_input}"
        sections.append(f"{heading}\n\n{body}")
    return "\n\n".join(sections)


def check_run(output: Any, what: str) -> Any:
    """``output.content`` of a finished Agno run; raises when the run failed."""
    status = getattr(output, "status", None)
    if failed_status(status):
        said = text_of(output.content)
        raise AgentRunError(
            f"{what} run ended with status {getattr(status, 'value', status)}: {said}",
            retryable=missing_key(said) is None,
        )
    return output.content


def slug(name: str) -> str:
    """A lower-case, dash-separated id for a part name."""
    cleaned = "".join(c.lower() if c.isalnum() else "-" for c in name)
    return "-".join(filter(None, cleaned.split("-"))) or "part"
