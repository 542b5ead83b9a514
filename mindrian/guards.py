"""The read-only Cypher tool of seed 004 §4, checked on tokens instead of substrings.

Seed 004's ``read_neo4j_cypher`` upper-cases the query and searches it for
``"CREATE "``, ``"SET "``… That rejects harmless reads whose *data* mentions a
keyword (``WHERE n.note CONTAINS 'CREATE '``) and lets real writes through
(``CREATE(n)`` without a space, ``LOAD CSV``, ``CALL apoc.create.node(…)``,
``CALL { … } IN TRANSACTIONS``, ``DROP``, a second statement after ``;``).

Here a small tokenizer drops comments and keeps string literals, backtick names
and parameters as single tokens, so only real keywords are checked. The checks
are a second line of defence and a source of clear messages; the first is that
the tool runs every query in a session opened with ``READ`` access mode through
``execute_read``, where the server itself refuses writes.

Rules (each :class:`Violation` names one):

* ``syntax``: unterminated string/comment/backtick, or a character Cypher has no use for;
* ``multiple_statements``: any ``;``;
* ``write_clause``, ``admin_command``, ``load_csv``, ``in_transactions``;
* ``procedure``: ``CALL`` of a procedure not in the allow list;
* ``plugin``: any ``apoc.``/``gds.`` procedure or function;
* ``pagination`` (seed 004 trap 1, keyset pagination): no ``SKIP``/``OFFSET``
  and no ``UNION``; the query ends with ``RETURN … LIMIT n`` where ``n`` (a
  literal or a parameter) is at most ``max_limit``; ``ORDER BY`` is required
  unless ``n`` is 1; when the cursor parameter is used, the query must compare
  the first ``ORDER BY`` key with it (``>`` ascending, ``<`` descending);
* ``scope``: every label and relationship type named must be allowed by the
  :class:`Scope`; no wildcard ``%``, negated or dynamic labels; with
  ``require_labels`` every node pattern in a ``MATCH`` or pattern comprehension
  carries a label (or reuses a variable labelled earlier) and every relationship
  pattern a type;
* ``hidden_property`` (seed 004 trap 3): hidden properties such as ``embedding``
  are not read by name, by ``n['…']``, by ``properties()`` or by ``.*``;
* ``level_mixing`` (seed 004 trap 2, the same-level rule): the nodes of one path
  pattern may not be pinned to different values of the scope's ``level_property``,
  whether inline (``(p {level: 'L2'})``, or ``{level: $lvl}`` with the parameter
  given) or in ``WHERE`` (``p.level = 'L3'``, either side). Separate paths of one
  query may be at different levels; the seed's check rejected any query naming
  two levels anywhere, even in two unrelated patterns.

:func:`efficiency_warnings` is seed 004's trap 5: a query should return only
``id`` and ``name`` (or aggregates) of what it matches. It warns and never
refuses, as the seed intended; the tool logs the warnings and returns them.

Known limits of a token-level check: returning a whole node (``RETURN n``) still
carries all its properties, and a variable bound by ``WITH``/``UNWIND`` from a
list is not traced. Property-level privileges in the database cover those.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import neo4j

from mindrian.errors import MindrianError

__all__ = [
    "DEFAULT_MAX_LIMIT",
    "DEFAULT_PROCEDURES",
    "CypherRejected",
    "Scope",
    "Token",
    "TokenKind",
    "Violation",
    "check_read_query",
    "efficiency_warnings",
    "read_only_cypher_tool",
    "tokenize",
]

logger = logging.getLogger(__name__)

#: Largest page a query may ask for unless the scope says otherwise.
DEFAULT_MAX_LIMIT: int = 100

#: Read-only built-in procedures callable by default.
DEFAULT_PROCEDURES: tuple[str, ...] = (
    "db.labels",
    "db.propertyKeys",
    "db.relationshipTypes",
)

_WRITE = frozenset({"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH", "INSERT"})
_ADMIN = frozenset(
    {
        "DROP", "ALTER", "GRANT", "DENY", "REVOKE", "SHOW", "USE", "START", "STOP",
        "TERMINATE", "ENABLE", "RENAME", "DEALLOCATE", "REALLOCATE",
    }
)  # fmt: skip
_PLUGINS = frozenset({"APOC", "GDS"})
_CLAUSE_END = frozenset(
    {
        "WHERE",
        "RETURN",
        "WITH",
        "MATCH",
        "OPTIONAL",
        "UNWIND",
        "CALL",
        "ORDER",
        "UNION",
        "LIMIT",
        "SKIP",
        "YIELD",
    }
)
_IS_NOT_LABEL = frozenset({"NULL", "NOT", "NORMALIZED", "NFC", "NFD", "NFKC", "NFKD", "TYPED"})
_SUBQUERY_OPENERS = frozenset({"CALL", "EXISTS", "COUNT", "COLLECT"})
_DIRECTIONS = {"ASC": ">", "ASCENDING": ">", "DESC": "<", "DESCENDING": "<"}
_FLIPPED = {">": "<", "<": ">"}

_SYMBOLS = (*"::  .. -> <- <> <= >= =~ += != ||".split(), *"()[]{},;:.|&!%*+-/^=<>")
_NAME = re.compile(r"[^\W\d]\w*")
_NUMBER = re.compile(r"0x[0-9a-fA-F]+|0o[0-7]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_PARAM = re.compile(r"\$(?:[^\W\d]\w*|\d+)")


class TokenKind(StrEnum):
    """What a token is."""

    NAME = "name"
    QUOTED_NAME = "quoted_name"
    STRING = "string"
    NUMBER = "number"
    PARAM = "param"
    SYMBOL = "symbol"


_NAMES = (TokenKind.NAME, TokenKind.QUOTED_NAME)


@dataclass(frozen=True)
class Token:
    """One lexical unit of a Cypher query (comments and whitespace are dropped)."""

    kind: TokenKind
    """Category."""
    value: str
    """Names and symbols as written; strings and backtick names without quotes; params without
    ``$``."""
    offset: int
    """Position in the query text."""

    def word(self) -> str | None:
        """The upper-cased name if this is an unquoted name, else None."""
        return self.value.upper() if self.kind is TokenKind.NAME else None

    def is_symbol(self, *symbols: str) -> bool:
        """Whether this token is one of ``symbols``."""
        return self.kind is TokenKind.SYMBOL and self.value in symbols


@dataclass(frozen=True)
class Violation:
    """One reason to refuse a query."""

    rule: str
    """Which rule, e.g. ``write_clause``."""
    message: str
    """What was found, for the caller (and the model) to fix."""


class CypherRejected(MindrianError, ValueError):
    """A query refused by :func:`check_read_query`."""

    def __init__(self, violations: Sequence[Violation]) -> None:
        self.violations = tuple(violations)
        super().__init__(
            "query rejected: " + "; ".join(f"[{v.rule}] {v.message}" for v in violations)
        )


class _TokenizeError(ValueError):
    pass


@dataclass(frozen=True)
class Scope:
    """What a caller may read."""

    labels: frozenset[str]
    """Node labels the caller may match."""
    relationship_types: frozenset[str]
    """Relationship types the caller may traverse."""
    procedures: frozenset[str] = frozenset(DEFAULT_PROCEDURES)
    """Procedures the caller may ``CALL`` (exact, case-sensitive names)."""
    hidden_properties: frozenset[str] = frozenset({"embedding"})
    """Properties that must never be read through this tool."""
    require_labels: bool = True
    """Whether every matched node needs a label and every relationship a type."""
    max_limit: int = DEFAULT_MAX_LIMIT
    """Largest ``LIMIT`` allowed."""
    cursor_parameter: str = "last_seen_id"
    """Parameter holding the last key of the previous page."""
    level_property: str | None = "level"
    """Property whose values may not mix within one path (seed 004 trap 2); None: no rule."""

    def __post_init__(self) -> None:
        for name in ("labels", "relationship_types", "procedures", "hidden_properties"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise TypeError(f"Scope.{name} must be a collection of names, not a string")
            object.__setattr__(self, name, frozenset(value))
        if self.max_limit < 1:
            raise ValueError("Scope.max_limit must be at least 1")


# --- tokenizer ---------------------------------------------------------------


def tokenize(query: str) -> tuple[Token, ...]:
    """Tokens of ``query``; ValueError on unterminated strings/comments or stray characters."""
    tokens: list[Token] = []
    pos = 0
    while pos < len(query):
        char = query[pos]
        if char.isspace():
            pos += 1
        elif query.startswith("//", pos):
            end = query.find("\n", pos)
            pos = len(query) if end < 0 else end + 1
        elif query.startswith("/*", pos):
            end = query.find("*/", pos + 2)
            if end < 0:
                raise _TokenizeError(f"unterminated comment at offset {pos}")
            pos = end + 2
        elif char in "'\"":
            start = pos
            value, pos = _quoted(query, pos)
            tokens.append(Token(TokenKind.STRING, value, start))
        elif char == "`":
            start = pos
            value, pos = _backticked(query, pos)
            tokens.append(Token(TokenKind.QUOTED_NAME, value, start))
        else:
            token = _simple(query, pos)
            tokens.append(token)
            pos += _length(query, token)
    return tuple(tokens)


def _quoted(query: str, start: int) -> tuple[str, int]:
    quote, pos, chars = query[start], start + 1, []
    while pos < len(query):
        char = query[pos]
        if char == "\\" and pos + 1 < len(query):
            chars.append(query[pos : pos + 2])
            pos += 2
        elif char == quote:
            return "".join(chars), pos + 1
        else:
            chars.append(char)
            pos += 1
    raise _TokenizeError(f"unterminated string at offset {start}")


def _backticked(query: str, start: int) -> tuple[str, int]:
    pos, chars = start + 1, []
    while pos < len(query):
        if query[pos] == "`":
            if query.startswith("``", pos):
                chars.append("`")
                pos += 2
                continue
            return "".join(chars), pos + 1
        chars.append(query[pos])
        pos += 1
    raise _TokenizeError(f"unterminated backtick name at offset {start}")


def _simple(query: str, pos: int) -> Token:
    for kind, pattern in (
        (TokenKind.PARAM, _PARAM),
        (TokenKind.NUMBER, _NUMBER),
        (TokenKind.NAME, _NAME),
    ):
        match = pattern.match(query, pos)
        if match:
            value = match.group()
            if kind is TokenKind.PARAM:
                value = value[1:]
            return Token(kind, value, pos)
    if query.startswith("$`", pos):
        value, _ = _backticked(query, pos + 1)
        return Token(TokenKind.PARAM, value, pos)
    for symbol in _SYMBOLS:
        if query.startswith(symbol, pos):
            return Token(TokenKind.SYMBOL, symbol, pos)
    raise _TokenizeError(f"unexpected character {query[pos]!r} at offset {pos}")


def _length(query: str, token: Token) -> int:
    if token.kind is TokenKind.PARAM:
        if query.startswith("$`", token.offset):
            return _backticked(query, token.offset + 1)[1] - token.offset
        return len(token.value) + 1
    return len(token.value)


# --- structure ------------------------------------------------------------------


@dataclass(frozen=True)
class _Shape:
    """Per-token facts the rules need."""

    tokens: tuple[Token, ...]
    """The query's tokens."""
    context: tuple[str | None, ...]
    """Innermost open bracket per token: ``(``, ``[``, ``map``, ``query`` or None."""
    depth: tuple[int, ...]
    """Bracket depth per token (before the token itself)."""

    def prev(self, index: int) -> Token | None:
        return self.tokens[index - 1] if index > 0 else None

    def next(self, index: int) -> Token | None:
        return self.tokens[index + 1] if index + 1 < len(self.tokens) else None


