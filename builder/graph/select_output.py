"""What ``mindrian select`` prints: the ranked table and the ``--json`` document.

A module of its own, importing neither the registry nor the database engine, so a one-shot
selection served from the quick index (:mod:`builder.entry`) prints exactly what the
command prints.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

from builder.pipeline.terminal import terminal_safe
from mindrian.routing.text import tokens

__all__ = ["Ranked", "select_json", "select_table"]


class Ranked(Protocol):
    """What is printed of a selection (:class:`mindrian.graph.Selection`, or a
    :class:`mindrian.routing.score.RankedCandidate`)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def confidence(self) -> float | None: ...
    @property
    def confident(self) -> bool: ...


def _cell(text: str) -> str:
    """Registry text made safe for a terminal: control characters shown escaped."""
    return terminal_safe(text)


def select_table(selections: Sequence[Ranked]) -> str:
    """``rank id name score`` columns, best first."""
    rows = [("rank", "id", "name", "score")] + [
        (str(rank), _cell(s.id), _cell(s.name or ""), f"{s.score:.3f}")
        for rank, s in enumerate(selections, 1)
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(row[i].ljust(widths[i]) for i in range(3)) + "  " + row[3] for row in rows]
    return "\n".join(lines) + "\n"


def select_json(
    selections: Sequence[Ranked],
    where: str,
    triggers: Sequence[str],
    problem_types: Sequence[str],
    previous: Sequence[str],
    limit: int,
    *,
    text: str | None = None,
) -> str:
    """The machine-readable result of ``select --json``; a sentence adds ``text`` and its terms,
    and each result of a sentence says whether the router stands behind it alone
    (``confident``, true only for a first result; the first also carries its ``confidence``)."""
    sentence = {} if text is None else {"text": text, "terms": list(dict.fromkeys(tokens(text)))}
    document = {
        "registry": where,
        **sentence,
        "triggers": list(triggers),
        "problem_types": list(problem_types),
        "previous": list(previous),
        "limit": limit,
        "results": [
            {
                "rank": rank,
                "id": s.id,
                "name": s.name,
                "score": round(s.score, 6),
                **({} if text is None else {"confident": s.confident}),
                **({} if s.confidence is None else {"confidence": s.confidence}),
            }
            for rank, s in enumerate(selections, 1)
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False)
