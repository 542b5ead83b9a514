"""Thought graphs the builder writes as ``workflow.dot`` for multi-step agents.

* ``pipeline``: start, each step in order, exit (seed 003 §4.1).
* ``guided``: after each step a human gate (``<step>_review``) routes on the
  user's answer: ``continue`` to the next step, ``redo`` back to the same step,
  ``back`` to the step before (not offered after the first step). The review
  gate pattern of seed 003 §4.3 with the guided agent's back/redo choices.
* ``collaborative``: start, a parallel fan-out to every step (one per
  perspective), a ``synthesis`` step that joins them, exit.

Step prompts are kept as data: they only ever become quoted DOT values.

:func:`step_ids` turns step names into node ids (the builder and the agents
derive them the same way), and :func:`agent_workflow` gives an agent class the
graph it follows: the ``workflow.dot`` beside its module in a generated
package, else the graph :func:`linear_workflow` draws for its steps.
"""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path
from typing import Literal

from mindrian.workflow.dot import parse
from mindrian.workflow.model import Edge, Node, NodeKind, ThoughtGraph, WorkflowError

__all__ = [
    "EXIT_ID",
    "FAN_OUT_ID",
    "START_ID",
    "SYNTHESIS_ID",
    "WorkflowKind",
    "agent_workflow",
    "linear_workflow",
    "review_gate_id",
    "step_ids",
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


#: Node ids are cut to this length (the full name stays in the prompt).
_MAX_NODE_ID = 40
#: Ids the helpers give their own nodes, and DOT keywords: never a step's id.
_RESERVED_IDS = frozenset(
    {START_ID, EXIT_ID, FAN_OUT_ID, SYNTHESIS_ID, "node", "edge", "graph", "digraph", "subgraph"}
    | {"strict"}
)


def step_ids(names: tuple[str, ...]) -> tuple[str, ...]:
    """Unique node ids ``[a-z_][a-z0-9_]*`` for step names, in order (``step_N`` for a blank)."""
    used: set[str] = set()
    result = []
    for number, name in enumerate(names, 1):
        base = re.sub(r"[^a-z0-9]+", "_", name.lower())[:_MAX_NODE_ID].strip("_")
        base = base or f"step_{number}"
        if base[0].isdigit():
            base = f"step_{base}"
        node_id, suffix = base, 2
        while node_id in used or node_id in _RESERVED_IDS:
            node_id, suffix = f"{base}_{suffix}", suffix + 1
        used.add(node_id)
        result.append(node_id)
    return tuple(result)


def agent_workflow(
    owner: type, kind: WorkflowKind, steps: tuple[tuple[str, str], ...]
) -> ThoughtGraph:
    """The graph agent class ``owner`` follows; its step nodes are :func:`step_ids` of ``steps``.

    A generated package keeps ``workflow.dot`` beside the agent's module: that
    drawing is run as it is. Other agents get :func:`linear_workflow`'s graph.
    WorkflowError if the file does not parse or lacks a node for a step.
    """
    ids = step_ids(tuple(name for name, _ in steps))
    module_file = getattr(sys.modules.get(owner.__module__), "__file__", None)
    drawn = Path(module_file).with_name("workflow.dot") if module_file else None
    if drawn is not None and drawn.is_file():
        try:
            graph = parse(drawn.read_text(encoding="utf-8"))
        except WorkflowError as exc:
            raise WorkflowError(f"{drawn}:{exc.line}: {exc.message}", line=exc.line) from None
        missing = [i for i in ids if not graph.has_node(i)]
        if missing:
            raise WorkflowError(f"{drawn} has no node for step(s): {', '.join(missing)}")
        return graph
    name = step_ids((owner.__name__,))[0]
    return linear_workflow(name, tuple(zip(ids, (text for _, text in steps), strict=True)), kind)


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
    return tuple(Edge(a, b) for a, b in itertools.pairwise(ids))


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
