"""The Definition of Done of seed 003 §5, as named checks.

Seed rules kept: one start, at least one exit, no unreachable node, a prompt on
every cognition step, clear paths out of every decision point. Corrections:

* §1.1 calls a thought graph a DAG, yet the TOTE loop (§4.2) and the review
  gate (§4.3) are cycles. Cycles are allowed; the runner's step limit ends
  loops that never exit.
* "No unreachable nodes" alone accepts traps: a node reachable from the start
  from which no exit can be reached. ``reaches_exit`` rejects them.
* "Decision point" covers every node with several ways out (a human gate with
  approve/reject, a box whose outcome is pass/fail), not only ``diamond``.
  "Clear" means every route has its own key (a condition, or else a label)
  with at most one unkeyed default, so no edge is shadowed by another.
* Start nodes take no incoming edges, exits have no outgoing ones, conditions
  must parse, and a parallel fan-out must join on one node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mindrian.workflow.model import (
    Edge,
    Node,
    NodeKind,
    ThoughtGraph,
    WorkflowError,
    normalise_outcome,
    parse_condition,
)

__all__ = ["CHECKS", "Issue", "route_key", "validate"]


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


def route_key(edge: Edge) -> str | None:
    """What an edge is chosen by: its condition, else its label, else nothing (a default)."""
    if edge.condition is not None:
        try:
            clauses = parse_condition(edge.condition)
        except WorkflowError:
            return "condition:" + edge.condition
        return "condition:" + "&&".join(
            sorted(("!=" if c.negated else "=") + c.value for c in clauses)
        )
    if edge.label is not None and edge.label.strip():
        return "label:" + normalise_outcome(edge.label)
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


def _single_start(graph: ThoughtGraph) -> Iterable[Issue]:
    starts = graph.of_kind(NodeKind.START)
    if not starts:
        yield Issue("single_start", "the workflow has no start node (shape=Mdiamond)")
    for extra in starts[1:]:
        yield Issue(
            "single_start",
            f"second start node {extra.id}: a workflow has exactly one (first is {starts[0].id})",
            node=extra.id,
        )


def _has_exit(graph: ThoughtGraph) -> Iterable[Issue]:
    if not graph.of_kind(NodeKind.EXIT):
        yield Issue("has_exit", "the workflow has no exit node (shape=Msquare)")


def _start_has_no_incoming(graph: ThoughtGraph) -> Iterable[Issue]:
    for start in graph.of_kind(NodeKind.START):
        for edge in graph.incoming(start.id):
            yield Issue(
                "start_has_no_incoming",
                f"edge {edge.source} -> {edge.target} enters the start node",
                node=start.id,
                edge=edge.key,
            )


def _exit_has_no_outgoing(graph: ThoughtGraph) -> Iterable[Issue]:
    for exit_node in graph.of_kind(NodeKind.EXIT):
        for edge in graph.outgoing(exit_node.id):
            yield Issue(
                "exit_has_no_outgoing",
                f"edge {edge.source} -> {edge.target} leaves exit node {exit_node.id}",
                node=exit_node.id,
                edge=edge.key,
            )


def _reachable(graph: ThoughtGraph) -> Iterable[Issue]:
    starts = graph.of_kind(NodeKind.START)
    if not starts:
        return
    seen = _reach(graph, (s.id for s in starts), forward=True)
    for node in graph.nodes:
        if node.id not in seen:
            yield Issue(
                "reachable",
                f"node {node.id} cannot be reached from the start",
                node=node.id,
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
            yield Issue(
                "reaches_exit",
                f"no exit can be reached from node {node.id}",
                node=node.id,
            )


def _prompt_required(graph: ThoughtGraph) -> Iterable[Issue]:
    for node in graph.of_kind(NodeKind.COGNITION):
        if not (node.prompt or "").strip():
            yield Issue(
                "prompt_required",
                f"cognition node {node.id} (shape=box) has no prompt",
                node=node.id,
            )


def _valid_condition(graph: ThoughtGraph) -> Iterable[Issue]:
    for edge in graph.edges:
        if edge.condition is None:
            continue
        try:
            parse_condition(edge.condition)
        except WorkflowError as exc:
            yield Issue("valid_condition", str(exc), node=edge.source, edge=edge.key)


def _decision_paths(graph: ThoughtGraph) -> Iterable[Issue]:
    for node in graph.of_kind(NodeKind.DECISION):
        if len(graph.outgoing(node.id)) < 2:
            yield Issue(
                "decision_paths",
                f"decision {node.id} needs at least two outgoing paths",
                node=node.id,
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
                yield Issue(
                    "clear_routes",
                    f"edge {edge.source} -> {edge.target} has {what} as "
                    f"{taken[key].source} -> {taken[key].target} and can never be taken",
                    node=node.id,
                    edge=edge.key,
                )
            else:
                taken[key] = edge
        if node.kind is not NodeKind.DECISION and set(taken) == {None}:
            continue
        if not any(key is not None for key in taken):
            yield Issue(
                "clear_routes",
                f"decision point {node.id} has no condition or label on its outgoing edges",
                node=node.id,
            )


def _parallel_join(graph: ThoughtGraph) -> Iterable[Issue]:
    for node in graph.of_kind(NodeKind.PARALLEL):
        branches = graph.outgoing(node.id)
        if len(branches) < 2:
            yield Issue(
                "parallel_join",
                f"parallel node {node.id} needs at least two branches",
                node=node.id,
            )
            continue
        joins = set()
        for edge in branches:
            target = graph.node(edge.target)
            after = graph.outgoing(target.id)
            if target.kind in (NodeKind.START, NodeKind.EXIT, NodeKind.PARALLEL) or len(after) != 1:
                yield Issue(
                    "parallel_join",
                    f"branch {target.id} of {node.id} must be one step with exactly one outgoing "
                    "edge",
                    node=target.id,
                    edge=edge.key,
                )
            joins.update(e.target for e in after)
        if len(joins) > 1:
            yield Issue(
                "parallel_join",
                f"branches of {node.id} end in different nodes: {', '.join(sorted(joins))}",
                node=node.id,
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
)


def validate(graph: ThoughtGraph) -> tuple[Issue, ...]:
    """Every broken rule in ``graph``; empty when the workflow is valid."""
    return tuple(issue for _, check in CHECKS for issue in check(graph))
