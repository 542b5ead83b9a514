"""Running a thought graph (Attractor §3-§5; seed 003 §3): the drawing is the program.

A run starts at the start node and, after every node, saves its state (queue,
history, context) atomically as JSON, so a crash or a :class:`Pause` resumes at
the node that did not finish. :func:`arun` is the engine; :func:`run` is its
synchronous front for code without an event loop.

**Handlers.** ``handlers`` maps a node id, or a handler type (``codergen``,
``wait.human``, ``tool``, ``parallel.fan_in``, ``stack.manager_loop`` or a
node's custom ``type``), to a callable taking a :class:`StepContext` and
returning an :class:`Outcome`, an outcome word (``"success"``, ``"fail"``, or a
label such as ``"redo"``), None (success), or an awaitable of one of these. A
node id wins over its ``type``, which wins over its shape's type. Without a
handler: start and decision nodes pass (a decision routes on the outcome of
the node before it, so seed 003's TOTE loop and the specification's branching
example route as drawn), a ``component`` fans out, a ``tripleoctagon`` picks
the best branch (Attractor §4.9 heuristic), a ``house`` with
``stack.child_dotfile`` supervises that child pipeline. LLM steps, human gates,
tools and custom types need a handler; the run refuses to start without one.
Tool nodes never run their ``tool_command`` here: executing shell text from a
file is the handler's decision.

**Routing** (Attractor §3.3): edges whose condition holds (highest weight,
then target id); else the first unconditional edge whose label matches the
outcome's preferred label; else one leading to a suggested next id; else the
unconditional edge of highest weight, then lowest target id. A ``fail``
outcome that no condition caught goes to the node's ``retry_target`` or
``fallback_retry_target`` when set (§3.7), else along the unconditional edge
if there is one, else the run ends ``failed``. A node without outgoing edges
ends the run as an exit does; an outcome no edge accepts ends it ``failed``
(the specification would end such a run successfully without checking goal
gates). An edge with ``loop_restart=true`` starts the context afresh (graph
attributes only) at its target; the history is kept.

**Goal gates** (§3.4): at an exit, every visited ``goal_gate`` node must have
ended ``success`` or ``partial_success``; if one did not, the run jumps to its
``retry_target``/``fallback_retry_target`` (or the graph's) and, with none, ends
with status ``failed``.

**Fan-out** (§4.8): the branches of a ``component`` node run concurrently as
asyncio tasks (synchronous handlers in worker threads), at most
``max_parallel`` (default 4) at once, each on a copy of the context, until
they reach the join (:func:`~mindrian.workflow.validate.fan_in_of`). Their
results go to ``parallel.results`` in the context; the history lists each
branch's nodes in edge order, whatever order they finished in. A failing or
pausing branch stops the whole fan-out, which reruns from its start on resume.

**Retries** (§3.5): a handler that raises, or returns ``retry``, is called
again up to ``max_retries`` times (the graph's ``default_max_retries`` when the
node sets none), without delay. An exception that survives its retries
propagates (the saved state still points at the node); a ``retry`` outcome
that does becomes ``fail``, or ``partial_success`` with ``allow_partial=true``.
``timeout`` bounds each call.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeAlias, TypeGuard

from mindrian.atomic import atomic_write_text
from mindrian.workflow.conditions import condition_holds
from mindrian.workflow.dot import parse, render
from mindrian.workflow.model import (
    Edge,
    Node,
    NodeKind,
    ThoughtGraph,
    WorkflowError,
    normalise_label,
    normalise_outcome,
)
from mindrian.workflow.validate import errors, fan_in_of, validate

__all__ = [
    "DEFAULT_MAX_STEPS",
    "FAIL",
    "PARTIAL_SUCCESS",
    "RETRY",
    "SKIPPED",
    "SUCCESS",
    "Handler",
    "Outcome",
    "Pause",
    "RoutingError",
    "RunState",
    "StepContext",
    "StepLimitExceeded",
    "arun",
    "as_outcome",
    "graph_digest",
    "next_node",
    "run",
    "select_edge",
]

logger = logging.getLogger(__name__)

#: Nodes executed (over all resumptions) before a run is stopped as a runaway loop.
DEFAULT_MAX_STEPS: int = 1000

#: Outcome statuses of the Attractor specification (§5.2), lower-case.
SUCCESS: str = "success"
PARTIAL_SUCCESS: str = "partial_success"
RETRY: str = "retry"
FAIL: str = "fail"
SKIPPED: str = "skipped"

_SUCCEEDED = frozenset({SUCCESS, PARTIAL_SUCCESS})
_RANK = {SUCCESS: 0, PARTIAL_SUCCESS: 1, RETRY: 2, FAIL: 3}
_STATE_VERSION = 2
_DEFAULT_MAX_PARALLEL = 4
_DEFAULT_MAX_CYCLES = 1000


class RoutingError(WorkflowError):
    """No edge leaves a node for the outcome it produced."""


class Pause(Exception):
    """Raised by a handler to stop the run at its node until the next call."""


@dataclass(frozen=True)
class Outcome:
    """What a node produced (Attractor §5.2)."""

    status: str = SUCCESS
    """``success``, ``partial_success``, ``retry``, ``fail``, ``skipped``, or a word of its own."""
    preferred_label: str | None = None
    """Label of the edge to follow, matched after accelerator prefixes are stripped."""
    suggested_next_ids: tuple[str, ...] = ()
    """Targets to prefer when no label matches."""
    context_updates: Mapping[str, Any] = field(default_factory=dict)
    """JSON values merged into the run context."""
    notes: str = ""
    """Human-readable summary."""
    failure_reason: str = ""
    """Why the node failed, when it did."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", normalise_outcome(self.status) or SUCCESS)
        object.__setattr__(self, "suggested_next_ids", tuple(self.suggested_next_ids))
        object.__setattr__(self, "context_updates", dict(self.context_updates))


