"""The thought-graph model (seed 003 §2): typed nodes, ordered edges, routing conditions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "FIDELITIES",
    "Clause",
    "Edge",
    "Node",
    "NodeKind",
    "ThoughtGraph",
    "WorkflowError",
    "condition_holds",
    "is_node_id",
    "normalise_outcome",
    "parse_condition",
]

#: Context strategies a node may ask for (seed 003 §2.3 ``fidelity``).
FIDELITIES: tuple[str, ...] = ("full", "compact", "truncate")

_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOT_KEYWORDS = frozenset({"node", "edge", "graph", "digraph", "subgraph", "strict"})
_NODE_TYPED = frozenset({"shape", "label", "prompt", "goal_gate", "max_retries", "fidelity"})
_EDGE_TYPED = frozenset({"label", "condition", "weight"})
_CLAUSE = re.compile(r"\s*outcome\s*(!=|==|=)\s*([A-Za-z0-9_.-]+)\s*")


class WorkflowError(ValueError):
    """A thought graph that cannot be read, built or run."""


def _check_extra(owner: str, extra: tuple[tuple[str, str], ...], typed: frozenset[str]) -> None:
    for key, value in extra:
        if not _ID.fullmatch(key) or key in typed:
            raise WorkflowError(f"{owner}: {key!r} cannot be an extra attribute name")
        if not isinstance(value, str):
            raise WorkflowError(f"{owner}: extra attribute {key} must be a string")


class NodeKind(StrEnum):
    """What a node does, named by its DOT shape (seed 003 §2.2)."""

    START = "Mdiamond"
    EXIT = "Msquare"
    COGNITION = "box"
    HUMAN_GATE = "hexagon"
    DECISION = "diamond"
    PARALLEL = "component"
    ACTION = "parallelogram"

    @property
    def shape(self) -> str:
        """The Graphviz shape written for this kind."""
        return self.value


def is_node_id(text: str) -> bool:
    """Whether ``text`` can name a node: an ASCII identifier that is no DOT keyword."""
    return bool(_ID.fullmatch(text)) and text.lower() not in _DOT_KEYWORDS


def normalise_outcome(outcome: str) -> str:
    """The form outcomes, labels and condition values are compared in."""
    return outcome.strip().lower()


@dataclass(frozen=True)
class Clause:
    """One ``outcome=value`` or ``outcome!=value`` test."""

    negated: bool
    """True for ``!=``."""
    value: str
    """The outcome compared against, normalised."""

    def holds(self, outcome: str) -> bool:
        """Whether ``outcome`` satisfies this test."""
        return (normalise_outcome(outcome) == self.value) != self.negated


def parse_condition(text: str) -> tuple[Clause, ...]:
    """Parse ``outcome=a && outcome!=b``; WorkflowError on anything else."""
    clauses = []
    for part in text.split("&&"):
        match = _CLAUSE.fullmatch(part)
        if match is None:
            raise WorkflowError(
                f"invalid condition {text!r}: expected 'outcome=VALUE' or 'outcome!=VALUE' "
                "joined by '&&'"
            )
        clauses.append(Clause(match.group(1) == "!=", normalise_outcome(match.group(2))))
    return tuple(clauses)


def condition_holds(text: str, outcome: str) -> bool:
    """Whether every clause of condition ``text`` holds for ``outcome``."""
    return all(clause.holds(outcome) for clause in parse_condition(text))


@dataclass(frozen=True)
class Node:
    """One step of the thought process."""

    id: str
    """Identifier, also the key of its handler and its name in saved state."""
    kind: NodeKind
    """Semantics, from the DOT shape (a node without shape is a COGNITION step)."""
    label: str | None = None
    """Text shown in diagrams."""
    prompt: str | None = None
    """Instruction for the step; ``$goal`` expands to the graph's goal."""
    goal_gate: bool = False
    """Whether this step must succeed for the workflow to count as done."""
    max_retries: int = 0
    """How many times a handler that raises is retried before the run stops."""
    fidelity: str | None = None
    """Context strategy, one of :data:`FIDELITIES`."""
    extra: tuple[tuple[str, str], ...] = ()
    """Other DOT attributes, sorted by name, kept so rendering loses nothing."""

    def __post_init__(self) -> None:
        if not is_node_id(self.id):
            raise WorkflowError(f"invalid node id {self.id!r}: use a letter/underscore identifier")
        if self.max_retries < 0:
            raise WorkflowError(f"node {self.id}: max_retries must be >= 0")
        if self.fidelity is not None and self.fidelity not in FIDELITIES:
            raise WorkflowError(f"node {self.id}: fidelity must be one of {', '.join(FIDELITIES)}")
        _check_extra(f"node {self.id}", self.extra, _NODE_TYPED)
        object.__setattr__(self, "extra", tuple(sorted(self.extra)))


