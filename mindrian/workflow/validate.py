"""Validation: the Attractor lint rules (§7.2) and seed 003's Definition of Done, with severities.

Errors stop a run; they are what the Attractor specification rejects: no start
or several (``single_start``), no exit (``has_exit``; seed 003 allows several
exits, so more than one is accepted), an edge into the start
(``start_has_no_incoming``) or out of an exit (``exit_has_no_outgoing``), a node
the start cannot reach (``reachable``), a condition that does not parse
(``valid_condition``).

Warnings describe graphs that run but may not do what their author meant; the
specification's own warnings (``prompt_required`` for an LLM step with neither
prompt nor label, ``fidelity_valid``, ``type_known``, ``retry_target_exists``,
``goal_gate_has_retry``) and this project's stricter seed-003 rules:

* ``reaches_exit``: a node reachable from the start from which no exit can be
  reached (a trap "no unreachable nodes" alone accepts).
* ``decision_paths``/``clear_routes``: a decision point needs several ways out,
  each with its own key (a condition, else a label) and at most one unkeyed
  default, so no edge is shadowed by another.
* ``parallel_join``: the branches of a fan-out should meet again (at a
  ``tripleoctagon`` fan-in, or at the first node they all reach).

Cycles are allowed (seed 003 §1.1 says DAG, yet its TOTE loop and review gate
are cycles); the runner's step limit ends loops that never exit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mindrian.workflow.conditions import parse_condition
from mindrian.workflow.model import (
    FIDELITIES,
    Edge,
    Node,
    NodeKind,
    ThoughtGraph,
    WorkflowError,
    normalise_label,
)

__all__ = [
    "CHECKS",
    "ERROR",
    "WARNING",
    "Issue",
    "errors",
    "fan_in_of",
    "route_key",
    "validate",
]

#: Severities: an ERROR stops a run, a WARNING does not.
ERROR = "error"
WARNING = "warning"

#: Handler types an engine knows without registration (Attractor §2.8).
_KNOWN_TYPES = frozenset(kind.handler_type for kind in NodeKind)


@dataclass(frozen=True)
class Issue:
    """One broken rule."""

    rule: str
    """Name of the check, e.g. ``reachable``."""
    message: str
    """What is wrong, in a sentence."""
    node: str | None = None
    """Id of the node concerned, if any."""
    edge: tuple[str, str] | None = None
    """``(source, target)`` of the edge concerned, if any."""
    severity: str = ERROR
    """:data:`ERROR` or :data:`WARNING`."""
    line: int = 0
    """Source line of the node or edge concerned (0 when unknown)."""


def _issue(
    rule: str,
    message: str,
    severity: str,
    *,
    node: Node | None = None,
    edge: Edge | None = None,
) -> Issue:
    line = edge.line if edge is not None else node.line if node is not None else 0
    return Issue(
        rule,
        message,
        node=None if node is None else node.id,
        edge=None if edge is None else edge.key,
        severity=severity,
        line=line,
    )


def route_key(edge: Edge) -> str | None:
    """What an edge is chosen by: its condition, else its label, else nothing (a default)."""
    if edge.condition is not None:
        try:
            clauses = parse_condition(edge.condition)
        except WorkflowError:
            return "condition:" + edge.condition
        return "condition:" + "&&".join(
            sorted(f"{c.key}{'!=' if c.negated else '='}{c.value}" for c in clauses)
        )
    if edge.label is not None and edge.label.strip():
        return "label:" + normalise_label(edge.label)
    return None


def _reach(graph: ThoughtGraph, roots: Iterable[str], forward: bool) -> set[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        edges = graph.outgoing(current) if forward else graph.incoming(current)
        todo.extend(e.target if forward else e.source for e in edges)
    return seen


def _distances(graph: ThoughtGraph, root: str, stop: str) -> dict[str, int]:
    """Breadth-first distances from ``root``, not going past fan-ins, exits or ``stop``."""
    found = {root: 0}
    frontier = [root]
    while frontier:
        following = []
        for current in frontier:
            if current != root and graph.node(current).kind in (NodeKind.FAN_IN, NodeKind.EXIT):
                continue
            for target in graph.successors(current):
                if target not in found and target != stop:
                    found[target] = found[current] + 1
                    following.append(target)
        frontier = following
    return found


def fan_in_of(graph: ThoughtGraph, parallel_id: str) -> str | None:
    """Where the branches of fan-out ``parallel_id`` meet, or None if they never do.

    The nearest node every branch reaches (a ``tripleoctagon`` fan-in first), not
    looking past fan-ins and exits, ties broken by id.
    """
    branches = tuple(graph.successors(parallel_id))
    if not branches:
        return None
    reach = [_distances(graph, b, parallel_id) for b in branches]
    common = set(reach[0]).intersection(*reach[1:])
    if not common:
        return None
    return min(
        common,
        key=lambda n: (
            graph.node(n).kind is not NodeKind.FAN_IN,
            max(r[n] for r in reach),
            n,
        ),
    )


def _single_start(graph: ThoughtGraph) -> Iterable[Issue]:
    starts = graph.of_kind(NodeKind.START)
    if not starts:
        yield Issue("single_start", "the workflow has no start node (shape=Mdiamond)")
    for extra in starts[1:]:
        yield _issue(
            "single_start",
            f"second start node {extra.id}: a workflow has exactly one (first is {starts[0].id})",
            ERROR,
            node=extra,
        )


def _has_exit(graph: ThoughtGraph) -> Iterable[Issue]:
    if not graph.of_kind(NodeKind.EXIT):
        yield Issue("has_exit", "the workflow has no exit node (shape=Msquare)")


def _start_has_no_incoming(graph: ThoughtGraph) -> Iterable[Issue]:
    for start in graph.of_kind(NodeKind.START):
        for edge in graph.incoming(start.id):
            yield _issue(
                "start_has_no_incoming",
                f"edge {edge.source} -> {edge.target} enters the start node",
                ERROR,
                node=start,
                edge=edge,
            )


def _exit_has_no_outgoing(graph: ThoughtGraph) -> Iterable[Issue]:
    for exit_node in graph.of_kind(NodeKind.EXIT):
        for edge in graph.outgoing(exit_node.id):
            yield _issue(
                "exit_has_no_outgoing",
                f"edge {edge.source} -> {edge.target} leaves exit node {exit_node.id}",
                ERROR,
                node=exit_node,
                edge=edge,
            )


def _reachable(graph: ThoughtGraph) -> Iterable[Issue]:
    starts = graph.of_kind(NodeKind.START)
    if not starts:
        return
    seen = _reach(graph, (s.id for s in starts), forward=True)
    for node in graph.nodes:
        if node.id not in seen:
            yield _issue(
                "reachable", f"node {node.id} cannot be reached from the start", ERROR, node=node
            )


def _reaches_exit(graph: ThoughtGraph) -> Iterable[Issue]:
    exits = graph.of_kind(NodeKind.EXIT)
    starts = graph.of_kind(NodeKind.START)
    if not exits or not starts:
        return
    live = _reach(graph, (e.id for e in exits), forward=False)
    reachable = _reach(graph, (s.id for s in starts), forward=True)
    for node in graph.nodes:
        if node.id in reachable and node.id not in live:
            yield _issue(
                "reaches_exit", f"no exit can be reached from node {node.id}", WARNING, node=node
            )


def _prompt_required(graph: ThoughtGraph) -> Iterable[Issue]:
    for node in graph.nodes:
        if node.handler_type != "codergen":
            continue
        if not (node.prompt or "").strip() and not (node.label or "").strip():
            yield _issue(
                "prompt_required",
                f"LLM step {node.id} has neither prompt nor label",
                WARNING,
                node=node,
            )


def _valid_condition(graph: ThoughtGraph) -> Iterable[Issue]:
    for edge in graph.edges:
        if edge.condition is None:
            continue
        try:
            parse_condition(edge.condition)
        except WorkflowError as exc:
            yield _issue(
                "valid_condition", exc.message, ERROR, node=graph.node(edge.source), edge=edge
            )


def _decision_paths(graph: ThoughtGraph) -> Iterable[Issue]:
    for node in graph.of_kind(NodeKind.DECISION):
        if len(graph.outgoing(node.id)) < 2:
            yield _issue(
                "decision_paths",
                f"decision {node.id} needs at least two outgoing paths",
                WARNING,
                node=node,
            )


def _is_decision_point(graph: ThoughtGraph, node: Node) -> bool:
    if node.kind is NodeKind.PARALLEL:
        return False
    return node.kind is NodeKind.DECISION or len(graph.outgoing(node.id)) > 1


def _clear_routes(graph: ThoughtGraph) -> Iterable[Issue]:
    for node in graph.nodes:
        if not _is_decision_point(graph, node):
            continue
        taken: dict[str | None, Edge] = {}
        for edge in graph.outgoing(node.id):
            key = route_key(edge)
            if key in taken:
                what = "a second default edge" if key is None else "the same route key"
                yield _issue(
                    "clear_routes",
                    f"edge {edge.source} -> {edge.target} has {what} as "
                    f"{taken[key].source} -> {taken[key].target} and can never be taken",
                    WARNING,
                    node=node,
                    edge=edge,
                )
            else:
                taken[key] = edge
        if node.kind is not NodeKind.DECISION and set(taken) == {None}:
            continue
        if not any(key is not None for key in taken):
            yield _issue(
                "clear_routes",
                f"decision point {node.id} has no condition or label on its outgoing edges",
                WARNING,
                node=node,
            )


def _parallel_join(graph: ThoughtGraph) -> Iterable[Issue]:
    for node in graph.of_kind(NodeKind.PARALLEL):
        if len(graph.outgoing(node.id)) < 2:
            yield _issue(
                "parallel_join", f"parallel node {node.id} needs at least two branches", WARNING,
                node=node,
            )  # fmt: skip
        elif fan_in_of(graph, node.id) is None:
            yield _issue(
                "parallel_join",
                f"the branches of {node.id} never meet again (no common fan-in or next node)",
                WARNING,
                node=node,
            )


def _fidelity_valid(graph: ThoughtGraph) -> Iterable[Issue]:
    for node in graph.nodes:
        if node.fidelity is not None and node.fidelity not in FIDELITIES:
            yield _issue(
                "fidelity_valid",
                f"node {node.id}: fidelity {node.fidelity!r} is not one of {', '.join(FIDELITIES)}",
                WARNING,
                node=node,
            )


def _type_known(graph: ThoughtGraph) -> Iterable[Issue]:
    for node in graph.nodes:
        if node.type is not None and node.type not in _KNOWN_TYPES:
            yield _issue(
                "type_known",
                f"node {node.id}: type {node.type!r} is no built-in handler type; "
                "it needs a handler registered under that name",
                WARNING,
                node=node,
            )


def _retry_target_exists(graph: ThoughtGraph) -> Iterable[Issue]:
    owners: list[tuple[str, Node | None, str | None]] = [
        (f"graph {key}", None, graph.attr(key)) for key in ("retry_target", "fallback_retry_target")
    ]
    for node in graph.nodes:
        owners += [
            (f"node {node.id}: retry_target", node, node.retry_target),
            (f"node {node.id}: fallback_retry_target", node, node.fallback_retry_target),
        ]
    for what, owner, target in owners:
        if target and not graph.has_node(target):
            yield _issue(
                "retry_target_exists", f"{what} names no node: {target!r}", WARNING, node=owner
            )


def _goal_gate_has_retry(graph: ThoughtGraph) -> Iterable[Issue]:
    graph_level = graph.attr("retry_target") or graph.attr("fallback_retry_target")
    for node in graph.nodes:
        if node.goal_gate and not (node.retry_target or node.fallback_retry_target or graph_level):
            yield _issue(
                "goal_gate_has_retry",
                f"goal gate {node.id} has no retry_target: if it fails, the run fails at the exit",
                WARNING,
                node=node,
            )


#: Every check, in the order its issues are reported.
CHECKS: tuple[tuple[str, Callable[[ThoughtGraph], Iterable[Issue]]], ...] = (
    ("single_start", _single_start),
    ("has_exit", _has_exit),
    ("start_has_no_incoming", _start_has_no_incoming),
    ("exit_has_no_outgoing", _exit_has_no_outgoing),
    ("reachable", _reachable),
    ("reaches_exit", _reaches_exit),
    ("prompt_required", _prompt_required),
    ("valid_condition", _valid_condition),
    ("decision_paths", _decision_paths),
    ("clear_routes", _clear_routes),
    ("parallel_join", _parallel_join),
    ("fidelity_valid", _fidelity_valid),
    ("type_known", _type_known),
    ("retry_target_exists", _retry_target_exists),
    ("goal_gate_has_retry", _goal_gate_has_retry),
)


def validate(graph: ThoughtGraph) -> tuple[Issue, ...]:
    """Every broken rule in ``graph``, errors and warnings; empty when the workflow is clean."""
    return tuple(issue for _, check in CHECKS for issue in check(graph))


def errors(issues: Iterable[Issue]) -> tuple[Issue, ...]:
    """The issues of ERROR severity (those that stop a run)."""
    return tuple(i for i in issues if i.severity == ERROR)
