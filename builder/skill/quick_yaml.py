"""Compose the plain block YAML most front matter is written in, without ruamel.yaml.

``mindrian validate`` of one skill spent about a fifth of its time in ruamel.yaml (importing
it, then composing with its pure-Python scanner). Most front matter
is block mappings and lists of plain, quoted and block scalars; :func:`compose` reads that
subset into nodes of the same shape, values, tags and marks as ruamel.yaml's safe composer
(YAML 1.2), which :mod:`builder.skill.frontmatter` turns into data the same way.

Anything outside the subset, and anything ruamel.yaml would refuse or repair, is declined
(None) rather than judged here, so the caller composes it with ruamel.yaml and reports
exactly what it reports: flow collections, anchors, aliases, tags, merge keys, multi-line
plain or quoted scalars, escapes, tabs, explicit block indentation, keep chomping, plain
values holding ``': '``, plain scalars that might resolve to anything but a string, an
integer, a decimal fraction, a boolean or null, and any character Python does not call
printable. The test suite checks that every front matter of the corpora and generated
documents it composes reads the same either way.
"""

from __future__ import annotations

import re
from typing import Any

from builder.pipeline.patterns import on_first_use

__all__ = ["MAX_DEPTH", "MappingNode", "Mark", "ScalarNode", "SequenceNode", "compose"]

#: Deepest nesting composed here; deeper front matter goes to ruamel.yaml, which enforces
#: the limit (:data:`builder.skill.frontmatter.MAX_DEPTH`) with its own error.
MAX_DEPTH = 20

_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (f"{_TAG}{t}" for t in ("str", "int", "float", "bool", "null"))
#: A key written plainly, then ``:`` ending the line or followed by a space.
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*):(?= |$)")
#: Characters a plain scalar may not start with in this subset: YAML's indicators.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
#: Plain scalars YAML 1.2's core schema reads as something other than a string.
_NULLS = frozenset(("~", "null", "Null", "NULL"))
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INTEGER = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\.[0-9]+")
#: A version of three parts or more (``1.0.0``): a string to every YAML schema.
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+){2,}")
#: Words some YAML versions or schemas read as booleans, null or numbers: declined in any
#: case but the core schema's own spellings above.
_AMBIGUOUS = frozenset(
    ("y", "n", "yes", "no", "on", "off", "true", "false", "null", "inf", "nan", "infinity")
)
_HEADER = on_first_use(r"([|>])(-?)(?: +#.*)? *")


class _Declined(Exception):
    """The text is outside the subset: ruamel.yaml composes it."""


class Mark:
    """Where a node starts, 0-based within the YAML text (ruamel.yaml's ``start_mark``)."""

    __slots__ = ("column", "line")

    def __init__(self, line: int, column: int) -> None:
        self.line = line
        self.column = column


class ScalarNode:
    """A scalar: its resolved tag and its value as text."""

    __slots__ = ("start_mark", "tag", "value")

    def __init__(self, tag: str, value: str, start_mark: Mark) -> None:
        self.tag = tag
        self.value = value
        self.start_mark = start_mark


class SequenceNode:
    """A block list: ``value`` holds the item nodes."""

    __slots__ = ("start_mark", "tag", "value")

    def __init__(self, value: list[Any], start_mark: Mark) -> None:
        self.tag = f"{_TAG}seq"
        self.value = value
        self.start_mark = start_mark


class MappingNode:
    """A block mapping: ``value`` holds (key node, value node) pairs in order."""

    __slots__ = ("start_mark", "tag", "value")

    def __init__(self, value: list[tuple[ScalarNode, Any]], start_mark: Mark) -> None:
        self.tag = f"{_TAG}map"
        self.value = value
        self.start_mark = start_mark