def as_outcome(result: Outcome | str | None) -> Outcome:
    """A handler's return value as an :class:`Outcome` (a word is status and preferred label)."""
    if result is None:
        return Outcome()
    if isinstance(result, Outcome):
        return result
    if isinstance(result, str):
        return Outcome(status=result, preferred_label=result)
    raise WorkflowError(f"a handler returned {type(result).__name__}, not an Outcome, str or None")


@dataclass(frozen=True)
class RunState:
    """Where a run is; saved as JSON after every node."""

    workflow: str
    """Name of the graph being run."""
    digest: str
    """SHA-256 of the graph's canonical DOT, so state is never resumed on another graph."""
    status: str
    """``running``, ``paused``, ``done`` or ``failed``."""
    queue: tuple[str, ...]
    """The node to run next (empty once the run ended)."""
    history: tuple[tuple[str, str], ...] = ()
    """``(node, outcome status)`` for every node executed, in order."""
    context: Mapping[str, Any] = field(default_factory=dict)
    """The run context (Attractor §5.1): JSON values by key."""
    failure_reason: str = ""
    """Why the run failed, when its status is ``failed``."""

    @property
    def visited(self) -> tuple[str, ...]:
        """Node ids in execution order."""
        return tuple(node for node, _ in self.history)

    @property
    def outcomes(self) -> dict[str, str]:
        """Latest outcome of each executed node."""
        return dict(self.history)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data."""
        return {
            "version": _STATE_VERSION,
            "workflow": self.workflow,
            "digest": self.digest,
            "status": self.status,
            "queue": list(self.queue),
            "history": [list(item) for item in self.history],
            "context": dict(self.context),
            "failure_reason": self.failure_reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunState:
        """Rebuild from :meth:`to_dict` output (version 1 files too); WorkflowError otherwise."""
        try:
            if data["version"] not in (1, _STATE_VERSION):
                raise WorkflowError(f"unsupported state version {data['version']!r}")
            return cls(
                workflow=str(data["workflow"]),
                digest=str(data["digest"]),
                status=str(data["status"]),
                queue=tuple(str(n) for n in data["queue"]),
                history=tuple((str(n), str(o)) for n, o in data["history"]),
                context=dict(data.get("context", {})),
                failure_reason=str(data.get("failure_reason", "")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, WorkflowError):
                raise
            raise WorkflowError(f"not a saved workflow state: {exc}") from None


@dataclass(frozen=True)
class StepContext:
    """What a handler is given."""

    graph: ThoughtGraph
    """The whole workflow."""
    node: Node
    """The node being executed."""
    prompt: str
    """The node's prompt (else its label) with ``$goal`` expanded; empty if it has neither."""
    state: RunState
    """The run so far (outcomes of earlier nodes)."""
    context: Mapping[str, Any] = field(default_factory=dict)
    """A read-only view of the run context (``parallel.results`` at a join, for instance)."""