def _shape(tokens: tuple[Token, ...]) -> _Shape:
    stack: list[str] = []
    context: list[str | None] = []
    depth: list[int] = []
    call_parens: list[bool] = []
    last_closed_call_paren = False
    for index, token in enumerate(tokens):
        context.append(stack[-1] if stack else None)
        depth.append(len(stack))
        before = tokens[index - 1] if index else None
        if token.is_symbol("("):
            stack.append("(")
            call_parens.append(before is not None and before.word() == "CALL")
        elif token.is_symbol("["):
            stack.append("[")
        elif token.is_symbol("{"):
            opener = before is not None and (
                before.word() in _SUBQUERY_OPENERS
                or (before.is_symbol(")") and last_closed_call_paren)
            )
            stack.append("query" if opener else "map")
        elif token.is_symbol(")", "]", "}") and stack:
            kind = stack.pop()
            last_closed_call_paren = kind == "(" and bool(call_parens) and call_parens.pop()
            continue
        last_closed_call_paren = False
    return _Shape(tokens, tuple(context), tuple(depth))


def _label_names(shape: _Shape) -> tuple[dict[int, str], list[Violation]]:
    """Token index -> "label"/"type" for every label or type name, plus label-syntax violations."""
    found: dict[int, str] = {}
    problems: list[Violation] = []
    tokens = shape.tokens
    for index, token in enumerate(tokens):
        starts = token.is_symbol(":") and shape.context[index] != "map"
        if token.word() == "IS" and _is_label_test(shape, index):
            starts = True
        if not starts:
            continue
        kind = (
            "type"
            if shape.context[index] == "[" and _is_relationship_bracket(shape, index)
            else "label"
        )
        problems.extend(_label_expression(shape, index + 1, kind, found))
    return found, problems


