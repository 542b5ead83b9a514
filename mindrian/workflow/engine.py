"""Running a thought graph (seed 003 §3): deterministic routing, state saved after every node.

Routing from a node whose handler returned outcome ``o`` (compared lower-case):

1. edges whose ``condition`` holds for ``o``;
2. else edges without condition whose ``label`` equals ``o``;
3. else edges with neither condition nor label (defaults);
4. else, if the node has a single outgoing edge without condition, that edge
   (a label on a lone edge only describes it).

Within the first non-empty group the highest ``weight`` wins and equal weights go
to the edge declared first. Seed 003 §3.1 breaks the last tie by target id; edge
order is used instead because :func:`~mindrian.workflow.dot.render` keeps it, so
the rule is visible in the file. ``preferred_label``/``suggested_next_ids`` are
covered by the handler's outcome.

Node kinds: START, PARALLEL and DECISION need no handler (a DECISION without one
routes on the outcome of the node before it); EXIT ends the run; every other
node needs a handler. A PARALLEL node schedules its branches one after another in
edge order, then their common join node. A handler may raise :class:`Pause` (for
example a human gate waiting for an answer): the run stops with status
``paused`` and the next call resumes at that node. Any other exception is
retried ``max_retries`` times and then propagates; the saved state still points
at the failed node, so calling :func:`run` again resumes there.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mindrian.atomic import atomic_write_text
from mindrian.workflow.dot import render
from mindrian.workflow.model import (
    Edge,
    Node,
    NodeKind,
    ThoughtGraph,
    WorkflowError,
    condition_holds,
    normalise_outcome,
)
from mindrian.workflow.validate import validate

__all__ = [
    "DEFAULT_MAX_STEPS",
    "SUCCESS",
    "Handler",
    "Pause",
    "RoutingError",
    "RunState",
    "StepContext",
    "StepLimitExceeded",
    "graph_digest",
    "next_node",
    "run",
]

logger = logging.getLogger(__name__)

#: Nodes executed (over all resumptions) before a run is stopped as a runaway loop.
DEFAULT_MAX_STEPS: int = 1000

#: Outcome recorded when a handler returns None, and for start, parallel and exit nodes.
SUCCESS: str = "success"

_STATE_VERSION = 1
_NO_HANDLER_NEEDED = (
    NodeKind.START,
    NodeKind.PARALLEL,
    NodeKind.DECISION,
    NodeKind.EXIT,
)


class RoutingError(WorkflowError):
    """No edge leaves a node for the outcome it produced."""


class Pause(Exception):
    """Raised by a handler to stop the run at its node until the next call."""


@dataclass(frozen=True)
class RunState:
    """Where a run is; saved as JSON after every node."""

    workflow: str
    """Name of the graph being run."""
    digest: str
    """SHA-256 of the graph's canonical DOT, so state is never resumed on another graph."""
    status: str
    """``running``, ``paused`` or ``done``."""
    queue: tuple[str, ...]
    """Nodes still scheduled, the next one first."""
    history: tuple[tuple[str, str], ...] = ()
    """``(node, outcome)`` for every node executed, in order."""

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
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunState:
        """Rebuild from :meth:`to_dict` output; WorkflowError if it is not such data."""
        try:
            if data["version"] != _STATE_VERSION:
                raise WorkflowError(f"unsupported state version {data['version']!r}")
            return cls(
                workflow=str(data["workflow"]),
                digest=str(data["digest"]),
                status=str(data["status"]),
                queue=tuple(str(n) for n in data["queue"]),
                history=tuple((str(n), str(o)) for n, o in data["history"]),
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
    """The node's prompt with ``$goal`` expanded (empty if it has none)."""
    state: RunState
    """The run so far (outcomes of earlier nodes)."""


#: A node's behaviour: returns its outcome (None means ``success``).
Handler = Callable[[StepContext], str | None]


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


def next_node(graph: ThoughtGraph, node_id: str, outcome: str) -> str:
    """The node to run after ``node_id`` produced ``outcome``; RoutingError if none fits."""
    edges = graph.outgoing(node_id)
    wanted = normalise_outcome(outcome)
    unconditional = tuple(e for e in edges if e.condition is None)
    groups: tuple[tuple[Edge, ...], ...] = (
        tuple(e for e in edges if e.condition is not None and condition_holds(e.condition, wanted)),
        tuple(e for e in unconditional if e.label and normalise_outcome(e.label) == wanted),
        tuple(e for e in unconditional if not (e.label and e.label.strip())),
        unconditional if len(edges) == 1 else (),
    )
    for group in groups:
        if group:
            best = max(e.weight for e in group)
            return next(e for e in group if e.weight == best).target
    raise RoutingError(f"no edge leaves {node_id} for outcome {outcome!r}")


def run(
    graph: ThoughtGraph,
    handlers: Mapping[str, Handler],
    state_path: str | os.PathLike[str] | None = None,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> RunState:
    """Run ``graph`` to an exit or a pause, resuming from ``state_path`` if it holds a state."""
    _check_runnable(graph, handlers)
    path = Path(state_path) if state_path is not None else None
    state = _initial_state(graph, path)
    while state.status != "done":
        node = graph.node(state.queue[0])
        if node.kind is NodeKind.EXIT:
            state = replace(
                state,
                status="done",
                queue=(),
                history=(*state.history, (node.id, SUCCESS)),
            )
        else:
            if len(state.history) >= max_steps:
                raise StepLimitExceeded(state, max_steps)
            try:
                outcome = _execute(graph, node, handlers, state)
            except Pause:
                state = replace(state, status="paused")
                _save(path, state)
                return state
            state = _advance(graph, state, node, outcome)
        _save(path, state)
    return state


def _check_runnable(graph: ThoughtGraph, handlers: Mapping[str, Handler]) -> None:
    issues = validate(graph)
    if issues:
        listed = "; ".join(f"{i.rule}: {i.message}" for i in issues)
        raise WorkflowError(f"workflow {graph.name} is not valid: {listed}")
    missing = [
        n.id for n in graph.nodes if n.kind not in _NO_HANDLER_NEEDED and n.id not in handlers
    ]
    if missing:
        raise WorkflowError(f"no handler for node(s): {', '.join(missing)}")
    unknown = sorted(set(handlers) - {n.id for n in graph.nodes})
    if unknown:
        raise WorkflowError(f"handlers for unknown node(s): {', '.join(unknown)}")


def _initial_state(graph: ThoughtGraph, path: Path | None) -> RunState:
    digest = graph_digest(graph)
    if path is not None and path.exists():
        state = RunState.from_dict(json.loads(path.read_text(encoding="utf-8")))
        if (state.workflow, state.digest) != (graph.name, digest):
            raise WorkflowError(f"{path} holds the state of a different workflow or version")
        return state if state.status == "done" else replace(state, status="running")
    (start,) = graph.of_kind(NodeKind.START)
    return RunState(workflow=graph.name, digest=digest, status="running", queue=(start.id,))


def _execute(
    graph: ThoughtGraph, node: Node, handlers: Mapping[str, Handler], state: RunState
) -> str:
    handler = handlers.get(node.id)
    if handler is None:
        if node.kind is NodeKind.DECISION and state.history:
            return state.history[-1][1]
        return SUCCESS
    context = StepContext(graph, node, graph.expand(node.prompt or ""), state)
    attempt = 0
    while True:
        try:
            outcome = handler(context)
        except Pause:
            raise
        except Exception:
            if attempt >= node.max_retries:
                raise
            attempt += 1
            logger.warning("node %s failed, retry %d of %d", node.id, attempt, node.max_retries)
            continue
        return SUCCESS if outcome is None else outcome


def _advance(graph: ThoughtGraph, state: RunState, node: Node, outcome: str) -> RunState:
    history = (*state.history, (node.id, outcome))
    rest = state.queue[1:]
    if rest:
        return replace(state, queue=rest, history=history)
    if node.kind is NodeKind.PARALLEL:
        branches = tuple(e.target for e in graph.outgoing(node.id))
        join = graph.outgoing(branches[0])[0].target
        return replace(state, queue=(*branches, join), history=history)
    return replace(state, queue=(next_node(graph, node.id, outcome),), history=history)


def _save(path: Path | None, state: RunState) -> None:
    if path is None:
        return
    text = json.dumps(state.to_dict(), indent=2, sort_keys=True) + "\n"
    atomic_write_text(path, text)
