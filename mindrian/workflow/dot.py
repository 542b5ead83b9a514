"""Reading and writing thought graphs as DOT text (Attractor §2 subset; seed 003 §2.1).

:func:`parse` is a recursive-descent parser of the Attractor grammar that keeps
line and column of everything it reads, so every error is located. Accepted:
one ``digraph NAME { ... }``; node, chained edge (``a -> b -> c``) and
``key=value`` statements; ``graph``/``node``/``edge`` default blocks, which apply
to what is declared after them; ``subgraph`` blocks (named, anonymous or bare
``{ }``), flattened with their defaults scoped to them and their ``label``
turned into a class of their nodes (§2.10); ``//``, ``/* */`` and ``#`` comments;
quoted strings (``"a" + "b"`` concatenation included), numbers, booleans,
durations (``900s``) and bare values such as ``summary:high``; commas or
semicolons between attributes, or neither, as Graphviz allows.

Rejected, as the specification rejects them: undirected graphs and ``--``
edges, ``strict``, several graphs in one file, node ids that are not bare
identifiers (ports, numerals, quoted names with spaces), HTML labels, edges to
subgraphs, and values of a typed attribute that are not of its type.

Quoted values use ``\\"``, ``\\\\``, ``\\n``, ``\\r`` and ``\\t`` escapes; any
other backslash pair is kept as written (so Graphviz label escapes like ``\\l``
survive).

:func:`render` is canonical: subgraphs flattened, nodes and edges in model
order, attributes sorted by name, strings quoted, so
``render(parse(render(g))) == render(g)``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from mindrian.workflow.model import (
    Duration,
    Edge,
    Node,
    NodeKind,
    ThoughtGraph,
    WorkflowError,
    is_node_id,
    parse_duration,
)

__all__ = ["parse", "render"]

_KINDS = {kind.shape.lower(): kind for kind in NodeKind}
_START_IDS = frozenset({"start"})
_EXIT_IDS = frozenset({"exit", "end"})
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_DECODED = {'"': '"', "\\": "\\", "n": "\n", "r": "\r", "t": "\t", "\n": ""}
_SPACE = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/|(?<![^\n])#[^\n]*)+", re.DOTALL)
_WORD = re.compile(r"[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_BARE = re.compile(r"(?:[A-Za-z0-9_.:]|-(?!>))+")
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?[0-9]*\.[0-9]+")
_CLASS_CHARS = re.compile(r"[^a-z0-9-]")
_ID_TOKEN = re.compile(r"(?:[A-Za-z0-9_.\u0080-\uffff]|-(?!>))+")
_T = TypeVar("_T")


@dataclass(frozen=True)
class _Value:
    """An attribute value as written, with where it was written."""

    text: str
    line: int
    column: int


_Attrs = dict[str, _Value]


@dataclass
class _Scope:
    """Defaults in force inside a graph or subgraph body."""

    node: _Attrs = field(default_factory=dict)
    edge: _Attrs = field(default_factory=dict)
    attrs: _Attrs = field(default_factory=dict)
    created: list[str] = field(default_factory=list)


@dataclass
class _NodeDecl:
    attrs: _Attrs
    line: int
    classes: list[str] = field(default_factory=list)


class _Reader:
    """A cursor over the text that knows its line and column."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def where(self, pos: int | None = None) -> tuple[int, int]:
        at = self.pos if pos is None else pos
        line = self.text.count("\n", 0, at) + 1
        return line, at - (self.text.rfind("\n", 0, at) + 1) + 1

    def error(self, message: str, pos: int | None = None) -> WorkflowError:
        line, column = self.where(pos)
        return WorkflowError(message, line=line, column=column)

    def skip(self) -> None:
        match = _SPACE.match(self.text, self.pos)
        if match:
            self.pos = match.end()

    def peek(self, literal: str) -> bool:
        self.skip()
        return self.text.startswith(literal, self.pos)

    def accept(self, literal: str) -> bool:
        if self.peek(literal):
            self.pos += len(literal)
            return True
        return False

    def expect(self, literal: str, what: str) -> None:
        if not self.accept(literal):
            raise self.error(f"expected {literal!r} {what}, found {self.sample()}")

    def sample(self) -> str:
        self.skip()
        if self.pos >= len(self.text):
            return "end of file"
        return repr(self.text[self.pos : self.pos + 12].split("\n")[0])

    def word(self) -> str | None:
        """A bare identifier at the cursor (not consumed unless returned)."""
        self.skip()
        match = _WORD.match(self.text, self.pos)
        return match.group(0) if match else None

    def take(self, pattern: re.Pattern[str]) -> str | None:
        self.skip()
        match = pattern.match(self.text, self.pos)
        if match is None or not match.group(0):
            return None
        self.pos = match.end()
        return match.group(0)

    def string(self) -> str:
        """A quoted string, with ``+`` concatenation, decoded."""
        parts = [self._one_string()]
        while self.peek("+"):
            save = self.pos
            self.pos += 1
            if not self.peek('"'):
                self.pos = save
                break
            parts.append(self._one_string())
        return "".join(parts)

    def _one_string(self) -> str:
        start = self.pos
        index = start + 1
        while index < len(self.text):
            char = self.text[index]
            if char == "\\":
                index += 2
                continue
            if char == '"':
                self.pos = index + 1
                raw = self.text[start + 1 : index]
                return _ESCAPE.sub(lambda m: _DECODED.get(m.group(1), m.group(0)), raw)
            index += 1
        raise self.error("unterminated string", start)

    def value(self) -> _Value:
        """An attribute value: quoted string or bare value."""
        self.skip()
        line, column = self.where()
        if self.peek('"'):
            return _Value(self.string(), line, column)
        if self.peek("<"):
            raise self.error("HTML labels are not in the supported DOT subset")
        bare = self.take(_BARE)
        if bare is None:
            raise self.error(f"expected a value, found {self.sample()}")
        return _Value(bare, line, column)

    def node_id(self) -> tuple[str, int, int]:
        """A node id (bare or quoted identifier) and where it is."""
        self.skip()
        start = self.pos
        line, column = self.where()
        if self.peek('"'):
            name = self.string()
        else:
            name = self.take(_ID_TOKEN) or ""
            if not name:
                raise self.error(f"expected a node id, found {self.sample()}")
        if not is_node_id(name):
            raise self.error(
                f"node id {name!r} is not allowed: use a letter/underscore identifier "
                "(no ports, no DOT keywords; put the display name in label)",
                start,
            )
        if self.peek(":"):
            raise self.error("ports (node:port) are not in the supported DOT subset")
        return name, line, column