def _is_label_test(shape: _Shape, index: int) -> bool:
    following = shape.next(index)
    if following is None or following.is_symbol("::"):
        return False
    return following.word() not in _IS_NOT_LABEL


def _is_relationship_bracket(shape: _Shape, index: int) -> bool:
    depth = shape.depth[index]
    for back in range(index - 1, -1, -1):
        if shape.tokens[back].is_symbol("[") and shape.depth[back] == depth - 1:
            before = shape.prev(back)
            return before is not None and before.is_symbol("-", "<-")
    return False


def _label_expression(
    shape: _Shape, start: int, kind: str, found: dict[int, str]
) -> list[Violation]:
    problems: list[Violation] = []
    expect_name, parens, index = True, 0, start
    while index < len(shape.tokens):
        token = shape.tokens[index]
        if expect_name:
            if token.kind in (TokenKind.NAME, TokenKind.QUOTED_NAME):
                found[index] = kind
                expect_name = False
            elif token.kind is TokenKind.PARAM:
                problems.append(
                    Violation("scope", f"dynamic {kind} ${token.value} cannot be checked")
                )
                expect_name = False
            elif token.is_symbol("%"):
                problems.append(Violation("scope", f"wildcard {kind} '%' matches every {kind}"))
                expect_name = False
            elif token.is_symbol("!"):
                problems.append(
                    Violation(
                        "scope",
                        f"negated {kind} expressions match {kind}s outside the scope",
                    )
                )
            elif token.is_symbol("("):
                parens += 1
            elif not token.is_symbol(":"):
                break
        elif token.is_symbol("|", "&", ":"):
            expect_name = True
        elif token.is_symbol(")") and parens:
            parens -= 1
        else:
            break
        index += 1
    return problems