#: A node's behaviour: its outcome, a word, None (success), or an awaitable of one of these.
HandlerResult: TypeAlias = Outcome | str | None
Handler: TypeAlias = Callable[[StepContext], HandlerResult | Awaitable[HandlerResult]]


class StepLimitExceeded(WorkflowError):
    """The run executed ``max_steps`` nodes without reaching an exit."""

    def __init__(self, state: RunState, max_steps: int) -> None:
        super().__init__(
            f"workflow {state.workflow} stopped after {max_steps} steps without exiting"
        )
        self.state = state


def graph_digest(graph: ThoughtGraph) -> str:
    """SHA-256 hex digest of the canonical DOT text."""
    return hashlib.sha256(render(graph).encode("utf-8")).hexdigest()


def _best(edges: list[Edge]) -> Edge:
    return min(edges, key=lambda e: (-e.weight, e.target))


def _select(
    graph: ThoughtGraph, node_id: str, outcome: Outcome, context: Mapping[str, Any]
) -> tuple[Edge | None, bool]:
    """The edge to follow and whether a condition chose it."""
    edges = graph.outgoing(node_id)
    matched = [
        e
        for e in edges
        if e.condition
        and condition_holds(e.condition, outcome.status, outcome.preferred_label, context)
    ]
    if matched:
        return _best(matched), True
    unconditional = [e for e in edges if not e.condition]
    if outcome.preferred_label:
        wanted = normalise_label(outcome.preferred_label)
        for edge in unconditional:
            if edge.label and normalise_label(edge.label) == wanted:
                return edge, False
    for suggested in outcome.suggested_next_ids:
        for edge in unconditional:
            if edge.target == suggested:
                return edge, False
    return (_best(unconditional) if unconditional else None), False


def select_edge(
    graph: ThoughtGraph,
    node_id: str,
    outcome: Outcome | str | None,
    context: Mapping[str, Any] | None = None,
) -> Edge | None:
    """The edge Attractor §3.3 follows after ``node_id`` produced ``outcome``; None if none."""
    return _select(graph, node_id, as_outcome(outcome), context or {})[0]


def next_node(
    graph: ThoughtGraph,
    node_id: str,
    outcome: Outcome | str | None,
    context: Mapping[str, Any] | None = None,
) -> str:
    """The node to run after ``node_id`` produced ``outcome``; RoutingError if no edge fits."""
    edge = select_edge(graph, node_id, outcome, context)
    if edge is None:
        status = as_outcome(outcome).status
        raise RoutingError(f"no edge leaves {node_id} for outcome {status!r}")
    return edge.target


@dataclass(frozen=True)
class _End:
    """Routing result: the run ends here as at an exit."""


@dataclass(frozen=True)
class _Failed:
    """Routing result: the run (or branch) fails."""

    reason: str


@dataclass(frozen=True)
class _Branch:
    """What one fan-out branch did."""

    start: str
    last: str
    outcome: Outcome
    updates: dict[str, Any]
    history: tuple[tuple[str, str], ...]