class _Parser:
    """Reads one digraph into declarations, then builds the model."""

    def __init__(self, text: str) -> None:
        self.r = _Reader(text)
        self.nodes: dict[str, _NodeDecl] = {}
        self.edges: list[tuple[str, str, _Attrs, int]] = []
        self.graph_attrs: _Attrs = {}

    def parse(self) -> ThoughtGraph:
        r = self.r
        head = r.word()
        if head is None:
            raise r.error(f"not valid DOT: expected 'digraph NAME {{', found {r.sample()}")
        if head.lower() == "strict":
            raise r.error("strict graphs are not in the supported DOT subset")
        if head.lower() == "graph":
            raise r.error("a thought graph must be a digraph ('graph' is undirected)")
        if head.lower() != "digraph":
            raise r.error(f"not valid DOT: expected 'digraph NAME {{', found {r.sample()}")
        r.pos += len(head)
        name = self._graph_name()
        r.expect("{", "to open the graph body")
        scope = _Scope()
        self._statements(scope, top=True)
        r.expect("}", "to close the graph body")
        r.skip()
        if r.pos < len(r.text):
            if (r.word() or "").lower() in ("digraph", "graph", "strict"):
                raise r.error("one graph per file: a second graph starts here")
            raise r.error(f"unexpected text after the graph: {r.sample()}")
        return self._build(name)

    def _graph_name(self) -> str:
        r = self.r
        if r.peek('"'):
            line, column = r.where()
            name = r.string()
        else:
            line, column = r.where()
            name = r.take(_WORD) or ""
        if not is_node_id(name):
            raise WorkflowError(
                f"graph name {name!r} must be an identifier", line=line, column=column
            )
        return name

    def _statements(self, scope: _Scope, *, top: bool) -> None:
        r = self.r
        while not r.peek("}"):
            r.skip()
            if r.pos >= len(r.text):
                raise r.error("the graph body is not closed: expected '}'")
            self._statement(scope, top=top)
            while r.accept(";") or r.accept(","):
                pass

    def _statement(self, scope: _Scope, *, top: bool) -> None:
        r = self.r
        word = r.word()
        lowered = (word or "").lower()
        if r.peek("{") or lowered == "subgraph":
            self._subgraph(scope)
            return
        if lowered in ("graph", "node", "edge"):
            save = r.pos
            r.pos += len(lowered)
            if r.peek("["):
                attrs = self._attr_blocks()
                target = {"graph": scope.attrs, "node": scope.node, "edge": scope.edge}[lowered]
                target.update(attrs)
                if lowered == "graph" and top:
                    self.graph_attrs.update(attrs)
                return
            r.pos = save
        if lowered in ("digraph", "strict"):
            raise r.error(f"'{word}' cannot appear inside a graph body")
        self._node_or_edge(scope, top=top)

    def _subgraph(self, parent: _Scope) -> None:
        r = self.r
        word = r.word()
        if word is not None and word.lower() == "subgraph":
            r.pos += len(word)
            if not r.peek("{"):
                if r.peek('"'):
                    r.string()
                elif r.take(_WORD) is None:
                    raise r.error(f"expected a subgraph name or '{{', found {r.sample()}")
        r.expect("{", "to open the subgraph")
        scope = _Scope(node=dict(parent.node), edge=dict(parent.edge))
        self._statements(scope, top=False)
        r.expect("}", "to close the subgraph")
        label = scope.attrs.get("label")
        if label is not None:
            derived = _CLASS_CHARS.sub("", label.text.lower().replace(" ", "-"))
            for node_id in scope.created:
                if derived and derived not in self.nodes[node_id].classes:
                    self.nodes[node_id].classes.append(derived)
        parent.created.extend(scope.created)

    def _node_or_edge(self, scope: _Scope, *, top: bool) -> None:
        r = self.r
        r.skip()
        save = r.pos
        key = r.string() if r.peek('"') else r.take(_KEY)
        if key is not None and r.peek("=") and not r.peek("=="):
            r.pos += 1
            value = r.value()
            scope.attrs[key] = value
            if top:
                self.graph_attrs[key] = value
            return
        r.pos = save
        first = r.node_id()
        chain = [first]
        while True:
            if r.peek("--"):
                raise r.error("undirected edges ('--') are not allowed: use '->'")
            if not r.accept("->"):
                break
            if r.peek("{") or (r.word() or "").lower() == "subgraph":
                raise r.error("edges to subgraphs are not in the supported DOT subset")
            chain.append(r.node_id())
        attrs = self._attr_blocks() if r.peek("[") else {}
        for name, line, _ in chain:
            self._touch(name, line, scope)
        if len(chain) == 1:
            self.nodes[first[0]].attrs.update(attrs)
            return
        line = chain[0][1]
        for (source, _, _), (target, _, _) in itertools.pairwise(chain):
            self.edges.append((source, target, {**scope.edge, **attrs}, line))

    def _touch(self, name: str, line: int, scope: _Scope) -> None:
        if name not in self.nodes:
            self.nodes[name] = _NodeDecl(dict(scope.node), line)
            scope.created.append(name)

    def _attr_blocks(self) -> _Attrs:
        r = self.r
        attrs: _Attrs = {}
        while r.accept("["):
            while not r.accept("]"):
                self.r.skip()
                if r.pos >= len(r.text):
                    raise r.error("attribute list is not closed: expected ']'")
                if r.peek('"'):
                    key = r.string()
                else:
                    key = r.take(_KEY) or ""
                if not key:
                    raise r.error(f"expected an attribute name, found {r.sample()}")
                r.expect("=", f"after attribute {key}")
                attrs[key] = r.value()
                while r.accept(",") or r.accept(";"):
                    pass
        return attrs

    def _build(self, name: str) -> ThoughtGraph:
        graph_attrs = dict(self.graph_attrs)
        for key in ("default_max_retries", "default_max_retry"):
            if key in graph_attrs:
                _typed(graph_attrs[key], f"graph {key}", _int)
        goal = graph_attrs.pop("goal", None)
        nodes = tuple(_node(node_id, decl) for node_id, decl in self.nodes.items())
        edges = tuple(_edge(s, t, attrs, line) for s, t, attrs, line in self.edges)
        return ThoughtGraph(
            name=name,
            nodes=nodes,
            edges=edges,
            goal=None if goal is None else goal.text,
            extra=tuple((k, v.text) for k, v in graph_attrs.items()),
        )