# --- rules ---------------------------------------------------------------------


def _keywords(shape: _Shape, names: Mapping[int, str]) -> list[tuple[int, str]]:
    """(index, WORD) of names used as keywords: not property keys, labels or map keys."""
    found = []
    for index, token in enumerate(shape.tokens):
        word = token.word()
        if word is None or index in names:
            continue
        before, after = shape.prev(index), shape.next(index)
        if before is not None and before.is_symbol(".", ":", "::"):
            continue
        if shape.context[index] == "map" and after is not None and after.is_symbol(":"):
            continue
        found.append((index, word))
    return found


def _clause_rules(shape: _Shape, keywords: list[tuple[int, str]], scope: Scope) -> list[Violation]:
    problems: list[Violation] = []
    tokens = shape.tokens
    for index, word in keywords:
        following = shape.next(index)
        if word in _WRITE:
            problems.append(Violation("write_clause", f"{word} writes to the graph"))
        elif word in _ADMIN:
            problems.append(Violation("admin_command", f"{word} is an administration command"))
        elif word == "LOAD":
            problems.append(Violation("load_csv", "LOAD CSV reads files and is not allowed"))
        elif word == "TRANSACTIONS":
            problems.append(
                Violation("in_transactions", "CALL { } IN TRANSACTIONS is for batched writes")
            )
        elif word == "CALL" and following is not None and following.kind in _NAMES:
            name = _dotted_name(tokens, index + 1)
            if name not in scope.procedures:
                problems.append(
                    Violation("procedure", f"procedure {name} is not in the allow list")
                )
    for index, token in enumerate(tokens):
        before, following = shape.prev(index), shape.next(index)
        plugin = token.kind in _NAMES and token.value.upper() in _PLUGINS
        if (
            plugin
            and following is not None
            and following.is_symbol(".")
            and not (before and before.is_symbol("."))
        ):
            problems.append(
                Violation("plugin", f"{_dotted_name(tokens, index)} is a plugin routine")
            )
    if any(t.is_symbol(";") for t in tokens):
        problems.append(
            Violation("multiple_statements", "';' separates statements; send one query")
        )
    return problems


def _dotted_name(tokens: tuple[Token, ...], start: int) -> str:
    parts, index = [tokens[start].value], start + 1
    while (
        index + 1 < len(tokens)
        and tokens[index].is_symbol(".")
        and tokens[index + 1].kind
        in (
            TokenKind.NAME,
            TokenKind.QUOTED_NAME,
        )
    ):
        parts.append(tokens[index + 1].value)
        index += 2
    return ".".join(parts)


def _scope_rules(shape: _Shape, names: Mapping[int, str], scope: Scope) -> list[Violation]:
    problems = []
    for index in sorted(names):
        name, kind = shape.tokens[index].value, names[index]
        allowed = scope.labels if kind == "label" else scope.relationship_types
        if name not in allowed:
            what = "label" if kind == "label" else "relationship type"
            problems.append(Violation("scope", f"{what} {name} is outside the caller's scope"))
    if scope.require_labels:
        problems.extend(_unlabelled_patterns(shape, names))
    return problems


