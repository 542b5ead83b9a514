"""Decode SKILL.md, split off its front matter and parse that as plain, located data.

The YAML is untrusted, so it is composed with ruamel.yaml's pure-Python safe
loader (or, for the plain block subset most front matter is written in, by
:mod:`builder.skill.quick_yaml` into the same nodes) and turned into plain data here
(never into objects): only the standard scalar tags are accepted, aliases have a budget,
alias expansion and nesting depth are capped, duplicate keys are refused. Every key and list
item keeps its line and column in SKILL.md, so later errors can point at it.

Error codes (all of check ``valid_yaml``): S101 no front matter, S102 YAML
syntax, S103 not a mapping, S104 alias budget, S105 not UTF-8, S106 NUL byte,
S109 duplicate key, S110 unsupported tag, S111 nesting too deep.

One error is recovered, because hosts such as Claude Code accept it: a one-line
``key: value`` whose plain value holds ``': '`` (``description: Use when: …``)
is read as that text, as if quoted (:mod:`builder.skill.lenient_yaml`, which phase 1 turns
into warning W103 and ``mindrian fmt`` into quotes). Every other YAML error
stays S102.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from builder.pipeline.errors import SkillError, SourceLocation
from builder.skill.quick_yaml import compose as compose_subset

if TYPE_CHECKING:  # only a value strict YAML refuses makes one
    from builder.skill.lenient_yaml import QuotedValue

__all__ = [
    "MAX_ALIASES",
    "MAX_ALIAS_EXPANSION",
    "MAX_DEPTH",
    "FrontMatter",
    "KeyPath",
    "decode_skill",
    "parse_front_matter",
    "split_front_matter",
]

#: Aliases (``*name``) allowed in one front matter; real skills use a handful at most.
MAX_ALIASES = 20
#: Values that may be produced by expanding aliases, so nested aliases cannot multiply (billion
#: laughs).
MAX_ALIAS_EXPANSION = 10_000
#: Deepest nesting of mappings and lists.
MAX_DEPTH = 40

#: A path into the front matter: mapping keys and list indexes from the root.
KeyPath = tuple[str | int, ...]

_CHECK = "valid_yaml"
_TAG = "tag:yaml.org,2002:"
_SCALAR_TAGS = frozenset(f"{_TAG}{t}" for t in ("str", "int", "float", "bool", "null", "timestamp"))
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass(frozen=True)
class FrontMatter:
    """SKILL.md split into parsed front matter and verbatim body."""

    data: Mapping[str, Any]
    """The front matter as plain data (str, int, float, bool, None, dict, list)."""
    positions: Mapping[KeyPath, tuple[int, int]]
    """1-based (line, column) in SKILL.md of every key and list item, by path."""
    raw: Mapping[KeyPath, str]
    """The text as written of every non-string scalar (``1.10`` stays ``1.10``)."""
    open_line: int
    """Line of the opening ``---``."""
    close_line: int
    """Line of the closing ``---``."""
    body: str
    """Everything after the closing line, verbatim (line endings included)."""
    body_line: int
    """1-based line where the body starts."""
    quoted: tuple[QuotedValue, ...] = ()
    """Plain values with ``': '`` read as text (strict YAML refuses them), in line order."""


def _fail(code: str, message: str, path: str, line: int = 0, column: int = 0) -> SkillError:
    return SkillError(
        f"{_CHECK}: {message}", location=SourceLocation(path, line, column), code=code
    )


def decode_skill(data: bytes, path: str) -> str:
    """UTF-8 text of SKILL.md without a BOM; S105 names the first bad byte's offset, S106 a NUL."""
    if data.startswith(_UTF16_BOMS):
        raise _fail(
            "S105",
            "not UTF-8: the file starts with a UTF-16 byte-order mark; save it as UTF-8",
            path,
            1,
            1,
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _byte_position(data, exc.start)
        raise _fail(
            "S105",
            f"not UTF-8: byte 0x{data[exc.start]:02x} at byte offset {exc.start} cannot be decoded "
            f"({exc.reason})",
            path,
            line,
            column,
        ) from None
    nul = data.find(b"\x00")
    if nul >= 0:
        line, column = _byte_position(data, nul)
        raise _fail(
            "S106", f"NUL byte at byte offset {nul}; the file must be text", path, line, column
        )
    return text.removeprefix("\ufeff")


def _byte_position(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[line_start:offset].decode("utf-8", errors="replace")) + 1
    return data.count(b"\n", 0, offset) + 1, column


def split_front_matter(text: str, path: str) -> tuple[str, int, int, str]:
    """(YAML text, line of ``---``, line of the closing ``---``, body) or S101.

    The delimiters are lines holding only ``---`` (trailing blanks and CR allowed);
    ``...`` also closes, as in YAML. The body is the text after the closing line, untouched.
    """
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        raise _fail(
            "S101",
            "no front matter: SKILL.md must start with a line '---' followed by YAML",
            path,
            1,
            1,
        )
    offset = len(lines[0]) + 1
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            yaml_text = "\n".join(line.removesuffix("\r") for line in lines[1:index])
            body_start = offset + len(lines[index]) + 1
            return yaml_text, 1, index + 1, text[body_start:]
        offset += len(lines[index]) + 1
    raise _fail(
        "S101",
        "no front matter: the opening '---' on line 1 is never closed by another '---' line",
        path,
        1,
        1,
    )


def parse_front_matter(text: str, path: str) -> FrontMatter:
    """Split and parse; raise SkillError (S101–S104, S109–S111) for unusable front matter."""
    yaml_text, open_line, close_line, body = split_front_matter(text, path)
    first_line = open_line + 1
    node, quoted = _compose(yaml_text, path, first_line)
    if node is None:
        raise _fail(
            "S103",
            "the front matter is empty; it must be a mapping with at least name and description",
            path,
            open_line,
            1,
        )
    converter = _Converter(path, first_line)
    if node.__class__.__name__ != "MappingNode":
        line, column = converter.where(node)
        found = (
            "a list"
            if node.__class__.__name__ == "SequenceNode"
            else f"a single value ({node.value!r})"
        )
        raise _fail(
            "S103",
            f"the front matter must be a mapping of keys to values, found {found}",
            path,
            line,
            column,
        )
    data = converter.value(node, (), False)
    return FrontMatter(
        data=data,
        positions=converter.positions,
        raw=converter.raw,
        open_line=open_line,
        close_line=close_line,
        body=body,
        body_line=close_line + 1,
        quoted=quoted,
    )


class _AliasBudgetExceeded(Exception):
    """Raised inside the composer at the first alias over :data:`MAX_ALIASES`."""

    def __init__(self, mark: Any) -> None:
        super().__init__("alias budget exceeded")
        self.mark = mark


def _compose(yaml_text: str, path: str, first_line: int) -> tuple[Any, tuple[QuotedValue, ...]]:
    # Plain block YAML is composed without ruamel.yaml, which costs about as much to import
    # and run as the rest of `mindrian validate`; it composes everything else, and reports
    # every refusal (builder.skill.quick_yaml declines what it would refuse or repair).
    node = compose_subset(yaml_text)
    if node is not None:
        return node, ()
    from ruamel.yaml import YAML
    from ruamel.yaml.composer import Composer, MaxDepthExceededError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.events import AliasEvent
    from ruamel.yaml.reader import ReaderError

    class BudgetComposer(Composer):
        """Counts aliases while composing so a billion-laughs document stops early."""

        def __init__(self, loader: Any = None) -> None:
            super().__init__(loader)
            self.warn_double_anchors = False
            self.aliases = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.parser.check_event(AliasEvent):
                self.aliases += 1
                if self.aliases > MAX_ALIASES:
                    raise _AliasBudgetExceeded(self.parser.peek_event().start_mark)
            return super().compose_node(parent, index)

    from builder.skill.lenient_yaml import load_leniently

    loader = YAML(typ="safe", pure=True)
    loader.Composer = BudgetComposer
    loader.max_depth = MAX_DEPTH
    try:
        return load_leniently(yaml_text, loader.compose, first_line)
    except _AliasBudgetExceeded as exc:
        raise _fail(
            "S104",
            f"more than {MAX_ALIASES} aliases; anchors and aliases are limited so a small file "
            "cannot expand without bound",
            path,
            first_line + exc.mark.line,
            exc.mark.column + 1,
        ) from None
    except MaxDepthExceededError as exc:
        mark = exc.problem_mark
        raise _fail(
            "S111",
            f"nesting deeper than {MAX_DEPTH} levels",
            path,
            first_line + mark.line,
            mark.column + 1,
        ) from None
    except MarkedYAMLError as exc:
        raise _syntax_error(exc, yaml_text, path, first_line) from None
    except ReaderError as exc:
        line, column = _char_position(yaml_text, exc.position)
        reason = f"unacceptable character U+{exc.character:04X} ({exc.reason})"
        raise _fail("S102", reason, path, first_line + line - 1, column) from None
    except YAMLError as exc:
        raise _fail("S102", str(exc).strip(), path, first_line, 1) from None


def _syntax_error(exc: Any, yaml_text: str, path: str, first_line: int) -> SkillError:
    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line, mark.column) if mark is not None else (0, 0)
    problem = exc.problem or exc.context or "invalid YAML"
    lines = yaml_text.split("\n")
    bad_char = lines[line][column : column + 1] if line < len(lines) else ""
    if bad_char == "\t" or "'\\t'" in problem:
        problem = (
            "found a tab character where indentation is expected; YAML indents with spaces only"
        )
    elif problem == "mapping values are not allowed here":
        problem += " (a ': ' inside an unquoted value; put the value in quotes)"
    elif exc.context and mark is exc.problem_mark and exc.context_mark is not None:
        problem = (
            f"{problem} ({exc.context} that starts on line {first_line + exc.context_mark.line})"
        )
    return _fail("S102", problem, path, first_line + line, column + 1)


