"""The thought-graph model (seed 003 §2, Attractor specification §2): typed nodes, ordered edges.

Node kinds follow the Attractor shape-to-handler table: ``Mdiamond`` start,
``Msquare`` exit, ``box`` LLM task (also every unknown shape), ``hexagon`` human
gate, ``diamond`` decision, ``component`` parallel fan-out, ``tripleoctagon``
fan-in, ``parallelogram`` tool, ``house`` manager loop. An explicit ``type``
attribute overrides the shape, as in the specification's handler registry.

Attribute values are typed (String, Integer, Float, Boolean, Duration); the
attributes the specification types are checked when a graph is read, every
other attribute is kept as text in ``extra`` so rendering loses nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from mindrian.errors import MindrianError

__all__ = [
    "FIDELITIES",
    "Duration",
    "Edge",
    "Node",
    "NodeKind",
    "ThoughtGraph",
    "WorkflowError",
    "is_attribute_key",
    "is_node_id",
    "normalise_label",
    "normalise_outcome",
    "parse_duration",
]

#: Context strategies a node or edge may ask for (Attractor §5.4; seed 003 names the first three).
FIDELITIES: tuple[str, ...] = (
    "full",
    "truncate",
    "compact",
    "summary:low",
    "summary:medium",
    "summary:high",
)

_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_DOT_KEYWORDS = frozenset({"node", "edge", "graph", "digraph", "subgraph", "strict"})
_NODE_TYPED = frozenset(
    {
        "shape",
        "type",
        "label",
        "prompt",
        "goal_gate",
        "max_retries",
        "fidelity",
        "retry_target",
        "fallback_retry_target",
        "timeout",
    }
)
_EDGE_TYPED = frozenset({"label", "condition", "weight"})
_DURATION = re.compile(r"(-?[0-9]+)(ms|s|m|h|d)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
# Accelerator prefixes a label may carry (Attractor §3.3): "[Y] ", "Y) ", "Y - ".
_ACCELERATOR = re.compile(r"^\s*(?:\[[^\]]\]\s*|[A-Za-z0-9]\)\s+|[A-Za-z0-9]\s+-\s+)")


class WorkflowError(MindrianError, ValueError):
    """A thought graph that cannot be read, built or run; ``line``/``column`` locate it (or 0)."""

    def __init__(self, message: str, *, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def _check_extra(owner: str, extra: tuple[tuple[str, str], ...], typed: frozenset[str]) -> None:
    for key, value in extra:
        if not is_attribute_key(key) or key in typed:
            raise WorkflowError(f"{owner}: {key!r} cannot be an extra attribute name")
        if not isinstance(value, str):
            raise WorkflowError(f"{owner}: extra attribute {key} must be a string")


class NodeKind(StrEnum):
    """What a node does, named by its canonical DOT shape."""

    START = "Mdiamond"
    EXIT = "Msquare"
    COGNITION = "box"
    HUMAN_GATE = "hexagon"
    DECISION = "diamond"
    PARALLEL = "component"
    FAN_IN = "tripleoctagon"
    ACTION = "parallelogram"
    MANAGER = "house"

    @property
    def shape(self) -> str:
        """The Graphviz shape written for this kind."""
        return self.value

    @property
    def handler_type(self) -> str:
        """The Attractor handler type of this kind (``codergen``, ``wait.human``, ...)."""
        return _HANDLER_TYPES[self]

    @classmethod
    def from_type(cls, handler_type: str) -> NodeKind | None:
        """The kind whose handler type is ``handler_type``, or None for a custom type."""
        return _KIND_OF_TYPE.get(handler_type)


_HANDLER_TYPES = {
    NodeKind.START: "start",
    NodeKind.EXIT: "exit",
    NodeKind.COGNITION: "codergen",
    NodeKind.HUMAN_GATE: "wait.human",
    NodeKind.DECISION: "conditional",
    NodeKind.PARALLEL: "parallel",
    NodeKind.FAN_IN: "parallel.fan_in",
    NodeKind.ACTION: "tool",
    NodeKind.MANAGER: "stack.manager_loop",
}
_KIND_OF_TYPE = {handler_type: kind for kind, handler_type in _HANDLER_TYPES.items()}


def is_node_id(text: str) -> bool:
    """Whether ``text`` can name a node: an ASCII identifier that is no DOT keyword."""
    return bool(_ID.fullmatch(text)) and text.lower() not in _DOT_KEYWORDS


def is_attribute_key(text: str) -> bool:
    """Whether ``text`` can name an attribute: an identifier or a dotted ``a.b.c`` key."""
    return bool(_KEY.fullmatch(text))


def normalise_outcome(outcome: str) -> str:
    """The form outcomes and condition values on ``outcome`` are compared in."""
    return outcome.strip().lower()


def normalise_label(label: str) -> str:
    """An edge label as routing compares it: accelerator prefix stripped, trimmed, lower-case."""
    return _ACCELERATOR.sub("", label).strip().lower()


@dataclass(frozen=True)
class Duration:
    """A typed Duration value: an integer and a unit (``ms``, ``s``, ``m``, ``h``, ``d``)."""

    amount: int
    """The integer part as written."""
    unit: str
    """One of ``ms``, ``s``, ``m``, ``h``, ``d``."""

    def __post_init__(self) -> None:
        if self.unit not in _UNIT_SECONDS:
            raise WorkflowError(f"unknown duration unit {self.unit!r}: use ms, s, m, h or d")
        if self.amount < 0:
            raise WorkflowError(f"a duration cannot be negative: {self}")

    @property
    def seconds(self) -> float:
        """The duration in seconds."""
        return self.amount * _UNIT_SECONDS[self.unit]

    def __str__(self) -> str:
        return f"{self.amount}{self.unit}"


def parse_duration(text: str) -> Duration:
    """``900s``, ``15m``, ``250ms`` as a :class:`Duration`; WorkflowError otherwise."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise WorkflowError(
            f"{text!r} is not a duration: write an integer and a unit (ms, s, m, h, d), e.g. 900s"
        )
    return Duration(int(match.group(1)), match.group(2))