def _unlabelled_patterns(shape: _Shape, names: Mapping[int, str]) -> list[Violation]:
    tokens = shape.tokens
    problems: list[Violation] = []
    labelled: set[str] = set()
    in_match = False
    for index, token in enumerate(tokens):
        word = token.word()
        if word == "MATCH":
            in_match = True
        elif word in _CLAUSE_END:
            in_match = False
        before = shape.prev(index)
        if token.is_symbol("(") and before is not None and _opens_node(before, in_match):
            variable, has_label = _node_pattern(shape, index, names)
            if has_label is None:
                continue
            if has_label and variable:
                labelled.add(variable)
            elif not has_label and variable not in labelled:
                shown = f"({variable})" if variable else "()"
                problems.append(Violation("scope", f"node pattern {shown} has no label"))
        elif token.is_symbol("[") and before is not None and before.is_symbol("-", "<-"):
            if not any(names.get(i) == "type" for i in _bracket_body(shape, index)):
                problems.append(Violation("scope", "relationship pattern has no type"))
        elif token.is_symbol("-", "<-") and _bare_relationship(shape, index):
            problems.append(Violation("scope", "relationship pattern without type (--, -->, <--)"))
    return problems


def _opens_node(before: Token, in_match: bool) -> bool:
    if before.is_symbol("-", "->", "<-", "[") or before.word() == "MATCH":
        return True
    return in_match and before.is_symbol(",", "=", "(")


def _node_pattern(
    shape: _Shape, index: int, names: Mapping[int, str]
) -> tuple[str | None, bool | None]:
    """(variable, has_label); has_label None when the parentheses are not a node pattern."""
    first, second = shape.next(index), shape.next(index + 1)
    if first is None:
        return None, None
    if first.is_symbol(")") or first.is_symbol("{"):
        return None, False
    if first.is_symbol(":"):
        return None, True
    if first.kind is not TokenKind.NAME and first.kind is not TokenKind.QUOTED_NAME:
        return None, None
    if second is None:
        return None, None
    if second.is_symbol(":") or second.word() == "IS":
        return first.value, any(i in names for i in range(index + 2, index + 4))
    if second.is_symbol(")", "{") or second.word() == "WHERE":
        return first.value, False
    return None, None


def _bracket_body(shape: _Shape, index: int) -> range:
    depth = shape.depth[index]
    end = index + 1
    while end < len(shape.tokens) and not (
        shape.tokens[end].is_symbol("]") and shape.depth[end] == depth + 1
    ):
        end += 1
    return range(index + 1, end)


def _bare_relationship(shape: _Shape, index: int) -> bool:
    token, after = shape.tokens[index], shape.next(index)
    before = shape.prev(index)
    if after is None or before is None or not before.is_symbol(")"):
        return False
    return after.is_symbol("-", "->") if token.value == "-" else after.is_symbol("-")


def _hidden_property_rules(
    shape: _Shape, keywords: list[tuple[int, str]], scope: Scope
) -> list[Violation]:
    if not scope.hidden_properties:
        return []
    problems = []
    tokens = shape.tokens
    for index, token in enumerate(tokens):
        before, after = shape.prev(index), shape.next(index)
        by_name = (
            before is not None
            and before.is_symbol(".")
            and token.kind in (TokenKind.NAME, TokenKind.QUOTED_NAME)
        )
        by_index = (
            token.kind is TokenKind.STRING
            and before is not None
            and before.is_symbol("[")
            and after is not None
            and after.is_symbol("]")
        )
        if (by_name or by_index) and token.value in scope.hidden_properties:
            problems.append(Violation("hidden_property", f"property {token.value} may not be read"))
        if before is not None and before.is_symbol(".") and token.is_symbol("*"):
            problems.append(
                Violation("hidden_property", ".* returns every property, hidden ones too")
            )
    for index, word in keywords:
        following = shape.next(index)
        if word == "PROPERTIES" and following is not None and following.is_symbol("("):
            problems.append(
                Violation(
                    "hidden_property",
                    "properties() returns every property, hidden ones too",
                )
            )
    return problems


def _pagination_rules(
    shape: _Shape,
    keywords: list[tuple[int, str]],
    scope: Scope,
    parameters: Mapping[str, Any],
) -> list[Violation]:
    problems = []
    words = {word for _, word in keywords}
    for word in ("SKIP", "OFFSET"):
        if word in words:
            problems.append(
                Violation(
                    "pagination",
                    f"{word} is not allowed: page with WHERE key > ${scope.cursor_parameter}",
                )
            )
    if "UNION" in words:
        problems.append(
            Violation(
                "pagination",
                "UNION results cannot be paged by key; send separate queries",
            )
        )
    top = [(i, w) for i, w in keywords if shape.depth[i] == 0]
    returns = [i for i, w in top if w == "RETURN"]
    if not returns:
        return [
            *problems,
            Violation("pagination", "the query must end with RETURN … LIMIT"),
        ]
    tail = [(i, w) for i, w in top if i > returns[-1]]
    limit = _limit(shape, tail, scope, parameters, problems)
    order = next((i for i, w in tail if w == "ORDER"), None)
    if order is None and limit is not None and limit != 1:
        problems.append(Violation("pagination", "ORDER BY is required so pages are stable"))
    if order is not None:
        problems.extend(_keyset(shape, returns[-1], order, scope, parameters))
    elif _uses_cursor(shape, scope, parameters):
        problems.append(
            Violation(
                "pagination",
                f"${scope.cursor_parameter} needs an ORDER BY key to compare with",
            )
        )
    return problems


