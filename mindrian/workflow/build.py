"""Thought graphs the builder writes as ``workflow.dot`` for multi-step agents.

* ``pipeline``: start, each step in order, exit (seed 003 §4.1).
* ``guided``: after each step a human gate (``<step>_review``) routes on the
  user's answer: ``continue`` to the next step, ``redo`` back to the same step,
  ``back`` to the step before (not offered after the first step). The review
  gate pattern of seed 003 §4.3 with the guided agent's back/redo choices.
* ``collaborative``: start, a parallel fan-out to every step (one per
  perspective), a ``synthesis`` step that joins them, exit.

Step prompts are kept as data: they only ever become quoted DOT values.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Literal

from mindrian.workflow.model import Edge, Node, NodeKind, ThoughtGraph, WorkflowError

__all__ = [
    "EXIT_ID",
    "FAN_OUT_ID",
    "START_ID",
    "SYNTHESIS_ID",
    "WorkflowKind",
    "linear_workflow",
    "review_gate_id",
]

#: Ids of the nodes the helpers add around the steps.
START_ID = "start"
EXIT_ID = "exit"
FAN_OUT_ID = "perspectives"
SYNTHESIS_ID = "synthesis"

#: The agent types that get a workflow file.
WorkflowKind = Literal["pipeline", "guided", "collaborative"]

_SYNTHESIS_PROMPT = (
    "Merge the results of the perspectives {names} into one answer: note where they "
    "agree, where they conflict and why, and what to do next. Goal: $goal"
)
_REVIEW_PROMPT = "Show the user the result of step {step} and ask whether to {choices}."


def review_gate_id(step_id: str) -> str:
    """Id of the human gate that follows ``step_id`` in a guided workflow."""
    return f"{step_id}_review"


def linear_workflow(
    name: str,
    steps: tuple[tuple[str, str], ...],
    kind: WorkflowKind = "pipeline",
    *,
    goal: str | None = None,
) -> ThoughtGraph:
    """A workflow over ``steps`` (``(id, prompt)`` pairs) shaped for an agent ``kind``."""
    if not steps:
        raise WorkflowError("a workflow needs at least one step")
    step_nodes = tuple(
        Node(step_id, NodeKind.COGNITION, prompt=prompt) for step_id, prompt in steps
    )
    builders = {
        "pipeline": _pipeline,
        "guided": _guided,
        "collaborative": _collaborative,
    }
    if kind not in builders:
        raise WorkflowError(f"unknown workflow kind {kind!r}: use {', '.join(builders)}")
    nodes, edges = builders[kind](step_nodes)
    start = Node(START_ID, NodeKind.START)
    exit_node = Node(EXIT_ID, NodeKind.EXIT)
    return ThoughtGraph(name=name, nodes=(start, *nodes, exit_node), edges=edges, goal=goal)


def _chain(ids: tuple[str, ...]) -> tuple[Edge, ...]:
    return tuple(Edge(a, b) for a, b in pairwise(ids))


def _pipeline(steps: tuple[Node, ...]) -> tuple[tuple[Node, ...], tuple[Edge, ...]]:
    return steps, _chain((START_ID, *(s.id for s in steps), EXIT_ID))


def _guided(steps: tuple[Node, ...]) -> tuple[tuple[Node, ...], tuple[Edge, ...]]:
    nodes: list[Node] = []
    edges: list[Edge] = [Edge(START_ID, steps[0].id)]
    for index, step in enumerate(steps):
        gate = review_gate_id(step.id)
        following = steps[index + 1].id if index + 1 < len(steps) else EXIT_ID
        choices = "continue, redo it or go back" if index else "continue or redo it"
        prompt = _REVIEW_PROMPT.format(step=step.id, choices=choices)
        nodes += [step, Node(gate, NodeKind.HUMAN_GATE, prompt=prompt)]
        edges += [
            Edge(step.id, gate),
            Edge(gate, following, label="continue"),
            Edge(gate, step.id, label="redo"),
        ]
        if index:
            edges.append(Edge(gate, steps[index - 1].id, label="back"))
    return tuple(nodes), tuple(edges)


def _collaborative(
    steps: tuple[Node, ...],
) -> tuple[tuple[Node, ...], tuple[Edge, ...]]:
    if len(steps) < 2:
        raise WorkflowError("a collaborative workflow needs at least two perspectives")
    names = ", ".join(s.id for s in steps)
    fan_out = Node(FAN_OUT_ID, NodeKind.PARALLEL)
    synthesis = Node(SYNTHESIS_ID, NodeKind.COGNITION, prompt=_SYNTHESIS_PROMPT.format(names=names))
    edges = [Edge(START_ID, FAN_OUT_ID)]
    edges += [Edge(FAN_OUT_ID, s.id) for s in steps]
    edges += [Edge(s.id, SYNTHESIS_ID) for s in steps]
    edges.append(Edge(SYNTHESIS_ID, EXIT_ID))
    return (fan_out, *steps, synthesis), tuple(edges)