def compose(text: str) -> MappingNode | None:
    """The root mapping of ``text`` as ruamel.yaml composes it, or None when ``text`` is
    outside the subset (or empty, or not a mapping): compose it with ruamel.yaml then."""
    lines = text.split("\n")
    # Python's printable characters leave out every one YAML refuses or breaks lines at
    # (controls, tabs included, separators, surrogates, non-characters, byte-order marks)
    # and a few it takes (other spaces, format characters): those are declined too.
    if not all(line.isprintable() for line in lines):
        return None
    reader = _Reader(lines)
    try:
        first = reader.next_content(0)
        if first is None or reader.indent(first) != 0:
            raise _Declined
        node, after = reader.mapping(first, 0, 1)
        if after is not None:
            raise _Declined
        return node
    except _Declined:
        return None


class _Reader:
    """Recursive descent over the lines; each method takes the line (and column) a node
    starts at and returns the node and the next content line after it (None at the end)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        if any(line.startswith(("---", "...")) for line in lines):
            raise _Declined  # a document marker: another document
        self.count = len(lines)

    def indent(self, index: int) -> int:
        line = self.lines[index]
        return len(line) - len(line.lstrip(" "))

    def next_content(self, index: int) -> int | None:
        """The first line from ``index`` holding more than blanks and a comment."""
        for position in range(index, self.count):
            stripped = self.lines[position].lstrip(" ")
            if stripped and not stripped.startswith("#"):
                return position
        return None

    def mapping(self, index: int, column: int, depth: int) -> tuple[MappingNode, int | None]:
        if depth > MAX_DEPTH:
            raise _Declined
        pairs: list[tuple[ScalarNode, Any]] = []
        start = Mark(index, column)
        at: int | None = index
        while at is not None:
            line = self.lines[at]
            found = _KEY.match(line, column)
            if found is None:
                raise _Declined
            key = found.group(1)
            key_node = ScalarNode(_resolved(key), key, Mark(at, column))
            value, at = self.value(at, found.end() + 1, column, depth)
            pairs.append((key_node, value))
            if at is None or self.indent(at) < column:
                break
            if self.indent(at) > column or self.lines[at][column] == "-":
                raise _Declined
        return MappingNode(pairs, start), at

    def value(self, index: int, column: int, parent: int, depth: int) -> tuple[Any, int | None]:
        """The value after a key ending at ``column`` of line ``index``, in a mapping whose
        keys start at column ``parent``."""
        line = self.lines[index]
        rest = line[column:].lstrip(" ")
        start = len(line) - len(rest)
        if not rest or rest.startswith("#"):
            following = self.next_content(index + 1)
            if following is None or self.indent(following) < parent:
                return ScalarNode(_NULL, "", Mark(index, len(line))), following
            nested = self.indent(following)
            if self.lines[following][nested] == "-":
                return self.sequence(following, nested, depth + 1)
            if nested == parent:
                return ScalarNode(_NULL, "", Mark(index, len(line))), following
            return self.mapping(following, nested, depth + 1)
        if rest[0] in "|>":
            return self.block(index, start, parent)
        return self.inline(index, start, parent)

    def sequence(self, index: int, column: int, depth: int) -> tuple[SequenceNode, int | None]:
        if depth > MAX_DEPTH:
            raise _Declined
        items: list[Any] = []
        start = Mark(index, column)
        at: int | None = index
        while at is not None:
            line = self.lines[at]
            if not line.startswith("- ", column):
                raise _Declined
            rest = line[column + 2 :].lstrip(" ")
            begins = len(line) - len(rest)
            if not rest or rest[0] in "-#|>":
                raise _Declined
            item: Any
            if _KEY.match(line, begins):
                item, at = self.mapping(at, begins, depth + 1)
            else:
                item, at = self.inline(at, begins, column)
            items.append(item)
            if at is None or self.indent(at) < column:
                break
            if self.indent(at) > column or self.lines[at][column] != "-":
                break  # the mapping holding an indentless list goes on, or refuses the line
        return SequenceNode(items, start), at

    def inline(self, index: int, column: int, parent: int) -> tuple[ScalarNode, int | None]:
        """A scalar written on line ``index`` from ``column``, alone on its line."""
        line = self.lines[index]
        text = line[column:]
        mark = Mark(index, column)
        if text[0] == '"':
            node = ScalarNode(_STR, _double_quoted(text), mark)
        elif text[0] == "'":
            node = ScalarNode(_STR, _single_quoted(text), mark)
        else:
            value = _plain(text)
            node = ScalarNode(_resolved(value), value, mark)
        following = self.next_content(index + 1)
        if following is not None and self.indent(following) > parent:
            raise _Declined  # a continuation line (a multi-line scalar) or a refusal
        return node, following

    def block(self, index: int, column: int, parent: int) -> tuple[ScalarNode, int | None]:
        """A literal (``|``) or folded (``>``) scalar whose header is at ``column``."""
        header = _HEADER().fullmatch(self.lines[index], column)
        if header is None:
            raise _Declined
        style, chomp = header.group(1), header.group(2)
        end = index + 1
        if end == self.count or not self.lines[end].strip(" "):
            raise _Declined  # empty, or leading blank lines (ruamel.yaml weighs their spaces)
        indent = self.indent(end)
        if indent <= parent:
            raise _Declined
        body: list[str] = []
        while end < self.count:
            line = self.lines[end]
            if line.strip(" "):
                if self.indent(end) < indent:
                    break
                body.append(line[indent:])
            elif len(line) > indent:
                raise _Declined  # spaces beyond the indentation: content YAML keeps
            else:
                body.append("")
            end += 1
        content = len(body)
        while not body[content - 1]:
            content -= 1
        broken = index + content < self.count - 1  # a line break follows the last line
        if style == "|":
            value = "\n".join(body[:content])
        else:
            value = _folded(body[:content])
        if not chomp and broken:
            value += "\n"
        return ScalarNode(_STR, value, Mark(index, column)), self.next_content(end)


def _folded(lines: list[str]) -> str:
    """Folded scalar lines joined: a single break becomes a space, each empty line a break."""
    if any(line.startswith(" ") for line in lines):
        raise _Declined  # more-indented lines keep their breaks
    parts: list[str] = []
    empty = 0
    for line in lines:
        if not line:
            empty += 1
            continue
        if parts:
            parts.append("\n" * empty if empty else " ")
        parts.append(line)
        empty = 0
    return "".join(parts)


def _plain(text: str) -> str:
    comment = text.find(" #")
    value = (text if comment < 0 else text[:comment]).rstrip(" ")
    if value[0] in _INDICATORS or ": " in value or value.endswith(":"):
        raise _Declined
    return value


def _double_quoted(text: str) -> str:
    close = text.find('"', 1)
    if close < 0 or "\\" in text[:close]:
        raise _Declined
    _trailing(text[close + 1 :])
    return text[1:close]


def _single_quoted(text: str) -> str:
    position = 1
    while True:
        close = text.find("'", position)
        if close < 0:
            raise _Declined
        if text.startswith("''", close):
            position = close + 2
            continue
        _trailing(text[close + 1 :])
        return text[1:close].replace("''", "'")


def _trailing(rest: str) -> None:
    """What follows a quoted scalar on its line: blanks, then perhaps a comment."""
    stripped = rest.lstrip(" ")
    if stripped and not (stripped.startswith("#") and len(stripped) < len(rest)):
        raise _Declined


def _resolved(value: str) -> str:
    """The tag YAML 1.2's core schema gives a plain scalar, or decline when it is not plainly
    one of a string, an integer, a decimal fraction, a boolean or null."""
    if value in _NULLS:
        return _NULL
    if value in _BOOLS:
        return _BOOL
    if _INTEGER.fullmatch(value):
        return _INT
    if _DECIMAL.fullmatch(value):
        return _FLOAT
    if _VERSION.fullmatch(value):
        return _STR
    if value[0] in "0123456789+-.=<" or value.lower() in _AMBIGUOUS:
        raise _Declined
    return _STR