def _limit(
    shape: _Shape,
    tail: list[tuple[int, str]],
    scope: Scope,
    parameters: Mapping[str, Any],
    problems: list[Violation],
) -> int | None:
    index = next((i for i, w in tail if w == "LIMIT"), None)
    if index is None:
        problems.append(
            Violation(
                "pagination",
                f"the final RETURN needs LIMIT (at most {scope.max_limit})",
            )
        )
        return None
    value = shape.next(index)
    amount: Any = None
    if value is not None and value.kind is TokenKind.NUMBER and value.value.isdigit():
        amount = int(value.value)
    elif value is not None and value.kind is TokenKind.PARAM:
        amount = parameters.get(value.value)
    if (
        isinstance(amount, bool)
        or not isinstance(amount, int)
        or not 0 <= amount <= scope.max_limit
    ):
        problems.append(
            Violation(
                "pagination",
                f"LIMIT must be a whole number from 0 to {scope.max_limit}, got {amount!r}",
            )
        )
        return None
    return amount


def _uses_cursor(shape: _Shape, scope: Scope, parameters: Mapping[str, Any]) -> bool:
    name = scope.cursor_parameter
    return name in parameters or any(
        t.kind is TokenKind.PARAM and t.value == name for t in shape.tokens
    )


def _keyset(
    shape: _Shape,
    return_index: int,
    order: int,
    scope: Scope,
    parameters: Mapping[str, Any],
) -> list[Violation]:
    if not _uses_cursor(shape, scope, parameters):
        return []
    key, op = _order_key(shape, order)
    candidates = [key, *_alias_sources(shape, return_index, order, key)]
    tokens = [(t.kind, t.value) for t in shape.tokens]
    cursor = (TokenKind.PARAM, scope.cursor_parameter)
    for expr in candidates:
        forward = [*expr, (TokenKind.SYMBOL, op), cursor]
        backward = [cursor, (TokenKind.SYMBOL, _FLIPPED[op]), *expr]
        if _contains(tokens, forward) or _contains(tokens, backward):
            return []
    shown = " ".join(v for _, v in key)
    return [
        Violation(
            "pagination",
            f"keyset paging needs WHERE {shown} {op} ${scope.cursor_parameter} to match ORDER BY "
            f"{shown}",
        )
    ]


def _order_key(shape: _Shape, order: int) -> tuple[list[tuple[TokenKind, str]], str]:
    key, index, depth = [], order + 2, shape.depth[order]
    op = ">"
    while index < len(shape.tokens):
        token = shape.tokens[index]
        word = token.word()
        if shape.depth[index] == depth and (token.is_symbol(",") or word in ("LIMIT", "SKIP")):
            break
        if shape.depth[index] == depth and word in _DIRECTIONS:
            op = _DIRECTIONS[word]
            break
        key.append((token.kind, token.value))
        index += 1
    return key, op


def _alias_sources(
    shape: _Shape, return_index: int, order: int, key: list[tuple[TokenKind, str]]
) -> list[list[tuple[TokenKind, str]]]:
    if len(key) != 1 or key[0][0] is not TokenKind.NAME:
        return []
    sources: list[list[tuple[TokenKind, str]]] = []
    item: list[Token] = []
    for index in range(return_index + 1, order):
        token = shape.tokens[index]
        following = shape.next(index)
        if token.is_symbol(",") and shape.depth[index] == 0:
            item = []
        elif token.word() == "AS" and following is not None and following.value == key[0][1]:
            sources.append([(t.kind, t.value) for t in item if t.word() != "DISTINCT"])
        else:
            item.append(token)
    return sources


def _contains(haystack: list[tuple[TokenKind, str]], needle: list[tuple[TokenKind, str]]) -> bool:
    width = len(needle)
    return any(haystack[i : i + width] == needle for i in range(len(haystack) - width + 1))


# --- trap 2: levels may not mix within one path ------------------------------------


