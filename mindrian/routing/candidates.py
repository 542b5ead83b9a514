"""Selected frameworks as an orchestrating model needs them to choose between near neighbours.

A ranked list of ids and scores tells a model which frameworks are close, not which one fits:
the near-misses of ../shared/routing share the right skill's vocabulary by design. So the
selection tools (Larry's ``select_frameworks``, the MCP server's) return each candidate with
its description and what its author says it is **not** for (:func:`when_not_to_use`): the
description's negative clauses (:func:`mindrian.routing.rank.negative_clauses`: "not for…",
"do not use…", "不用于…") and the lines of the body's sections headed so ("When not to use",
"Do not use this skill for", "What this skill does not do", "不适用"…).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mindrian.routing.rank import negative_clauses

if TYPE_CHECKING:
    from mindrian.graph.base import FrameworkRecord, Selection

__all__ = ["MAX_LINE", "MAX_LINES", "Candidate", "describe", "when_not_to_use"]

#: Most "not for" lines given per candidate, and most characters per line: a model reads
#: every candidate's lines in its context.
MAX_LINES = 5
MAX_LINE = 240

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_AGAINST_HEADING = re.compile(
    r"\b(?:when|where)\s+not\s+to\b|\bnot\s+to\s+use\b|\bdo\s+not\s+use\b|\bdon'?t\s+use\b"
    r"|\bnot\s+for\b|\bwhat\s+(?:this|it)(?:\s+skill)?\s+(?:is|does)\s+not\b"
    r"|\bdo\s+not\s+trigger\b|\bout\s+of\s+scope\b|\banti-?triggers?\b|\bnon-?goals?\b"
    r"|不适用|不用于|不触发|不会干|不要用|不该用",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


@dataclass(frozen=True)
class Candidate:
    """A selected framework with what a model needs to judge it."""

    id: str
    """Framework id."""
    name: str
    """Display name."""
    score: float
    """The selection's score."""
    confident: bool
    """Whether the router stands behind it alone (:attr:`Selection.confident`)."""
    description: str
    """Its description as registered."""
    not_for: tuple[str, ...]
    """What its author says it is not for (:func:`when_not_to_use`)."""

    def plain(self) -> dict[str, Any]:
        """As JSON data, in a fixed key order."""
        return {
            "id": self.id,
            "name": self.name,
            "score": self.score,
            "confident": self.confident,
            "description": self.description,
            "not_for": list(self.not_for),
        }


def when_not_to_use(description: str, body: str = "") -> tuple[str, ...]:
    """What a skill says it is not for, in its own words: the description's negative clauses,
    then the lines of the body's sections whose heading says so (each section to the next
    heading of its level or higher); at most :data:`MAX_LINES` lines of :data:`MAX_LINE`
    characters, blank lines and repeats left out."""
    found = [" ".join(negative_clauses(description)[1].split())]
    level = 0
    for line in body.splitlines():
        heading = _HEADING.match(line)
        if heading:
            depth = len(heading.group(1))
            if _AGAINST_HEADING.search(heading.group(2)):
                level = depth
                continue
            if level and depth <= level:
                level = 0
        if level:
            found.append(" ".join(_BULLET.sub("", line).split()))
    kept = dict.fromkeys(_cut(text) for text in found if text)
    return tuple(kept)[:MAX_LINES]


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1].rstrip() + "…"


def describe(
    selections: Iterable[Selection], get: Callable[[str], FrameworkRecord | None]
) -> tuple[Candidate, ...]:
    """Each selection with its registered description and "not for" lines (``get`` reads a
    framework from the registry; one gone since the selection keeps empty ones)."""
    candidates = []
    for selection in selections:
        record = get(selection.id)
        description = (record.description or "") if record is not None else ""
        body = record.body if record is not None else ""
        candidates.append(
            Candidate(
                selection.id,
                selection.name,
                selection.score,
                selection.confident,
                description,
                when_not_to_use(description, body),
            )
        )
    return tuple(candidates)