def parse(text: str) -> ThoughtGraph:
    """The thought graph in DOT ``text``; WorkflowError with line and column otherwise."""
    return _Parser(text).parse()


def _typed(value: _Value, what: str, convert: Callable[[str, str], _T]) -> _T:
    try:
        return convert(value.text, what)
    except WorkflowError as exc:
        raise WorkflowError(exc.message, line=value.line, column=value.column) from None


def _bool(text: str, what: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise WorkflowError(f"{what} must be true or false (Boolean), got {text!r}")
    return lowered == "true"


def _int(text: str, what: str) -> int:
    if not _INT.fullmatch(text.strip()):
        raise WorkflowError(f"{what} must be an integer, got {text!r}")
    return int(text)


def _number(text: str, what: str) -> int | float:
    stripped = text.strip()
    if _INT.fullmatch(stripped):
        return int(stripped)
    if _FLOAT.fullmatch(stripped):
        return float(stripped)
    raise WorkflowError(f"{what} must be an Integer or Float, got {text!r}")


def _duration(text: str, what: str) -> Duration:
    try:
        return parse_duration(text)
    except WorkflowError as exc:
        raise WorkflowError(f"{what}: {exc.message}") from None


#: Typed attributes kept as text in ``extra``: checked, not converted.
_EXTRA_TYPES: dict[str, Callable[[str, str], object]] = {
    "auto_status": _bool,
    "allow_partial": _bool,
    "loop_restart": _bool,
    "max_parallel": _int,
    "manager.max_cycles": _int,
    "manager.poll_interval": _duration,
}


def _check_extras(owner: str, attrs: _Attrs) -> None:
    for key, value in attrs.items():
        convert = _EXTRA_TYPES.get(key)
        if convert is not None:
            _typed(value, f"{owner}: {key}", convert)


def _kind(node_id: str, shape: str | None, handler_type: str | None) -> NodeKind:
    by_type = NodeKind.from_type(handler_type) if handler_type else None
    if by_type is not None:
        return by_type
    if shape is not None:
        return _KINDS.get(shape.lower(), NodeKind.COGNITION)
    if node_id.lower() in _START_IDS:
        return NodeKind.START
    if node_id.lower() in _EXIT_IDS:
        return NodeKind.EXIT
    return NodeKind.COGNITION


def _node(node_id: str, decl: _NodeDecl) -> Node:
    attrs = dict(decl.attrs)
    owner = f"node {node_id}"

    def text(key: str) -> str | None:
        value = attrs.pop(key, None)
        return None if value is None else value.text

    shape_value = attrs.get("shape")
    shape, handler_type = text("shape"), text("type") or None
    kind = _kind(node_id, shape, handler_type)
    if shape is not None and _KINDS.get(shape.lower()) is kind:
        shape = None
    classes = [c for c in (text("class") or "").split(",") if c.strip()]
    classes += [c for c in decl.classes if c not in classes]
    if classes:
        attrs["class"] = _Value(",".join(classes), decl.line, 0)
    goal_gate, max_retries, timeout = attrs.pop("goal_gate", None), None, None
    if "max_retries" in attrs:
        max_retries = _typed(attrs.pop("max_retries"), f"{owner}: max_retries", _int)
    if "timeout" in attrs:
        timeout = _typed(attrs.pop("timeout"), f"{owner}: timeout", _duration)
    _check_extras(owner, attrs)
    try:
        return Node(
            id=node_id,
            kind=kind,
            label=text("label"),
            prompt=text("prompt"),
            goal_gate=False
            if goal_gate is None
            else _typed(goal_gate, f"{owner}: goal_gate", _bool),
            max_retries=max_retries,
            fidelity=text("fidelity"),
            shape=shape,
            type=handler_type,
            retry_target=text("retry_target"),
            fallback_retry_target=text("fallback_retry_target"),
            timeout=timeout,
            extra=tuple((k, v.text) for k, v in attrs.items()),
            line=decl.line,
        )
    except WorkflowError as exc:
        line = shape_value.line if shape_value else decl.line
        raise WorkflowError(exc.message, line=exc.line or line, column=exc.column) from None


def _edge(source: str, target: str, attrs: _Attrs, line: int) -> Edge:
    attrs = dict(attrs)
    owner = f"edge {source} -> {target}"
    weight = attrs.pop("weight", None)
    label, condition = attrs.pop("label", None), attrs.pop("condition", None)
    _check_extras(owner, attrs)
    return Edge(
        source=source,
        target=target,
        label=None if label is None else label.text,
        condition=None if condition is None else condition.text,
        weight=0 if weight is None else _typed(weight, f"{owner}: weight", _number),
        extra=tuple((k, v.text) for k, v in attrs.items()),
        line=line,
    )


def render(graph: ThoughtGraph) -> str:
    """Canonical DOT text of ``graph`` (LF line endings, trailing newline)."""
    lines = [f"digraph {graph.name} {{"]
    graph_attrs: dict[str, _Rendered] = dict(graph.extra)
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


_Rendered = str | int | float | bool


def _node_attrs(node: Node) -> dict[str, _Rendered]:
    attrs: dict[str, _Rendered] = dict(node.extra)
    attrs["shape"] = node.shape or node.kind.shape
    optional = {
        "label": node.label,
        "prompt": node.prompt,
        "fidelity": node.fidelity,
        "type": node.type,
        "retry_target": node.retry_target,
        "fallback_retry_target": node.fallback_retry_target,
        "timeout": None if node.timeout is None else str(node.timeout),
    }
    attrs.update({k: v for k, v in optional.items() if v is not None})
    if node.goal_gate:
        attrs["goal_gate"] = True
    if node.max_retries is not None:
        attrs["max_retries"] = node.max_retries
    return attrs


def _edge_attrs(edge: Edge) -> dict[str, _Rendered]:
    attrs: dict[str, _Rendered] = dict(edge.extra)
    optional = {"label": edge.label, "condition": edge.condition}
    attrs.update({k: v for k, v in optional.items() if v is not None})
    if edge.weight:
        attrs["weight"] = edge.weight
    return attrs


def _attr_list(attrs: Mapping[str, _Rendered]) -> str:
    return ", ".join(f"{_key(key)}={_value(key, attrs[key])}" for key in sorted(attrs))


def _key(key: str) -> str:
    # Dotted keys (manager.poll_interval) are quoted so Graphviz reads the file too.
    return key if is_node_id(key) else _quote(key)


def _value(key: str, value: _Rendered) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if key == "shape" and _WORD.fullmatch(value):
        return value
    return _quote(value)


def _quote(text: str) -> str:
    escaped = (
        text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    )
    return f'"{escaped}"'