def _handler_key(node: Node, handlers: Mapping[str, Handler]) -> str | None:
    """The key of ``handlers`` that serves ``node``: its id, else its type, else its kind's type."""
    for key in (node.id, node.type, node.kind.handler_type):
        if key is not None and key in handlers:
            return key
    return None


def _resolve(node: Node, handlers: Mapping[str, Handler]) -> Handler | None:
    key = _handler_key(node, handlers)
    return None if key is None else handlers[key]


def _child_dotfile(graph: ThoughtGraph, node: Node) -> str | None:
    return node.attr("stack.child_dotfile") or graph.attr("stack.child_dotfile")


def _check_runnable(graph: ThoughtGraph, handlers: Mapping[str, Handler]) -> None:
    problems = errors(validate(graph))
    if problems:
        listed = "; ".join(f"{i.rule}: {i.message}" for i in problems)
        raise WorkflowError(f"workflow {graph.name} is not valid: {listed}")
    built_in = {NodeKind.START, NodeKind.EXIT, NodeKind.DECISION, NodeKind.PARALLEL}
    built_in.add(NodeKind.FAN_IN)
    missing = [
        n.id
        for n in graph.nodes
        if n.kind not in built_in
        and _handler_key(n, handlers) is None
        and not (n.kind is NodeKind.MANAGER and _child_dotfile(graph, n))
    ]
    if missing:
        raise WorkflowError(f"no handler for node(s): {', '.join(missing)}")
    unknown = sorted(set(handlers) - {n.id for n in graph.nodes} - _handler_types(graph))
    if unknown:
        raise WorkflowError(f"handlers for unknown node(s): {', '.join(unknown)}")


def _handler_types(graph: ThoughtGraph) -> set[str]:
    """Handler types ``graph`` may dispatch to: every built-in one and its nodes' own types."""
    return {kind.handler_type for kind in NodeKind} | {n.type for n in graph.nodes if n.type}


def _first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        current = pending.pop(0)
        if isinstance(current, BaseExceptionGroup):
            pending[:0] = list(current.exceptions)
        else:
            leaves.append(current)
    return next((e for e in leaves if isinstance(e, Pause)), leaves[0])