def _char_position(text: str, index: int) -> tuple[int, int]:
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


class _Converter:
    """Turns composed nodes into plain data, recording where every key and item is."""

    def __init__(self, path: str, first_line: int) -> None:
        self.path = path
        self.first_line = first_line
        self.positions: dict[KeyPath, tuple[int, int]] = {}
        self.raw: dict[KeyPath, str] = {}
        self.seen: set[int] = set()
        self.open: set[int] = set()
        self.expanded = 0

    def where(self, node: Any) -> tuple[int, int]:
        return self.first_line + node.start_mark.line, node.start_mark.column + 1

    def value(self, node: Any, key_path: KeyPath, via_alias: bool) -> Any:
        # A node met a second time is an alias; count what it expands to.
        via_alias = via_alias or id(node) in self.seen
        self.seen.add(id(node))
        if via_alias:
            self.expanded += 1
            if self.expanded > MAX_ALIAS_EXPANSION:
                # The composer resolved the alias to its anchor's node, so the alias itself has no
                # position left; the top-level key being expanded is the closest real place.
                line, column = self.positions.get(key_path[:1], self.where(node))
                raise _fail(
                    "S104",
                    f"aliases expand to more than {MAX_ALIAS_EXPANSION} values; anchors and "
                    "aliases are limited",
                    self.path,
                    line,
                    column,
                )
        kind = node.__class__.__name__
        if kind == "ScalarNode":
            return self.scalar(node, key_path)
        if id(node) in self.open:
            line, column = self.where(node)
            raise _fail(
                "S104",
                "an alias refers to a value that contains it (recursive alias)",
                self.path,
                line,
                column,
            )
        self.open.add(id(node))
        try:
            if kind == "SequenceNode":
                self.check_tag(node, f"{_TAG}seq")
                return [
                    self.item(child, (*key_path, i), via_alias)
                    for i, child in enumerate(node.value)
                ]
            self.check_tag(node, f"{_TAG}map")
            return self.mapping(node, key_path, via_alias)
        finally:
            self.open.discard(id(node))

    def item(self, node: Any, key_path: KeyPath, via_alias: bool) -> Any:
        self.positions.setdefault(key_path, self.where(node))
        return self.value(node, key_path, via_alias)

    def mapping(self, node: Any, key_path: KeyPath, via_alias: bool) -> dict[str, Any]:
        result: dict[str, Any] = {}
        merges = []
        for key_node, value_node in node.value:
            if key_node.tag == f"{_TAG}merge":
                merges.append(value_node)
                continue
            key = self.key(key_node)
            if key in result:
                line, column = self.where(key_node)
                first = self.positions[(*key_path, key)][0]
                raise _fail(
                    "S109",
                    f"duplicate key {key!r} (first set on line {first})",
                    self.path,
                    line,
                    column,
                )
            self.positions.setdefault((*key_path, key), self.where(key_node))
            result[key] = self.value(value_node, (*key_path, key), via_alias)
        for merged in merges:
            self.merge(result, merged, key_path, via_alias)
        return result

    def merge(self, result: dict[str, Any], node: Any, key_path: KeyPath, via_alias: bool) -> None:
        """YAML merge key (``<<: *base``): keys written in the mapping win, then earlier merges."""
        sources = node.value if node.__class__.__name__ == "SequenceNode" else [node]
        for source in sources:
            if source.__class__.__name__ != "MappingNode":
                line, column = self.where(source)
                raise _fail(
                    "S102",
                    "a merge key ('<<') needs a mapping or a list of mappings",
                    self.path,
                    line,
                    column,
                )
            for key, value in self.value(source, key_path, True).items():
                result.setdefault(key, value)

    def key(self, node: Any) -> str:
        if node.__class__.__name__ != "ScalarNode":
            line, column = self.where(node)
            raise _fail(
                "S102",
                "a key must be a plain value, not a list or mapping",
                self.path,
                line,
                column,
            )
        self.check_tag(node, *_SCALAR_TAGS)
        return str(node.value)

    def scalar(self, node: Any, key_path: KeyPath) -> Any:
        tag = node.tag
        self.check_tag(node, *_SCALAR_TAGS)
        if tag in (f"{_TAG}str", f"{_TAG}timestamp"):
            # Dates stay text as written: they are data for the agent, not values to compute with.
            return node.value
        self.raw.setdefault(key_path, node.value)
        if tag == f"{_TAG}null":
            return None
        if tag == f"{_TAG}bool":
            return node.value.lower() == "true"
        try:
            return _number(node.value, integer=tag == f"{_TAG}int")
        except ValueError:
            line, column = self.where(node)
            kind = "an integer" if tag == f"{_TAG}int" else "a number"
            raise _fail("S102", f"{node.value!r} is not {kind}", self.path, line, column) from None

    def check_tag(self, node: Any, *allowed: str) -> None:
        if node.tag in allowed or node.tag == "!":
            return
        line, column = self.where(node)
        raise _fail(
            "S110",
            f"the tag {node.tag!r} is not supported; front matter holds plain strings, numbers, "
            "lists and mappings",
            self.path,
            line,
            column,
        )


def _number(text: str, *, integer: bool) -> int | float:
    """YAML 1.2 core-schema number (the resolver has already matched its shape)."""
    digits = text.replace("_", "")
    sign = -1 if digits.startswith("-") else 1
    digits = digits.lstrip("+-")
    if integer:
        for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
            if digits.lower().startswith(prefix):
                return sign * int(digits[2:], base)
        return sign * int(digits)
    lowered = digits.lower()
    if lowered == ".inf":
        return sign * math.inf
    if lowered == ".nan":
        return math.nan
    return sign * float(digits)