@dataclass(frozen=True)
class Edge:
    """A transition between two nodes; its position in the graph breaks routing ties."""

    source: str
    """Id of the node the edge leaves."""
    target: str
    """Id of the node the edge enters."""
    label: str | None = None
    """Human-readable description; without a condition it also matches an outcome."""
    condition: str | None = None
    """Routing test on the source node's outcome, e.g. ``outcome=fail``."""
    weight: int = 0
    """Priority among edges that match equally (higher first)."""
    extra: tuple[tuple[str, str], ...] = ()
    """Other DOT attributes, sorted by name."""

    def __post_init__(self) -> None:
        _check_extra(f"edge {self.source} -> {self.target}", self.extra, _EDGE_TYPED)
        object.__setattr__(self, "extra", tuple(sorted(self.extra)))

    @property
    def key(self) -> tuple[str, str]:
        """``(source, target)``, how issues point at an edge."""
        return (self.source, self.target)


@dataclass(frozen=True)
class ThoughtGraph:
    """A whole workflow: nodes in declaration order, edges in declaration order."""

    name: str
    """Graph name (the ``digraph NAME``)."""
    nodes: tuple[Node, ...]
    """Every node once."""
    edges: tuple[Edge, ...] = ()
    """Every edge; order matters for routing ties."""
    goal: str | None = None
    """What the workflow is for; substituted for ``$goal`` in prompts."""
    extra: tuple[tuple[str, str], ...] = ()
    """Other graph attributes, sorted by name."""
    _index: dict[str, Node] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not is_node_id(self.name):
            raise WorkflowError(f"invalid graph name {self.name!r}: use an identifier")
        index: dict[str, Node] = {}
        for node in self.nodes:
            if node.id in index:
                raise WorkflowError(f"node {node.id} is defined twice")
            index[node.id] = node
        for edge in self.edges:
            for end in edge.key:
                if end not in index:
                    raise WorkflowError(f"edge {edge.source} -> {edge.target}: unknown node {end}")
        _check_extra(f"graph {self.name}", self.extra, frozenset({"goal"}))
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "edges", tuple(self.edges))
        object.__setattr__(self, "extra", tuple(sorted(self.extra)))
        object.__setattr__(self, "_index", index)

    def node(self, node_id: str) -> Node:
        """The node called ``node_id``; KeyError if there is none."""
        return self._index[node_id]

    def has_node(self, node_id: str) -> bool:
        """Whether a node called ``node_id`` exists."""
        return node_id in self._index

    def outgoing(self, node_id: str) -> tuple[Edge, ...]:
        """Edges leaving ``node_id``, in graph order."""
        return tuple(e for e in self.edges if e.source == node_id)

    def incoming(self, node_id: str) -> tuple[Edge, ...]:
        """Edges entering ``node_id``, in graph order."""
        return tuple(e for e in self.edges if e.target == node_id)

    def of_kind(self, kind: NodeKind) -> tuple[Node, ...]:
        """Nodes of one kind, in graph order."""
        return tuple(n for n in self.nodes if n.kind is kind)

    def successors(self, node_id: str) -> Iterator[str]:
        """Targets of the edges leaving ``node_id``."""
        return (e.target for e in self.outgoing(node_id))

    def expand(self, text: str) -> str:
        """``text`` with ``$goal`` replaced by the graph's goal (empty if it has none)."""
        return text.replace("$goal", self.goal or "")