def _clause_end(shape: _Shape, start: int) -> int:
    """Index just past the MATCH clause starting at ``start``."""
    depth = shape.depth[start]
    index = start + 1
    while index < len(shape.tokens):
        token = shape.tokens[index]
        if shape.depth[index] < depth or (
            shape.depth[index] == depth and token.word() in _CLAUSE_END and token.word() != "MATCH"
        ):
            return index
        if shape.depth[index] == depth and token.word() == "MATCH" and index > start + 1:
            return index if shape.tokens[index - 1].word() != "OPTIONAL" else index - 1
        index += 1
    return index


def _paths(shape: _Shape) -> list[list[int]]:
    """Token indexes of the node variables of each path pattern in every MATCH clause."""
    paths: list[list[int]] = []
    for start, token in enumerate(shape.tokens):
        if token.word() != "MATCH":
            continue
        end, depth = _clause_end(shape, start), shape.depth[start]
        current: list[int] = []
        for index in range(start + 1, end):
            here = shape.tokens[index]
            if shape.depth[index] == depth and (here.is_symbol(",") or here.word() == "WHERE"):
                paths.append(current)
                current = []
                if here.word() == "WHERE":
                    break
            elif here.is_symbol("(") and shape.depth[index] == depth:
                current.append(index)
        if current:
            paths.append(current)
    return paths


def _literal(token: Token | None, parameters: Mapping[str, Any]) -> str | None:
    if token is None:
        return None
    if token.kind is TokenKind.STRING:
        return token.value
    if token.kind is TokenKind.PARAM and isinstance(parameters.get(token.value), str):
        return str(parameters[token.value])
    return None


def _node_levels(
    shape: _Shape, opener: int, prop: str, parameters: Mapping[str, Any]
) -> tuple[str | None, set[str]]:
    """The variable of the node pattern opened at ``opener`` and the levels its map pins."""
    tokens = shape.tokens
    first = shape.next(opener)
    variable = first.value if first is not None and first.kind in _NAMES else None
    levels: set[str] = set()
    index = opener + 1
    while index < len(tokens) and shape.depth[index] > shape.depth[opener]:
        token = tokens[index]
        if (
            token.kind in _NAMES
            and token.value == prop
            and shape.context[index] == "map"
            and shape.next(index) is not None
            and shape.next(index).is_symbol(":")  # type: ignore[union-attr]
        ):
            value = _literal(shape.next(index + 1), parameters)
            if value is not None:
                levels.add(value)
        index += 1
    return variable, levels


def _where_levels(shape: _Shape, prop: str, parameters: Mapping[str, Any]) -> dict[str, set[str]]:
    """Levels ``WHERE`` pins on variables: ``v.level = 'L2'`` or ``'L2' = v.level``."""
    found: dict[str, set[str]] = {}
    tokens = shape.tokens
    for index in range(len(tokens) - 2):
        variable, dot, name = tokens[index], tokens[index + 1], tokens[index + 2]
        if not (variable.kind in _NAMES and dot.is_symbol(".") and name.value == prop):
            continue
        after = tokens[index + 3] if index + 3 < len(tokens) else None
        before = tokens[index - 1] if index > 0 else None
        value = None
        if after is not None and after.is_symbol("="):
            value = _literal(tokens[index + 4] if index + 4 < len(tokens) else None, parameters)
        elif before is not None and before.is_symbol("=") and index >= 2:
            value = _literal(tokens[index - 2], parameters)
        if value is not None:
            found.setdefault(variable.value, set()).add(value)
    return found


def _level_rules(shape: _Shape, scope: Scope, parameters: Mapping[str, Any]) -> list[Violation]:
    prop = scope.level_property
    if prop is None:
        return []
    # A variable keeps its level across clauses: pins from every map and WHERE count.
    pinned = _where_levels(shape, prop, parameters)
    paths = _paths(shape)
    for path in paths:
        for opener in path:
            variable, inline = _node_levels(shape, opener, prop, parameters)
            if variable and inline:
                pinned.setdefault(variable, set()).update(inline)
    problems = []
    for path in paths:
        levels: set[str] = set()
        for opener in path:
            variable, inline = _node_levels(shape, opener, prop, parameters)
            levels |= inline | (pinned.get(variable, set()) if variable else set())
        if len(levels) > 1:
            shown = ", ".join(sorted(levels))
            problems.append(
                Violation(
                    "level_mixing",
                    f"one path connects nodes at {prop} {shown}; a path must stay at one "
                    "level (query each level separately)",
                )
            )
    return problems


# --- trap 5: return only id and name ----------------------------------------------

_AGGREGATES = frozenset({"COUNT", "SUM", "AVG", "MIN", "MAX", "COLLECT"})
_LEAN_PROPERTIES = frozenset({"id", "name"})


