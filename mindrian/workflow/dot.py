"""Reading and writing thought graphs as DOT text (seed 003 §2.1 subset).

Parsing uses ``pydot``. Supported: one ``digraph`` per file, node and edge
statements (chains like ``a -> b -> c`` included), ``graph``/``node``/``edge``
default statements, which apply to what is declared after them as in Graphviz.
Rejected with a message: undirected or ``strict`` graphs, subgraphs, ports,
several graphs in one file, node ids that are not identifiers, unknown shapes
and badly typed attributes.

Quoted values use ``\\"``, ``\\\\``, ``\\n`` and ``\\r`` escapes; any other
backslash pair is kept as written (so Graphviz label escapes like ``\\l`` survive).

:func:`render` is canonical: nodes and edges in model order, attributes sorted by
name, every string quoted, so ``render(parse(render(g))) == render(g)``.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Mapping
from typing import Any

import pydot

from mindrian.workflow.model import (
    FIDELITIES,
    Edge,
    Node,
    NodeKind,
    ThoughtGraph,
    WorkflowError,
    is_node_id,
)

__all__ = ["parse", "render"]

_KINDS = {kind.shape.lower(): kind for kind in NodeKind}
_DEFAULTS = ("graph", "node", "edge")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_DECODED = {'"': '"', "\\": "\\", "n": "\n", "r": "\r", "\n": ""}
_INT = re.compile(r"[+-]?[0-9]+")


def parse(text: str) -> ThoughtGraph:
    """The thought graph in DOT ``text``; WorkflowError naming the problem otherwise."""
    graph = _read_one(text)
    statements = _statements(graph)
    defaults: dict[str, list[tuple[int, dict[str, str]]]] = {name: [] for name in _DEFAULTS}
    node_attrs: dict[str, list[tuple[int, dict[str, str]]]] = {}
    first_seen: dict[str, int] = {}
    edges: list[tuple[int, str, str, dict[str, str]]] = []
    for seq, kind, payload in statements:
        if kind in _DEFAULTS:
            defaults[kind].append((seq, payload["attrs"]))
        elif kind == "nodedef":
            name = payload["name"]
            node_attrs.setdefault(name, []).append((seq, payload["attrs"]))
            first_seen.setdefault(name, seq)
        else:  # "edgedef"
            for end in (payload["source"], payload["target"]):
                first_seen.setdefault(end, seq)
            edges.append((seq, payload["source"], payload["target"], payload["attrs"]))
    graph_attrs = _merge(_attrs(graph.get_attributes()), *(a for _, a in defaults["graph"]))
    nodes = tuple(
        _node(
            name,
            _merge(
                _active(defaults["node"], seq),
                *(a for _, a in node_attrs.get(name, ())),
            ),
        )
        for name, seq in sorted(first_seen.items(), key=lambda item: item[1])
    )
    edge_models = tuple(
        _edge(src, dst, _merge(_active(defaults["edge"], seq), attrs))
        for seq, src, dst, attrs in edges
    )
    goal = graph_attrs.pop("goal", None)
    return ThoughtGraph(
        name=_graph_name(graph),
        nodes=nodes,
        edges=edge_models,
        goal=goal,
        extra=tuple(graph_attrs.items()),
    )


def _read_one(text: str) -> pydot.Dot:
    messages = io.StringIO()
    # pydot reports syntax errors by printing them and returning None.
    with contextlib.redirect_stdout(messages):
        try:
            graphs = pydot.graph_from_dot_data(text)
        except Exception as exc:  # pydot/pyparsing raise a variety of types
            raise WorkflowError(f"not valid DOT: {exc}") from None
    if not graphs:
        detail = " ".join(messages.getvalue().split())
        raise WorkflowError(f"not valid DOT: {detail or 'no graph found'}")
    if len(graphs) != 1:
        raise WorkflowError(f"one graph per file, found {len(graphs)}")
    graph = graphs[0]
    if graph.get_type() != "digraph":
        raise WorkflowError("a thought graph must be a digraph")
    if graph.obj_dict.get("strict"):
        raise WorkflowError("strict graphs are not in the supported DOT subset")
    if graph.get_subgraphs():
        raise WorkflowError("subgraphs are not in the supported DOT subset")
    return graph


def _graph_name(graph: pydot.Dot) -> str:
    name = _unquote(graph.get_name() or "")
    if not is_node_id(name):
        raise WorkflowError(f"graph name {name!r} must be an identifier")
    return name


def _statements(graph: pydot.Dot) -> list[tuple[int, str, dict[str, Any]]]:
    """Node, default and edge statements in source order."""
    found: list[tuple[int, str, dict[str, Any]]] = []
    for node in graph.get_nodes():
        raw = node.get_name()
        attrs = _attrs(node.get_attributes())
        if raw in _DEFAULTS:
            found.append((node.obj_dict["sequence"], raw, {"attrs": attrs}))
        else:
            found.append(
                (
                    node.obj_dict["sequence"],
                    "nodedef",
                    {"name": _node_id(raw), "attrs": attrs},
                )
            )
    for edge in graph.get_edges():
        source, target = edge.get_source(), edge.get_destination()
        if not (isinstance(source, str) and isinstance(target, str)):
            raise WorkflowError("edges to subgraphs are not in the supported DOT subset")
        found.append(
            (
                edge.obj_dict["sequence"],
                "edgedef",
                {
                    "source": _node_id(source),
                    "target": _node_id(target),
                    "attrs": _attrs(edge.get_attributes()),
                },
            )
        )
    found.sort(key=lambda item: item[0])
    return found


def _node_id(raw: str) -> str:
    name = _unquote(raw)
    if not is_node_id(name):
        raise WorkflowError(
            f"node id {name!r} is not allowed: use a letter/underscore identifier "
            "(no ports, no DOT keywords)"
        )
    return name


def _attrs(raw: Mapping[str, Any]) -> dict[str, str]:
    return {str(key): _unquote(str(value)) for key, value in raw.items()}


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return _ESCAPE.sub(lambda m: _DECODED.get(m.group(1), m.group(0)), text[1:-1])
    return text


def _active(defaults: list[tuple[int, dict[str, str]]], seq: int) -> dict[str, str]:
    return _merge(*(attrs for at, attrs in defaults if at < seq))


def _merge(*layers: Mapping[str, str]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for layer in layers:
        merged.update(layer)
    return merged


def _node(node_id: str, attrs: dict[str, str]) -> Node:
    attrs = dict(attrs)
    shape = attrs.pop("shape", NodeKind.COGNITION.shape)
    kind = _KINDS.get(shape.lower())
    if kind is None:
        known = ", ".join(k.shape for k in NodeKind)
        raise WorkflowError(f"node {node_id}: unknown shape {shape!r} (known: {known})")
    return Node(
        id=node_id,
        kind=kind,
        label=attrs.pop("label", None),
        prompt=attrs.pop("prompt", None),
        goal_gate=_bool(attrs.pop("goal_gate", "false"), f"node {node_id}: goal_gate"),
        max_retries=_int(attrs.pop("max_retries", "0"), f"node {node_id}: max_retries"),
        fidelity=_fidelity(attrs.pop("fidelity", None), node_id),
        extra=tuple(attrs.items()),
    )


def _edge(source: str, target: str, attrs: dict[str, str]) -> Edge:
    attrs = dict(attrs)
    return Edge(
        source=source,
        target=target,
        label=attrs.pop("label", None),
        condition=attrs.pop("condition", None),
        weight=_int(attrs.pop("weight", "0"), f"edge {source} -> {target}: weight"),
        extra=tuple(attrs.items()),
    )


def _bool(text: str, what: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise WorkflowError(f"{what} must be true or false, got {text!r}")
    return lowered == "true"


def _int(text: str, what: str) -> int:
    if not _INT.fullmatch(text.strip()):
        raise WorkflowError(f"{what} must be an integer, got {text!r}")
    return int(text)


def _fidelity(text: str | None, node_id: str) -> str | None:
    if text is not None and text not in FIDELITIES:
        raise WorkflowError(
            f"node {node_id}: fidelity must be one of {', '.join(FIDELITIES)}, got {text!r}"
        )
    return text


def render(graph: ThoughtGraph) -> str:
    """Canonical DOT text of ``graph`` (LF line endings, trailing newline)."""
    lines = [f"digraph {graph.name} {{"]
    graph_attrs = dict(graph.extra)
    if graph.goal is not None:
        graph_attrs["goal"] = graph.goal
    if graph_attrs:
        lines.append(f"  graph [{_attr_list(graph_attrs)}];")
    lines.extend(f"  {node.id} [{_attr_list(_node_attrs(node))}];" for node in graph.nodes)
    for edge in graph.edges:
        attrs = _edge_attrs(edge)
        suffix = f" [{_attr_list(attrs)}]" if attrs else ""
        lines.append(f"  {edge.source} -> {edge.target}{suffix};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node_attrs(node: Node) -> dict[str, str | int | bool]:
    attrs: dict[str, str | int | bool] = dict(node.extra)
    attrs["shape"] = node.kind.shape
    optional = {"label": node.label, "prompt": node.prompt, "fidelity": node.fidelity}
    attrs.update({k: v for k, v in optional.items() if v is not None})
    if node.goal_gate:
        attrs["goal_gate"] = True
    if node.max_retries:
        attrs["max_retries"] = node.max_retries
    return attrs


def _edge_attrs(edge: Edge) -> dict[str, str | int | bool]:
    attrs: dict[str, str | int | bool] = dict(edge.extra)
    optional = {"label": edge.label, "condition": edge.condition}
    attrs.update({k: v for k, v in optional.items() if v is not None})
    if edge.weight:
        attrs["weight"] = edge.weight
    return attrs


def _attr_list(attrs: Mapping[str, str | int | bool]) -> str:
    return ", ".join(f"{key}={_value(key, attrs[key])}" for key in sorted(attrs))


def _value(key: str, value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if key == "shape":
        return value
    return _quote(value)


def _quote(text: str) -> str:
    escaped = (
        text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    )
    return f'"{escaped}"'
