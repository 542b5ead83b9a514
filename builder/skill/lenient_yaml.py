"""A one-line ``key: value`` whose plain value holds ``': '`` (``description: Use when: …``),
which strict YAML refuses and hosts such as Claude Code accept, read as that text as if quoted.

Apart from :mod:`builder.skill.frontmatter`, which only turns to it when the loader refuses
the front matter: plain block YAML (most front matter) never reaches it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["QuotedValue", "load_leniently"]

_MAPPING_VALUE = "mapping values are not allowed here"
#: ``key: value`` (or ``- key: value``) whose value starts as a plain scalar: not a quote, a
#: flow collection, a block scalar indicator, an anchor, alias, tag, directive or comment.
_PLAIN_PAIR = re.compile(
    r"(?P<lead> *(?:- +)?)(?P<key>[A-Za-z0-9_][A-Za-z0-9_.-]*):[ \t]+"
    r"(?P<value>[^\s\"'\[{|>&*!%@`#].*?)[ \t]*"
)
#: Where a plain scalar's comment starts.
_COMMENT = re.compile(r"[ \t]#")

_T = TypeVar("_T")


@dataclass(frozen=True)
class QuotedValue:
    """A plain value holding ``': '`` that strict YAML refuses, read as text as if quoted."""

    key: str
    """The key whose value it is (``description``)."""
    line: int
    """1-based line of the key in SKILL.md."""
    column: int
    """1-based column of the key."""


def load_leniently(
    yaml_text: str, load: Callable[[str], _T], first_line: int
) -> tuple[_T, tuple[QuotedValue, ...]]:
    """``load(yaml_text)``, quoting each plain value refused for its ``': '`` and retrying.

    ``load`` is ruamel.yaml's or PyYAML's (the package tests read SKILL.md with PyYAML).

    ``first_line`` is the file line of the YAML's first line. Quotes are added within the
    lines, so every line and every key's column stay where they were written. Any other
    error, or the same line refused again, is raised as ``load`` raised it.
    """
    quoted: list[QuotedValue] = []
    while True:
        try:
            return load(yaml_text), tuple(quoted)
        # ruamel.yaml's and PyYAML's marked errors share their shape, not a base class.
        except Exception as exc:
            repair = _quote_value(yaml_text, exc, first_line)
            if repair is None or any(q.line == repair[1].line for q in quoted):
                raise
            yaml_text = repair[0]
            quoted.append(repair[1])


def _quote_value(yaml_text: str, exc: Any, first_line: int) -> tuple[str, QuotedValue] | None:
    """The text with the refused plain value double-quoted, or None when that is not the case."""
    mark = getattr(exc, "problem_mark", None)
    if getattr(exc, "problem", None) != _MAPPING_VALUE or mark is None:
        return None
    lines = yaml_text.split("\n")
    found = _PLAIN_PAIR.fullmatch(lines[mark.line]) if mark.line < len(lines) else None
    if found is None or mark.column < found.start("value"):
        return None
    value, comment = found["value"], ""
    hash_mark = _COMMENT.search(value)
    if hash_mark is not None:
        value, comment = value[: hash_mark.start()].rstrip(), value[hash_mark.start() :]
    end = _continuation_end(lines, mark.line, len(found["lead"]))
    following = lines[mark.line + 1 : end]
    if following and (comment or any(_COMMENT.search(line) for line in following)):
        return None
    head = f'{found["lead"]}{found["key"]}: "{_escaped(value)}'
    if following:
        # A double-quoted scalar folds its lines exactly as a plain one does.
        rewritten = [head, *map(_escaped, following[:-1]), _escaped(following[-1].rstrip()) + '"']
    else:
        rewritten = [f'{head}"{comment}']
    lines[mark.line : end] = rewritten
    where = QuotedValue(found["key"], first_line + mark.line, found.start("key") + 1)
    return "\n".join(lines), where


def _continuation_end(lines: list[str], index: int, key_indent: int) -> int:
    """Index after the last line of the plain scalar starting on line ``index``."""
    end = index + 1
    for position in range(index + 1, len(lines)):
        line = lines[position]
        if not line.strip():
            continue
        if len(line) - len(line.lstrip(" ")) <= key_indent or line.lstrip().startswith("#"):
            break
        end = position + 1
    return end


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