def _return_items(shape: _Shape, query: str) -> list[tuple[str, list[Token]]]:
    """(text as written, tokens) of each item of the last top-level RETURN."""
    top = [i for i, t in enumerate(shape.tokens) if shape.depth[i] == 0 and t.word() == "RETURN"]
    if not top:
        return []
    items: list[list[Token]] = [[]]
    ends: list[int] = []
    for index in range(top[-1] + 1, len(shape.tokens)):
        token = shape.tokens[index]
        if shape.depth[index] == 0 and token.word() in ("ORDER", "LIMIT", "SKIP", "UNION"):
            break
        if shape.depth[index] == 0 and token.is_symbol(","):
            ends.append(token.offset)
            items.append([])
        elif not (token.word() == "DISTINCT" and not items[-1]):
            items[-1].append(token)
    else:
        index = len(shape.tokens)
    ends.append(shape.tokens[index].offset if index < len(shape.tokens) else len(query))
    return [
        (query[item[0].offset : end].strip(), item)
        for item, end in zip(items, ends, strict=True)
        if item
    ]


def _lean(item: list[Token]) -> bool:
    words = [t.word() for t in item]
    if "AS" in words:
        item = item[: words.index("AS")]
    if len(item) >= 2 and item[0].word() in _AGGREGATES and item[1].is_symbol("("):
        return True
    if len(item) == 1 and item[0].kind in (TokenKind.STRING, TokenKind.NUMBER, TokenKind.PARAM):
        return True
    return (
        len(item) == 3
        and item[0].kind in _NAMES
        and item[1].is_symbol(".")
        and item[2].value in _LEAN_PROPERTIES
    )


def efficiency_warnings(query: str) -> tuple[str, ...]:
    """Seed 004 trap 5: a warning per RETURN item but ``x.id``, ``x.name`` and aggregates."""
    try:
        shape = _shape(tokenize(query))
    except _TokenizeError:
        return ()
    warnings = []
    for shown, item in _return_items(shape, query):
        if not _lean(item):
            warnings.append(
                f"RETURN {shown} returns more than id and name; return x.id, x.name or an "
                "aggregate and ask again for details you need"
            )
    return tuple(warnings)


def check_read_query(
    query: str, scope: Scope, parameters: Mapping[str, Any] | None = None
) -> tuple[Violation, ...]:
    """Every reason to refuse ``query`` for a caller with ``scope``; empty means allowed."""
    try:
        tokens = tokenize(query)
    except _TokenizeError as exc:
        return (Violation("syntax", str(exc)),)
    if not tokens:
        return (Violation("syntax", "the query is empty"),)
    params = dict(parameters or {})
    shape = _shape(tokens)
    names, problems = _label_names(shape)
    keywords = _keywords(shape, names)
    problems += _clause_rules(shape, keywords, scope)
    problems += _scope_rules(shape, names, scope)
    problems += _hidden_property_rules(shape, keywords, scope)
    problems += _pagination_rules(shape, keywords, scope, params)
    problems += _level_rules(shape, scope, params)
    return tuple(dict.fromkeys(problems))


# --- the tool ------------------------------------------------------------------


def _read(tx: Any, query: str, parameters: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [record.data() for record in tx.run(query, parameters)]


def read_only_cypher_tool(
    session_factory: Callable[..., Any],
    scope: Scope,
    *,
    database: str | None = None,
) -> Callable[..., list[dict[str, Any]]]:
    """A ``read_neo4j_cypher`` tool: checks each query, then runs it in a READ session.

    ``session_factory`` is called like ``driver.session`` (pass ``driver.session``) with
    ``default_access_mode=neo4j.READ_ACCESS`` and ``database``.
    """

    def read_neo4j_cypher(
        cypher_query: str, parameters: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Run one read-only Cypher query with keyset pagination and return its rows.

        Args:
            cypher_query: One query ending in RETURN … ORDER BY key LIMIT n; no SKIP/OFFSET,
                no writes; the next page uses WHERE key > $last_seen_id.
            parameters: Query parameters by name (values are never spliced into the text).
        """
        params = dict(parameters or {})
        if not all(isinstance(key, str) for key in params):
            raise CypherRejected((Violation("syntax", "parameter names must be strings"),))
        violations = check_read_query(cypher_query, scope, params)
        if violations:
            logger.warning(
                "read_neo4j_cypher refused a query: %s",
                "; ".join(v.rule for v in violations),
            )
            raise CypherRejected(violations)
        for warning in efficiency_warnings(cypher_query):
            logger.warning("read_neo4j_cypher: %s", warning)
        with session_factory(default_access_mode=neo4j.READ_ACCESS, database=database) as session:
            rows: list[dict[str, Any]] = session.execute_read(_read, cypher_query, params)
            return rows

    return read_neo4j_cypher
