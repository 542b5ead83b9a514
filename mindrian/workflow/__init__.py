"""Agent workflows as Graphviz DOT thought graphs (seed 003).

``parse`` reads DOT into a :class:`ThoughtGraph`, ``validate`` applies the
Definition of Done, ``render`` writes canonical DOT, ``linear_workflow`` builds
the graphs of pipeline, guided and collaborative agents, and ``run`` executes a
graph with deterministic routing and state saved after every node.
"""

from mindrian.workflow.build import (
    EXIT_ID,
    FAN_OUT_ID,
    START_ID,
    SYNTHESIS_ID,
    WorkflowKind,
    linear_workflow,
    review_gate_id,
)
from mindrian.workflow.dot import parse, render
from mindrian.workflow.engine import (
    DEFAULT_MAX_STEPS,
    SUCCESS,
    Handler,
    Pause,
    RoutingError,
    RunState,
    StepContext,
    StepLimitExceeded,
    graph_digest,
    next_node,
    run,
)
from mindrian.workflow.model import (
    FIDELITIES,
    Clause,
    Edge,
    Node,
    NodeKind,
    ThoughtGraph,
    WorkflowError,
    condition_holds,
    is_node_id,
    normalise_outcome,
    parse_condition,
)
from mindrian.workflow.validate import CHECKS, Issue, route_key, validate

__all__ = [
    "CHECKS",
    "DEFAULT_MAX_STEPS",
    "EXIT_ID",
    "FAN_OUT_ID",
    "FIDELITIES",
    "START_ID",
    "SUCCESS",
    "SYNTHESIS_ID",
    "Clause",
    "Edge",
    "Handler",
    "Issue",
    "Node",
    "NodeKind",
    "Pause",
    "RoutingError",
    "RunState",
    "StepContext",
    "StepLimitExceeded",
    "ThoughtGraph",
    "WorkflowError",
    "WorkflowKind",
    "condition_holds",
    "graph_digest",
    "is_node_id",
    "linear_workflow",
    "next_node",
    "normalise_outcome",
    "parse",
    "parse_condition",
    "render",
    "review_gate_id",
    "route_key",
    "run",
    "validate",
]
