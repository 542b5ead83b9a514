"""``mindrian select --explain``: every part of each candidate's score, and why the next lost."""

from __future__ import annotations

from collections.abc import Sequence

from builder.pipeline.report import terminal_safe
from mindrian.routing.score import (
    CHAIN_WEIGHT,
    FIT_WEIGHT,
    TEXT_WEIGHT,
    USAGE_WEIGHT,
    RankedCandidate,
)

__all__ = ["explain_text"]


def _parts(c: RankedCandidate) -> tuple[tuple[str, float], ...]:
    return (
        ("text", TEXT_WEIGHT * c.relevance),
        ("problem type", FIT_WEIGHT * c.fit),
        ("chaining", CHAIN_WEIGHT * c.chained),
        ("usage", USAGE_WEIGHT * c.usage),
    )


def _candidate(rank: int, c: RankedCandidate) -> list[str]:
    parts = ", ".join(f"{name} {value:+.3f}" for name, value in _parts(c))
    lines = [f"{rank}. {terminal_safe(c.id)}  score {c.score:.3f} = {parts}"]
    lines.append(f"   relevance {c.relevance:.3f} (share of the sentence's idf covered)")
    for m in c.matches:
        fields = ", ".join(f"{field} x{count}" for field, count in m.fields)
        # A gloss is the dictionary's guess at a Chinese word, weighed less than the words typed.
        gloss = "" if m.weight == 1.0 else f" (gloss of a Chinese word, x{m.weight:g})"
        lines.append(
            f"   {terminal_safe(m.term)!r}{gloss}: idf {m.idf:.2f}, in {fields}, "
            f"{m.contribution:+.3f}"
        )
    return lines


def _why(winner: RankedCandidate, loser: RankedCandidate) -> str:
    gaps = [
        (name, mine - theirs)
        for (name, mine), (_, theirs) in zip(_parts(winner), _parts(loser), strict=True)
        if abs(mine - theirs) > 5e-7
    ]
    if not gaps:
        return f"{loser.id} ties {winner.id} on every part; the ids decide"
    biggest = max(gaps, key=lambda g: abs(g[1]))
    said = ", ".join(f"{name} {gap:+.3f}" for name, gap in gaps)
    return (
        f"{terminal_safe(loser.id)} lost to {terminal_safe(winner.id)} by "
        f"{winner.score - loser.score:.3f} ({said}); mostly on {biggest[0]}"
    )


def explain_text(ranked: Sequence[RankedCandidate]) -> str:
    """Each candidate's parts and matched terms, then why the runner-up lost."""
    lines: list[str] = []
    for rank, candidate in enumerate(ranked, 1):
        lines += _candidate(rank, candidate)
    if len(ranked) > 1:
        lines += ["", _why(ranked[0], ranked[1])]
    return "\n".join(lines) + "\n"
