"""Tools a role agent orchestrates with: assess clarity, select frameworks, delegate (seed 001).

Seed 001's flow is *clarify, select, delegate, synthesise*. The model drives it
through three tools, declared by the skill as custom tools and called by Agno:

* :func:`assess_clarity` records the model's current answer to the three
  questions (what, who, success) with a clarity score for each; call it every turn.
* :func:`select_frameworks` ranks the frameworks the agent may delegate to for a
  free-text context, through the registry's selection (chain bonus after the
  frameworks already consulted in the session), each with its description and what its
  author says it is not for (:mod:`mindrian.routing.candidates`), so the model can tell
  near neighbours apart; a first answer the router stands behind alone says so.
* :func:`delegate` hands the current :class:`~mindrian.handoff.ProblemClarity` and
  the earlier results to a framework through a :class:`HandoffManager` and returns
  the result as text for the conversation, which the agent then synthesises. It
  refuses while the overall clarity is below the framework's ``min_clarity``.

The tools are plain functions (their JSON schemas come from their signatures) that
act on the :class:`Orchestration` *bound* to the running conversation: a role agent
binds its orchestration and session around each run with :func:`bound`. Agno runs
synchronous tools in a worker thread with a copy of the caller's context, so the
binding is visible there; the handoff itself runs on the conversation's event loop.
Called with nothing bound, a tool says so in its answer instead of raising.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mindrian.handoff.context import (
    MIN_CLARITY,
    HandoffResult,
    PreviousAnalysis,
    ProblemClarity,
)
from mindrian.handoff.manager import HandoffManager

if TYPE_CHECKING:
    # The registry is imported when a tool first needs it: an agent that never selects
    # does not load the ranking code.
    from mindrian.graph.base import FrameworkRecord
    from mindrian.routing.candidates import Candidate

__all__ = [
    "TOOL_NAMES",
    "AgentSource",
    "ClarityTracker",
    "Orchestration",
    "OrchestrationSession",
    "assess_clarity",
    "bound",
    "delegate",
    "select_frameworks",
    "summarise_result",
]

#: Names of the orchestration tools, as a skill declares them.
TOOL_NAMES: tuple[str, ...] = ("assess_clarity", "select_frameworks", "delegate")

#: Framework id -> an agent object the manager can run (see ``adapt_agent``), or None if unknown.
AgentSource = Callable[[str], object | None]

#: Frameworks listed by :func:`select_frameworks` unless there are fewer candidates.
SELECT_LIMIT = 5
#: Ranks every registered framework before the delegation list filters them.
_RANK_ALL = 10_000


class _Selects(Protocol):
    def select_text(
        self,
        text: str,
        problem_types: Iterable[str] = (),
        previous: Iterable[str] = (),
        limit: int = 5,
    ) -> Sequence[Any]: ...

    def get(self, framework_id: str) -> FrameworkRecord | None: ...


class ClarityTracker:
    """The ProblemClarity of one conversation, with a snapshot at the end of every turn."""

    def __init__(self, initial: ProblemClarity | None = None) -> None:
        self._current = initial if initial is not None else ProblemClarity()
        self._turns: list[ProblemClarity] = []

    @property
    def current(self) -> ProblemClarity:
        """The latest assessment."""
        return self._current

    @property
    def turns(self) -> tuple[ProblemClarity, ...]:
        """The assessment as it stood at the end of each finished turn, oldest first."""
        return tuple(self._turns)

    def update(self, **changes: Any) -> ProblemClarity:
        """A new assessment: the given fields replace the current ones, None keeps them."""
        self._current = replace(
            self._current, **{k: v for k, v in changes.items() if v is not None}
        )
        return self._current

    def end_turn(self) -> None:
        """Close the turn: remember the assessment it ended with."""
        self._turns.append(self._current)


@dataclass
class OrchestrationSession:
    """What one conversation has established: its clarity and the work delegated so far."""

    session_id: str
    """The conversation's session id."""
    clarity: ClarityTracker = field(default_factory=ClarityTracker)
    """The problem as clarified so far."""
    results: list[HandoffResult] = field(default_factory=list)
    """Every delegation's result, in order."""

    @property
    def consulted(self) -> tuple[str, ...]:
        """Frameworks that answered successfully, in order, each once."""
        return tuple(dict.fromkeys(r.from_agent for r in self.results if r.success))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data: the clarity (current and per turn) and the results."""
        return {
            "session_id": self.session_id,
            "clarity": self.clarity.current.to_dict(),
            "turns": [c.to_dict() for c in self.clarity.turns],
            "results": [r.to_dict() for r in self.results],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OrchestrationSession:
        """The inverse of :meth:`to_dict`."""
        tracker = ClarityTracker(ProblemClarity.from_dict(data["clarity"]))
        tracker._turns.extend(ProblemClarity.from_dict(t) for t in data["turns"])
        results = [HandoffResult.from_dict(r) for r in data["results"]]
        return cls(str(data["session_id"]), tracker, results)


class Orchestration:
    """The registry, manager and agents behind one role agent's orchestration tools."""

    def __init__(
        self,
        *,
        agent_id: str,
        registry: _Selects,
        agents: AgentSource,
        can_delegate_to: Iterable[str] = (),
        manager: HandoffManager | None = None,
        min_clarity: Mapping[str, float] | None = None,
        default_min_clarity: float = MIN_CLARITY,
        timeout_seconds: float | None = None,
        state_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        """``can_delegate_to`` limits the frameworks (empty: any registered one but itself).

        ``min_clarity`` gives the overall clarity each framework needs; frameworks it
        does not name need ``default_min_clarity``. With ``state_dir``, each session
        is saved there as JSON when a turn ends and read back when a later process
        continues it (``mindrian run larry ... --session S``).
        """
        self.agent_id = agent_id
        """The orchestrating agent: sender of every delegation and receiver of its result."""
        self.registry = registry
        """Where frameworks are selected."""
        self.manager = manager if manager is not None else HandoffManager()
        """Runs the handoffs (and emits their frames and usage, if configured so)."""
        self.can_delegate_to = tuple(can_delegate_to)
        """Frameworks the agent may delegate to; empty means any."""
        self.default_min_clarity = default_min_clarity
        """Clarity a framework needs when ``min_clarity`` does not name it."""
        self._agents = agents
        self._min_clarity = dict(min_clarity or {})
        self._timeout = timeout_seconds
        self._state_dir = None if state_dir is None else Path(state_dir)
        self._sessions: dict[str, OrchestrationSession] = {}
        self._lock = threading.Lock()

    def session(self, session_id: str) -> OrchestrationSession:
        """The state of one conversation: as saved by an earlier turn, else new."""
        with self._lock:
            if session_id not in self._sessions:
                self._sessions[session_id] = self._load(session_id)
            return self._sessions[session_id]

    def _file(self, session_id: str) -> Path | None:
        if self._state_dir is None:
            return None
        # Session ids come from users: hashed, never used as a path.
        digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
        return self._state_dir / "orchestration" / self.agent_id / f"{digest}.json"

    def _load(self, session_id: str) -> OrchestrationSession:
        path = self._file(session_id)
        if path is None or not path.is_file():
            return OrchestrationSession(session_id)
        return OrchestrationSession.from_dict(json.loads(path.read_text(encoding="utf-8")))

    def save(self, session: OrchestrationSession) -> None:
        """Write the session's state (atomically) when the orchestration keeps state."""
        path = self._file(session.session_id)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(session.to_dict(), sort_keys=True, ensure_ascii=False, indent=1)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".session-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise

    def may_delegate_to(self, framework_id: str) -> bool:
        """Whether the agent may hand work to ``framework_id``."""
        if framework_id == self.agent_id:
            return False
        return not self.can_delegate_to or framework_id in self.can_delegate_to

    def required_clarity(self, framework_id: str) -> float:
        """Overall clarity ``framework_id`` needs before it is handed a problem."""
        return self._min_clarity.get(framework_id, self.default_min_clarity)

    def select(self, session: OrchestrationSession, context: str) -> tuple[Any, ...]:
        """Registry selections for ``context`` the agent may delegate to, best first."""
        ranked = self.registry.select_text(context, previous=session.consulted, limit=_RANK_ALL)
        return tuple(s for s in ranked if self.may_delegate_to(s.id))[:SELECT_LIMIT]

    async def delegate(
        self, session: OrchestrationSession, framework_id: str, task: str
    ) -> HandoffResult | str:
        """Run one delegation; a refusal (not allowed, unclear, unknown) comes back as text."""
        refusal = self._refusal(session, framework_id)
        if refusal:
            return refusal
        if framework_id not in self.manager.agents:
            agent = self._agents(framework_id)
            if agent is None:
                return f"Not delegated: no agent package provides {framework_id!r}."
            self.manager.register_agent(framework_id, agent)
        context = self.manager.create_delegation(
            from_agent=self.agent_id,
            to_agent=framework_id,
            task=task,
            problem_clarity=session.clarity.current,
            previous_analyses=[
                PreviousAnalysis.from_result(r) for r in session.results if r.success
            ],
            session_id=session.session_id,
            timeout_seconds=self._timeout,
        )
        result = await self.manager.execute(context)
        session.results.append(result)
        return result

    def _refusal(self, session: OrchestrationSession, framework_id: str) -> str:
        if not self.may_delegate_to(framework_id):
            allowed = ", ".join(self.can_delegate_to) or "any framework but itself"
            return (
                f"Not delegated: {self.agent_id} may not delegate to {framework_id!r} ({allowed})."
            )
        clarity = session.clarity.current
        needed = self.required_clarity(framework_id)
        if clarity.overall_clarity < needed:
            return (
                f"Not delegated: overall clarity {clarity.overall_clarity:.2f} is below the "
                f"{needed:.2f} {framework_id} needs. Clarify first: {_weakest(clarity)}."
            )
        return ""


def _weakest(clarity: ProblemClarity) -> str:
    scores = (
        (clarity.what_clarity, "what the problem is"),
        (clarity.who_clarity, "who has it"),
        (clarity.success_clarity, "what success looks like"),
    )
    return min(scores)[1]


class _Binding:
    """The orchestration and session the tools of the running conversation act on.

    The orchestration is resolved on the first tool call, so a turn that calls no
    tool never opens a registry.
    """

    def __init__(
        self,
        source: Orchestration | Callable[[], Orchestration],
        session_id: str,
        loop: asyncio.AbstractEventLoop | None,
    ) -> None:
        self._source = source
        self._session_id = session_id
        self.loop = loop
        """The loop the conversation runs on; delegations are scheduled there."""
        self._resolved: tuple[Orchestration, OrchestrationSession] | None = None
        self._lock = threading.Lock()

    def resolve(self) -> tuple[Orchestration, OrchestrationSession]:
        """The orchestration and the session's state, made on first use."""
        with self._lock:
            if self._resolved is None:
                source = self._source
                orchestration = source if isinstance(source, Orchestration) else source()
                self._resolved = (orchestration, orchestration.session(self._session_id))
            return self._resolved

    @property
    def resolved(self) -> tuple[Orchestration, OrchestrationSession] | None:
        """The orchestration and session's state, if a tool asked for them."""
        return self._resolved


_BOUND: ContextVar[_Binding | None] = ContextVar("mindrian_orchestration", default=None)


@contextmanager
def bound(
    orchestration: Orchestration | Callable[[], Orchestration], session_id: str
) -> Iterator[None]:
    """Bind the tools to an orchestration (or a factory of one) and a session for one turn.

    When the block ends, the session's clarity is snapshotted as the turn's
    (only if a tool touched the orchestration).
    """
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    binding = _Binding(orchestration, session_id, loop)
    if isinstance(orchestration, Orchestration):
        binding.resolve()
    token = _BOUND.set(binding)
    try:
        yield
    finally:
        _BOUND.reset(token)
        if binding.resolved is not None:
            used, session = binding.resolved
            session.clarity.end_turn()
            used.save(session)


_UNBOUND = "Unavailable: this tool only works inside an orchestrating agent's conversation."


def assess_clarity(
    what: str,
    who: str,
    success: str,
    what_clarity: float,
    who_clarity: float,
    success_clarity: float,
    open_questions: list[str] | None = None,
) -> str:
    """Record how clear the problem is now; call it every turn before answering the user.

    Args:
        what: The problem in one sentence as understood so far ("" if still unknown).
        who: Who has the problem ("" if still unknown).
        success: What success looks like ("" if still unknown).
        what_clarity: How clear the problem is, 0 to 1.
        who_clarity: How clear it is who has it, 0 to 1.
        success_clarity: How clear success is, 0 to 1.
        open_questions: Questions still to ask.
    """
    binding = _BOUND.get()
    if binding is None:
        return _UNBOUND
    orchestration, session = binding.resolve()
    try:
        clarity = session.clarity.update(
            what=what or None,
            who=who or None,
            success=success or None,
            what_clarity=what_clarity,
            who_clarity=who_clarity,
            success_clarity=success_clarity,
            open_questions=tuple(open_questions) if open_questions is not None else None,
        )
    except (TypeError, ValueError) as exc:
        return f"Not recorded: {exc}"
    ready = clarity.overall_clarity >= orchestration.default_min_clarity
    verdict = "ready to delegate" if ready else f"not ready: clarify {_weakest(clarity)}"
    return (
        f"Clarity {clarity.overall_clarity:.2f} (what {clarity.what_clarity:.2f}, "
        f"who {clarity.who_clarity:.2f}, success {clarity.success_clarity:.2f}): {verdict}."
    )


def select_frameworks(context: str) -> str:
    """Rank the frameworks you may delegate to for a problem, best first.

    Args:
        context: The problem and what the user wants from it, in a sentence or two.
    """
    binding = _BOUND.get()
    if binding is None:
        return _UNBOUND
    orchestration, session = binding.resolve()
    chosen = orchestration.select(session, context)
    if not chosen:
        return "No framework you may delegate to matches this context; ask the user for more."
    from mindrian.routing.candidates import describe

    candidates = describe(chosen, orchestration.registry.get)
    lines = [line for rank, c in enumerate(candidates, 1) for line in _candidate_lines(rank, c)]
    return (
        "Frameworks, best first (what each is for, and what its author says it is not for):\n"
        + "\n".join(lines)
    )


def _candidate_lines(rank: int, candidate: Candidate) -> list[str]:
    """One candidate's lines in :func:`select_frameworks`' answer."""
    sure = " (confident: the router stands behind it alone)" if candidate.confident else ""
    lines = [f"{rank}. {candidate.id} ({candidate.name}): score {candidate.score:.2f}{sure}"]
    if candidate.description:
        lines.append(f"   for: {' '.join(candidate.description.split())}")
    lines += [f"   not for: {line}" for line in candidate.not_for]
    return lines


def delegate(framework_id: str, task: str) -> str:
    """Hand the clarified problem to a framework and return its findings for you to synthesise.

    Args:
        framework_id: Id of the framework, as select_frameworks lists it.
        task: What the framework should do with the problem.
    """
    binding = _BOUND.get()
    if binding is None:
        return _UNBOUND
    orchestration, session = binding.resolve()
    work = orchestration.delegate(session, framework_id, task)
    outcome = _run_on(binding.loop, work)
    return outcome if isinstance(outcome, str) else summarise_result(outcome)


def _run_on(loop: asyncio.AbstractEventLoop | None, work: Any) -> Any:
    if loop is None or loop.is_closed():
        return asyncio.run(work)
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        work.close()
        raise RuntimeError(
            "delegate() was called on the conversation's own event loop; Agno runs it in a "
            "worker thread, and so must any other caller"
        )
    return asyncio.run_coroutine_threadsafe(work, loop).result()


def summarise_result(result: HandoffResult) -> str:
    """A handoff result as the text the orchestrating model reads."""
    if not result.success:
        return f"{result.from_agent} failed: {result.error or 'no reason given'}."
    parts = [
        f"{result.from_agent} answered (confidence {result.confidence:.0%}):",
        result.output,
        _listed("Key findings", result.key_findings),
        _listed("Recommendations", result.recommendations),
        _listed("Scores", [f"{k}: {v:g}" for k, v in result.scores.items()]),
        _listed("Open questions", result.open_questions),
        _listed("Suggested next", result.suggested_next_agents),
    ]
    return "\n\n".join(p for p in parts if p)


def _listed(title: str, items: Sequence[str]) -> str:
    return f"{title}:\n" + "\n".join(f"- {item}" for item in items) if items else ""