class _Runner:
    """One run's fixed inputs; every method is a step of the loop."""

    def __init__(
        self,
        graph: ThoughtGraph,
        handlers: Mapping[str, Handler],
        max_steps: int,
        base_dir: Path | None,
    ) -> None:
        self.graph = graph
        self.handlers = handlers
        self.max_steps = max_steps
        self.base_dir = base_dir

    async def step(self, state: RunState) -> RunState:
        node = self.graph.node(state.queue[0])
        if node.kind is NodeKind.EXIT:
            return self._at_exit(state, node)
        if len(state.history) >= self.max_steps:
            raise StepLimitExceeded(state, self.max_steps)
        context = {**state.context, "current_node": node.id}
        try:
            outcome, inner = await self._execute(node, state, context, threaded=False)
        except Pause:
            return replace(state, status="paused")
        _apply(context, outcome)
        history = (*state.history, (node.id, outcome.status), *inner)
        state = replace(state, history=history, context=context)
        route = self._route(node, outcome, context)
        if isinstance(route, _Failed):
            return replace(state, status="failed", queue=(), failure_reason=route.reason)
        if isinstance(route, _End):
            return self._at_exit(state, node, record=False)
        edge_restarts = any(
            e.target == route and _flag(e.attr("loop_restart"))
            for e in self.graph.outgoing(node.id)
        )
        if edge_restarts:
            context = _initial_context(self.graph, {})
        return replace(state, queue=(route,), context=context)

    def _at_exit(self, state: RunState, node: Node, *, record: bool = True) -> RunState:
        gate = self._unsatisfied_gate(state)
        if gate is None:
            history = (*state.history, (node.id, SUCCESS)) if record else state.history
            return replace(state, status="done", queue=(), history=history)
        for target in (
            gate.retry_target,
            gate.fallback_retry_target,
            self.graph.attr("retry_target"),
            self.graph.attr("fallback_retry_target"),
        ):
            # An exit as retry target would bounce between exits without a step counted.
            if self._is_step(target):
                return replace(state, queue=(target,))
        status = state.outcomes[gate.id]
        reason = f"goal gate {gate.id} ended {status!r} and no retry target is set"
        history = (*state.history, (node.id, FAIL)) if record else state.history
        return replace(state, status="failed", queue=(), history=history, failure_reason=reason)

    def _is_step(self, node_id: str | None) -> TypeGuard[str]:
        """Whether ``node_id`` names a node that is not an exit."""
        if not node_id or not self.graph.has_node(node_id):
            return False
        return self.graph.node(node_id).kind is not NodeKind.EXIT

    def _unsatisfied_gate(self, state: RunState) -> Node | None:
        latest = state.outcomes
        for node_id in dict.fromkeys(state.visited):
            node = self.graph.node(node_id)
            if node.goal_gate and latest[node_id] not in _SUCCEEDED:
                return node
        return None

    def _route(
        self, node: Node, outcome: Outcome, context: Mapping[str, Any]
    ) -> str | _End | _Failed:
        if node.kind is NodeKind.PARALLEL:
            join = fan_in_of(self.graph, node.id)
            if join is None:
                return _Failed(f"the branches of {node.id} never meet again")
            return join
        edge, by_condition = _select(self.graph, node.id, outcome, context)
        if outcome.status == FAIL and not by_condition:
            for target in (node.retry_target, node.fallback_retry_target):
                if target and self.graph.has_node(target):
                    return target
            if edge is None:
                reason = outcome.failure_reason or "no failure route"
                return _Failed(f"node {node.id} failed: {reason}")
        if edge is not None:
            return edge.target
        if not self.graph.outgoing(node.id):
            return _End()
        return _Failed(f"no edge leaves {node.id} for outcome {outcome.status!r}")

    async def _execute(
        self, node: Node, state: RunState, context: dict[str, Any], *, threaded: bool
    ) -> tuple[Outcome, tuple[tuple[str, str], ...]]:
        handler = _resolve(node, self.handlers)
        if node.kind is NodeKind.PARALLEL:
            return await self._fan_out(node, state, context)
        if handler is not None:
            return await self._call(node, handler, state, context, threaded=threaded), ()
        if node.kind is NodeKind.DECISION:
            previous = Outcome(
                status=str(context.get("outcome", SUCCESS)),
                preferred_label=context.get("preferred_label") or None,
            )
            return previous, ()
        if node.kind is NodeKind.FAN_IN:
            return _pick_best(context), ()
        if node.kind is NodeKind.MANAGER:
            return await self._manager_loop(node, context), ()
        return Outcome(), ()

    async def _call(
        self,
        node: Node,
        handler: Handler,
        state: RunState,
        context: dict[str, Any],
        *,
        threaded: bool,
    ) -> Outcome:
        prompt = self.graph.expand(node.prompt or node.label or "")
        step = StepContext(self.graph, node, prompt, state, MappingProxyType(dict(context)))
        retries = node.max_retries
        if retries is None:
            default = self.graph.attr("default_max_retries", self.graph.attr("default_max_retry"))
            retries = int(default or 0)
        attempt = 0
        while True:
            try:
                outcome = as_outcome(await self._invoke(node, handler, step, threaded=threaded))
            except Pause:
                raise
            except Exception:
                if attempt >= retries:
                    raise
                attempt += 1
                logger.warning("node %s failed, retry %d of %d", node.id, attempt, retries)
                continue
            if outcome.status != RETRY:
                return outcome
            if attempt >= retries:
                if _flag(node.attr("allow_partial")):
                    return replace(outcome, status=PARTIAL_SUCCESS)
                return replace(outcome, status=FAIL, failure_reason="max retries exceeded")
            attempt += 1

    async def _invoke(
        self, node: Node, handler: Handler, step: StepContext, *, threaded: bool
    ) -> HandlerResult:
        is_async = inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
            getattr(handler, "__call__", None)  # noqa: B004 - async callable objects
        )
        if is_async:
            call: Awaitable[Any] = handler(step)  # type: ignore[assignment]
        elif threaded or node.timeout is not None:
            call = asyncio.to_thread(handler, step)
        else:
            call = _ready(handler(step))
        timeout = None if node.timeout is None else node.timeout.seconds
        try:
            result = await asyncio.wait_for(call, timeout)
        except TimeoutError:
            raise WorkflowError(f"node {node.id} timed out after {node.timeout}") from None
        if inspect.isawaitable(result):
            result = await result
        return result  # type: ignore[no-any-return]

    async def _fan_out(
        self, node: Node, state: RunState, context: dict[str, Any]
    ) -> tuple[Outcome, tuple[tuple[str, str], ...]]:
        join = fan_in_of(self.graph, node.id)
        limit = asyncio.Semaphore(int(node.attr("max_parallel") or _DEFAULT_MAX_PARALLEL))

        async def branch(start: str) -> _Branch:
            async with limit:
                return await self._branch(start, join, dict(context), state)

        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(branch(t)) for t in self.graph.successors(node.id)]
        except BaseExceptionGroup as grouped:
            raise _first_error(grouped) from None
        results = [task.result() for task in tasks]
        statuses = [r.outcome.status for r in results]
        if node.attr("join_policy", "wait_all") == "first_success":
            status = SUCCESS if SUCCESS in statuses else FAIL
        else:
            status = SUCCESS if FAIL not in statuses else PARTIAL_SUCCESS
        payload = [
            {
                "id": r.start,
                "last_node": r.last,
                "outcome": r.outcome.status,
                "notes": r.outcome.notes,
                "failure_reason": r.outcome.failure_reason,
                "context_updates": r.updates,
            }
            for r in results
        ]
        history = tuple(item for r in results for item in r.history)
        return Outcome(status=status, context_updates={"parallel.results": payload}), history

    async def _branch(
        self, start: str, join: str | None, context: dict[str, Any], state: RunState
    ) -> _Branch:
        current, last, outcome = start, start, Outcome()
        history: list[tuple[str, str]] = []
        updates: dict[str, Any] = {}
        while current != join and self.graph.node(current).kind is not NodeKind.EXIT:
            if len(state.history) + len(history) >= self.max_steps:
                raise StepLimitExceeded(state, self.max_steps)
            node = self.graph.node(current)
            context["current_node"] = current
            outcome, inner = await self._execute(node, state, context, threaded=True)
            _apply(context, outcome)
            updates.update(outcome.context_updates)
            history += [(current, outcome.status), *inner]
            last = current
            route = self._route(node, outcome, context)
            if isinstance(route, _End):
                break
            if isinstance(route, _Failed):
                outcome = replace(outcome, status=FAIL, failure_reason=route.reason)
                break
            current = route
        return _Branch(start, last, outcome, updates, tuple(history))

    async def _manager_loop(self, node: Node, context: dict[str, Any]) -> Outcome:
        dotfile = _child_dotfile(self.graph, node) or ""
        path = Path(dotfile)
        if not path.is_absolute() and self.base_dir is not None:
            path = self.base_dir / path
        try:
            child = parse(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise WorkflowError(
                f"node {node.id}: cannot read child pipeline {path}: {exc}"
            ) from None
        wanted = _handler_types(child) | {n.id for n in child.nodes}
        child_handlers = {k: h for k, h in self.handlers.items() if k in wanted}
        cycles = int(node.attr("manager.max_cycles") or _DEFAULT_MAX_CYCLES)
        stop = node.attr("manager.stop_condition")
        for cycle in range(1, cycles + 1):
            result = await arun(
                child, child_handlers, max_steps=self.max_steps, base_dir=path.parent
            )
            if result.status == "paused":
                raise Pause()
            succeeded = result.status == "done"
            context.update(
                {
                    "stack.child.status": "completed" if succeeded else "failed",
                    "stack.child.outcome": SUCCESS if succeeded else FAIL,
                    "stack.child.cycles": cycle,
                }
            )
            if succeeded:
                return Outcome(notes=f"child {child.name} completed in cycle {cycle}")
            if stop and condition_holds(stop, FAIL, None, context):
                return Outcome(notes=f"stop condition {stop!r} holds after cycle {cycle}")
        return Outcome(status=FAIL, failure_reason=f"child {child.name} failed {cycles} cycle(s)")


def _flag(value: str | None) -> bool:
    """A Boolean attribute kept as text (the parser checked it is true or false)."""
    return (value or "").strip().lower() == "true"


async def _ready(value: Any) -> Any:
    return value


def _apply(context: dict[str, Any], outcome: Outcome) -> None:
    context.update(outcome.context_updates)
    context["outcome"] = outcome.status
    context["preferred_label"] = outcome.preferred_label or ""


def _pick_best(context: Mapping[str, Any]) -> Outcome:
    results = context.get("parallel.results") or []
    if not results:
        return Outcome(status=FAIL, failure_reason="no parallel results to evaluate")
    best = min(results, key=lambda r: (_RANK.get(r["outcome"], len(_RANK)), r["id"]))
    all_failed = all(r["outcome"] == FAIL for r in results)
    return Outcome(
        status=FAIL if all_failed else SUCCESS,
        context_updates={
            "parallel.fan_in.best_id": best["id"],
            "parallel.fan_in.best_outcome": best["outcome"],
        },
        notes=f"selected best candidate: {best['id']}",
    )


def _initial_context(graph: ThoughtGraph, given: Mapping[str, Any]) -> dict[str, Any]:
    mirrored = {f"graph.{key}": value for key, value in graph.extra}
    mirrored["graph.goal"] = graph.goal or ""
    return {**mirrored, **given}


def _initial_state(
    graph: ThoughtGraph, path: Path | None, context: Mapping[str, Any] | None
) -> RunState:
    digest = graph_digest(graph)
    if path is not None and path.exists():
        state = RunState.from_dict(json.loads(path.read_text(encoding="utf-8")))
        if (state.workflow, state.digest) != (graph.name, digest):
            raise WorkflowError(f"{path} holds the state of a different workflow or version")
        return state if state.status in ("done", "failed") else replace(state, status="running")
    (start,) = graph.of_kind(NodeKind.START)
    return RunState(
        workflow=graph.name,
        digest=digest,
        status="running",
        queue=(start.id,),
        context=_initial_context(graph, context or {}),
    )


async def arun(
    graph: ThoughtGraph,
    handlers: Mapping[str, Handler],
    state_path: str | os.PathLike[str] | None = None,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    context: Mapping[str, Any] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> RunState:
    """Run ``graph`` to an exit, a failure or a pause, resuming from ``state_path`` if saved there.

    ``context`` seeds a new run's context; ``base_dir`` resolves a manager
    node's relative ``stack.child_dotfile``.
    """
    _check_runnable(graph, handlers)
    path = Path(state_path) if state_path is not None else None
    state = _initial_state(graph, path, context)
    runner = _Runner(graph, handlers, max_steps, None if base_dir is None else Path(base_dir))
    while state.status == "running":
        state = await runner.step(state)
        _save(path, state)
    return state


def run(
    graph: ThoughtGraph,
    handlers: Mapping[str, Handler],
    state_path: str | os.PathLike[str] | None = None,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    context: Mapping[str, Any] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> RunState:
    """:func:`arun` for callers without an event loop (inside one, await :func:`arun`)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(
            arun(
                graph, handlers, state_path, max_steps=max_steps, context=context, base_dir=base_dir
            )
        )
    raise WorkflowError("run() was called inside a running event loop: await arun() instead")


def _save(path: Path | None, state: RunState) -> None:
    if path is None:
        return
    text = json.dumps(state.to_dict(), indent=2, sort_keys=True) + "\n"
    atomic_write_text(path, text)
