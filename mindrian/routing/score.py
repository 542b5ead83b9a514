"""The one selection formula for a sentence: text relevance plus the graph's evidence.

For a sentence and a registered framework ``f``::

    score(f) = TEXT_WEIGHT  x relevance(sentence, f)            (mindrian.routing.rank, 0..1)
             + FIT_WEIGHT   x GOOD_FOR confidence of the best matched problem type
             + CHAIN_WEIGHT x sum of CHAINS_TO weights from the previous frameworks to f
             + USAGE_WEIGHT x ((successes + 1) / (uses + 2) - 0.5)

rounded to six decimals. A problem type matches when it is given explicitly or when every
one of its tokens is in the sentence (1.0 when no GOOD_FOR edge rates it). A framework is
a candidate when its relevance reaches :data:`MIN_RELEVANCE` or a problem type matches;
chaining and usage only reorder candidates. Explicit triggers (``select --trigger``) keep
the structured query's 0.6 + 0.1 per further trigger; in a sentence the triggers are one
of the text fields, so the words an author chose count through relevance. Order: score,
then relevance, then id only for frameworks equal in both (so the output is deterministic).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from mindrian.routing.rank import FieldMatch, RankedIndex, RoutingDocument
from mindrian.routing.text import tokens

__all__ = [
    "CHAIN_WEIGHT",
    "FIT_WEIGHT",
    "MIN_RELEVANCE",
    "TEXT_WEIGHT",
    "USAGE_WEIGHT",
    "RankedCandidate",
    "RoutingSnapshot",
    "rank_sentence",
]

TEXT_WEIGHT = 1.0
FIT_WEIGHT = 0.4
CHAIN_WEIGHT = 0.3
USAGE_WEIGHT = 0.2
#: Abstention: below this relevance a framework is no candidate (unless a problem type
#: matches). Learned on the development half of ../shared/routing by ``make routing-bench``
#: (the value maximising top-1 hits minus false triggers; see bench/routing.py).
MIN_RELEVANCE = 0.05
# Usage moves a score by at most USAGE_WEIGHT / 2 either way.
_USAGE_SPAN = USAGE_WEIGHT


@dataclass(frozen=True)
class RoutingSnapshot:
    """What ranking reads from the registry, built once per registry revision."""

    revision: tuple[int, str]
    """(registered frameworks, last write) when it was read."""
    index: RankedIndex
    """The text index of every registered framework, in id order."""
    good_for: Mapping[str, Mapping[str, float]]
    """Framework id to problem type to GOOD_FOR confidence."""
    problem_types: Mapping[str, tuple[frozenset[str], tuple[int, ...]]]
    """Problem type to (its tokens, the positions of the frameworks listing it)."""

    @classmethod
    def build(
        cls,
        revision: tuple[int, str],
        documents: Sequence[RoutingDocument],
        good_for: Mapping[str, Mapping[str, float]],
    ) -> RoutingSnapshot:
        """Index ``documents``."""
        listed: dict[str, list[int]] = {}
        for i, doc in enumerate(documents):
            for problem in dict.fromkeys(doc.problem_types):
                listed.setdefault(problem, []).append(i)
        problems = {p: (frozenset(tokens(p)), tuple(ids)) for p, ids in sorted(listed.items())}
        return cls(revision, RankedIndex(documents), good_for, problems)


@dataclass(frozen=True)
class RankedCandidate:
    """A framework and every part of its score."""

    id: str
    """Framework id."""
    name: str
    """Display name."""
    score: float
    """The formula's total, rounded to six decimals."""
    relevance: float
    """Text relevance, 0..1."""
    fit: float
    """GOOD_FOR confidence of the best matched problem type (0 when none matched)."""
    chained: float
    """Summed CHAINS_TO weight from the previous frameworks."""
    usage: float
    """The usage term before weighting: smoothed success rate - 0.5."""
    matches: tuple[FieldMatch, ...] = ()
    """The matched terms, when explaining."""


def _fit(document: RoutingDocument, confidences: Mapping[str, float], wanted: set[str]) -> float:
    best = 0.0
    for problem in document.problem_types:
        if problem in wanted:
            best = max(best, confidences.get(problem, 1.0))
    return best


def rank_sentence(
    snapshot: RoutingSnapshot,
    text: str,
    problem_types: Iterable[str],
    chained: Mapping[str, float],
    usage_of: Callable[[Sequence[str]], Mapping[str, tuple[int, int]]],
    limit: int,
    explain: bool = False,
) -> list[RankedCandidate]:
    """The best ``limit`` frameworks for ``text``, best first.

    ``usage_of`` is asked only for the candidates whose usage could still move them into
    the first ``limit`` (usage changes a score by at most a tenth either way).
    """
    docs = snapshot.index.documents
    sentence = frozenset(tokens(text))
    wanted = set(problem_types) | {
        p for p, (words, _) in snapshot.problem_types.items() if words and words <= sentence
    }
    relevance = {s.index: s for s in snapshot.index.score(text, explain)}
    fitting = {i for p in wanted for i in snapshot.problem_types.get(p, ((), ()))[1]}
    base: dict[int, float] = {}
    for i in sorted(relevance.keys() | fitting):
        doc = docs[i]
        found = relevance.get(i)
        fit = _fit(doc, snapshot.good_for.get(doc.id, {}), wanted) if wanted else 0.0
        if (found is None or found.relevance < MIN_RELEVANCE) and fit == 0.0:
            continue
        text_part = TEXT_WEIGHT * found.relevance if found is not None else 0.0
        base[i] = text_part + FIT_WEIGHT * fit + CHAIN_WEIGHT * chained.get(doc.id, 0.0)
    if not base:
        return []
    ordered = sorted(base.values(), reverse=True)
    floor = ordered[min(limit, len(ordered)) - 1] - _USAGE_SPAN
    near = sorted(docs[i].id for i, v in base.items() if v >= floor)
    usage = usage_of(near)
    ranked = []
    for i, value in base.items():
        doc = docs[i]
        uses, successes = usage.get(doc.id, (0, 0))
        term = (successes + 1.0) / (uses + 2.0) - 0.5
        found = relevance.get(i)
        ranked.append(
            RankedCandidate(
                id=doc.id,
                name=doc.name,
                score=round(value + USAGE_WEIGHT * term, 6),
                relevance=found.relevance if found is not None else 0.0,
                fit=_fit(doc, snapshot.good_for.get(doc.id, {}), wanted) if wanted else 0.0,
                chained=chained.get(doc.id, 0.0),
                usage=term,
                matches=found.matches if found is not None else (),
            )
        )
    ranked.sort(key=lambda c: (-c.score, -c.relevance, c.id))
    return ranked[:limit]