@dataclass(frozen=True)
class Node:
    """One step of the thought process."""

    id: str
    """Identifier, also the key of its handler and its name in saved state."""
    kind: NodeKind
    """Semantics, from ``type``, else the shape (a node without shape is a COGNITION step)."""
    label: str | None = None
    """Text shown in diagrams; the prompt of an LLM step that has none."""
    prompt: str | None = None
    """Instruction for the step; ``$goal`` expands to the graph's goal."""
    goal_gate: bool = False
    """Whether this step must succeed (``success``/``partial_success``) before the run may exit."""
    max_retries: int | None = None
    """Extra attempts after the first; None inherits the graph's ``default_max_retries``."""
    fidelity: str | None = None
    """Context strategy; values outside :data:`FIDELITIES` are kept and reported as a warning."""
    extra: tuple[tuple[str, str], ...] = ()
    """Other DOT attributes, sorted by name, kept so rendering loses nothing."""
    shape: str | None = None
    """The shape as written when it is not ``kind``'s (an unknown shape, a ``type`` override)."""
    type: str | None = None
    """Explicit handler type (``wait.human``, ``tool``, a custom type); overrides the shape."""
    retry_target: str | None = None
    """Node to jump to when this node fails (or, as a goal gate, is unsatisfied at the exit)."""
    fallback_retry_target: str | None = None
    """Second choice when ``retry_target`` is not set."""
    timeout: Duration | None = None
    """Longest a handler may run."""
    line: int = field(default=0, compare=False)
    """Source line where the node first appears (0 when built in code)."""

    def __post_init__(self) -> None:
        if not is_node_id(self.id):
            raise WorkflowError(f"invalid node id {self.id!r}: use a letter/underscore identifier")
        if self.max_retries is not None and self.max_retries < 0:
            raise WorkflowError(f"node {self.id}: max_retries must be >= 0")
        _check_extra(f"node {self.id}", self.extra, _NODE_TYPED)
        object.__setattr__(self, "extra", tuple(sorted(self.extra)))

    @property
    def handler_type(self) -> str:
        """The handler type this node resolves to: ``type`` if set, else its kind's."""
        return self.type or self.kind.handler_type

    def attr(self, key: str, default: str | None = None) -> str | None:
        """The value of extra attribute ``key``."""
        return dict(self.extra).get(key, default)


@dataclass(frozen=True)
class Edge:
    """A transition between two nodes."""

    source: str
    """Id of the node the edge leaves."""
    target: str
    """Id of the node the edge enters."""
    label: str | None = None
    """Caption and routing key: matched against an outcome's preferred label."""
    condition: str | None = None
    """Guard expression (Attractor §10), e.g. ``outcome=fail && context.tests=true``."""
    weight: int | float = 0
    """Priority among eligible edges (higher first); Integer or Float."""
    extra: tuple[tuple[str, str], ...] = ()
    """Other DOT attributes, sorted by name."""
    line: int = field(default=0, compare=False)
    """Source line of the edge statement (0 when built in code)."""

    def __post_init__(self) -> None:
        _check_extra(f"edge {self.source} -> {self.target}", self.extra, _EDGE_TYPED)
        object.__setattr__(self, "extra", tuple(sorted(self.extra)))

    @property
    def key(self) -> tuple[str, str]:
        """``(source, target)``, how issues point at an edge."""
        return (self.source, self.target)

    def attr(self, key: str, default: str | None = None) -> str | None:
        """The value of extra attribute ``key``."""
        return dict(self.extra).get(key, default)


@dataclass(frozen=True)
class ThoughtGraph:
    """A whole workflow: nodes in declaration order, edges in declaration order."""

    name: str
    """Graph name (the ``digraph NAME``)."""
    nodes: tuple[Node, ...]
    """Every node once."""
    edges: tuple[Edge, ...] = ()
    """Every edge, in declaration order."""
    goal: str | None = None
    """What the workflow is for; substituted for ``$goal`` in prompts."""
    extra: tuple[tuple[str, str], ...] = ()
    """Other graph attributes (``retry_target``, ``default_max_retries``, ...), sorted by name."""
    _index: dict[str, Node] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not is_node_id(self.name):
            raise WorkflowError(f"invalid graph name {self.name!r}: use an identifier")
        index: dict[str, Node] = {}
        for node in self.nodes:
            if node.id in index:
                raise WorkflowError(f"node {node.id} is defined twice", line=node.line)
            index[node.id] = node
        for edge in self.edges:
            for end in edge.key:
                if end not in index:
                    raise WorkflowError(
                        f"edge {edge.source} -> {edge.target}: unknown node {end}", line=edge.line
                    )
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

    def attr(self, key: str, default: str | None = None) -> str | None:
        """The value of graph attribute ``key`` (``goal`` included)."""
        if key == "goal":
            return self.goal if self.goal is not None else default
        return dict(self.extra).get(key, default)

    def expand(self, text: str) -> str:
        """``text`` with ``$goal`` replaced by the graph's goal (empty if it has none)."""
        return text.replace("$goal", self.goal or "")
