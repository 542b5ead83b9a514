"""The one selection formula for a sentence: text relevance plus the graph's evidence.

For a sentence and a registered framework ``f``::

    score(f) = TEXT_WEIGHT  x relevance(sentence, f)            (mindrian.routing.rank, 0..1)
             + FIT_WEIGHT   x GOOD_FOR confidence of the best matched problem type
             + CHAIN_WEIGHT x sum of CHAINS_TO weights from the previous frameworks to f
             + USAGE_WEIGHT x ((successes + 1) / (uses + 2) - 0.5)

rounded to six decimals. A problem type matches when it is given explicitly or when every
one of its tokens is in the sentence, a Latin-script word by its stem (1.0 when no GOOD_FOR
edge rates it). A framework is a candidate when its relevance exceeds
:data:`MIN_RELEVANCE` or a problem type matches; chaining and usage only reorder
candidates. Explicit triggers (``select --trigger``) keep the structured query's 0.6 + 0.1
per further trigger; in a sentence the triggers are one of the text fields, so the words
an author chose count through relevance. Order: score, then relevance, then id only for
frameworks equal in both (so the output is deterministic).

The first candidate also gets a **confidence**, the probability that it is the framework
meant, from its *lead*: its relevance minus the best relevance of any other candidate::

    confidence = 1 / (1 + exp(-(CALIBRATION[0] + CALIBRATION[1] x lead)))

and is marked **confident** when that reaches :data:`CONFIDENT_AT`: the router stands behind
it alone (a caller may act on it without a judge). The lead is the only input kept: on
../shared/routing, adding the first's own relevance changed nothing on the half the
calibration was not fitted on, and whether the sentence uses words of what the skill says it
is not for (its negative clauses, a body section headed "when not to use") went with right
first answers more often than with wrong ones (such sentences use the skill's own words), so
it cannot mark near-misses.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from mindrian.routing.rank import FieldMatch, RankedIndex, RoutingDocument
from mindrian.routing.semantic import SEMANTIC_WEIGHT, SemanticIndex, passage
from mindrian.routing.text import stemmed

__all__ = [
    "CALIBRATION",
    "CHAIN_WEIGHT",
    "CONFIDENT_AT",
    "FIT_WEIGHT",
    "MIN_RELEVANCE",
    "TEXT_WEIGHT",
    "USAGE_WEIGHT",
    "RankedCandidate",
    "RoutingSnapshot",
    "confidence",
    "rank_sentence",
]

TEXT_WEIGHT = 1.0
FIT_WEIGHT = 0.4
CHAIN_WEIGHT = 0.3
USAGE_WEIGHT = 0.2
#: Abstention: below this relevance a framework is no candidate (unless a problem type
#: matches). Learned on the development half of ../shared/routing by ``make routing-bench``
#: (the value maximising top-1 hits minus false triggers; see bench/routing.py).
MIN_RELEVANCE = 0.02
#: Logistic calibration of the first candidate's lead (intercept, slope): fitted by maximum
#: likelihood on half A of ../shared/routing (a first answer is right when a should-select
#: query's skill ranks first, wrong when another does or when a near-miss's own skill does);
#: ``make routing-bench`` prints its reliability on both halves.
CALIBRATION = (-0.2, 7.1)
#: The confidence from which the first candidate is marked confident: a lead of about 0.34.
CONFIDENT_AT = 0.9
# Two totals closer than this may round to the same six decimals.
_ROUNDING = 1e-6


@dataclass(frozen=True)
class RoutingSnapshot:
    """What ranking reads from the registry, built once per registry revision."""

    revision: tuple[int, str]
    """(registered frameworks, last write) when it was read."""
    index: RankedIndex
    """The text index of every registered framework, in id order."""
    problem_types: Mapping[str, tuple[frozenset[str], Mapping[int, float]]]
    """Problem type to (its tokens, position to GOOD_FOR confidence of each framework listing
    it: 1.0 without an edge)."""
    positions: Mapping[str, int]
    """Framework id to its position in the index."""
    chains: Mapping[str, tuple[tuple[str, float], ...]]
    """Framework id to its outgoing CHAINS_TO (target, weight)."""
    passages: tuple[str, ...] = ()
    """What an encoder reads of each framework, by position
    (:func:`mindrian.routing.semantic.passage`); empty when not kept."""
    semantic: SemanticIndex | None = None
    """The frameworks' vectors when an encoder is in use (:mod:`mindrian.routing.semantic`):
    they order the candidates after the first; None ranks by the text alone."""

    def fits(self, text: str, named: Iterable[str]) -> dict[int, float]:
        """Position to the best GOOD_FOR confidence among the problem types ``named`` or
        wholly present in ``text``."""
        sentence = stemmed(text)
        wanted = set(named) | {
            p for p, (words, _) in self.problem_types.items() if words and words <= sentence
        }
        best: dict[int, float] = {}
        for problem in sorted(wanted):
            for i, confidence in self.problem_types.get(problem, (frozenset(), {}))[1].items():
                held = best.get(i, 0.0)
                best[i] = confidence if confidence > held else held  # max(), without the call
        return best

    def chained(self, previous: Iterable[str]) -> dict[str, float]:
        """Summed CHAINS_TO weight from the ``previous`` frameworks to each of their targets."""
        total: dict[str, float] = {}
        for source in dict.fromkeys(previous):
            for target, weight in self.chains.get(source, ()):
                total[target] = total.get(target, 0.0) + weight
        return total

    @classmethod
    def build(
        cls,
        revision: tuple[int, str],
        documents: Sequence[RoutingDocument],
        good_for: Mapping[str, Mapping[str, float]],
        chains: Mapping[str, tuple[tuple[str, float], ...]],
    ) -> RoutingSnapshot:
        """Index ``documents``."""
        listed: dict[str, dict[int, float]] = {}
        for i, doc in enumerate(documents):
            rated = good_for.get(doc.id, {})
            for problem in doc.problem_types:
                listed.setdefault(problem, {})[i] = rated.get(problem, 1.0)
        problems = {p: (stemmed(p), at) for p, at in sorted(listed.items())}
        positions = {doc.id: i for i, doc in enumerate(documents)}
        passages = tuple(passage(doc.name, doc.description) for doc in documents)
        return cls(revision, RankedIndex(documents), problems, positions, chains, passages)

    def to_plain(self) -> dict[str, Any]:
        """What ranking reads, as plain containers (:meth:`from_plain`); not the revision,
        which whoever keeps it knows better (a cache keys on the registry's own)."""
        return {
            "index": self.index.to_plain(),
            "problem_types": {
                p: (sorted(words), at) for p, (words, at) in self.problem_types.items()
            },
            "chains": dict(self.chains),
            "passages": list(self.passages),
        }

    @classmethod
    def from_plain(cls, revision: tuple[int, str], data: Mapping[str, Any]) -> RoutingSnapshot:
        """The snapshot :meth:`to_plain` described, at ``revision``: it ranks as the one built,
        bit for bit (not :meth:`RankedIndex.explain`). Raises KeyError or TypeError for data
        of another shape."""
        index = RankedIndex.from_plain(data["index"])
        problems = {
            p: (frozenset(words), dict(at)) for p, (words, at) in data["problem_types"].items()
        }
        chains = {source: tuple(targets) for source, targets in data["chains"].items()}
        positions = {framework: i for i, framework in enumerate(index.ids)}
        passages = tuple(str(p) for p in data["passages"])
        return cls(revision, index, problems, positions, chains, passages)


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
    confidence: float | None = None
    """For the first candidate, the calibrated probability that it is the one meant
    (:func:`confidence`, six decimals); None for the others."""

    @property
    def confident(self) -> bool:
        """Whether the router stands behind this candidate alone: the first, with a confidence
        of at least :data:`CONFIDENT_AT`."""
        return self.confidence is not None and self.confidence >= CONFIDENT_AT


def confidence(lead: float) -> float:
    """The calibrated probability that a first candidate leading the others' best relevance
    by ``lead`` is the framework meant (six decimals)."""
    intercept, slope = CALIBRATION
    return round(1.0 / (1.0 + math.exp(-(intercept + slope * lead))), 6)


def rank_sentence(
    snapshot: RoutingSnapshot,
    text: str,
    problem_types: Iterable[str],
    previous: Iterable[str],
    usage: Mapping[str, tuple[int, int]],
    limit: int,
    explain: bool = False,
) -> list[RankedCandidate]:
    """The best ``limit`` frameworks for ``text``, best first.

    ``usage`` maps a framework id to its recorded (uses, successes). Each part is added in
    one pass over the frameworks it concerns, and only the totals that can still be among
    the first ``limit`` are rounded and sorted.
    """
    ids = snapshot.index.ids
    raw, total = snapshot.index.raw_scores(text)
    floor = max(MIN_RELEVANCE * total, 0.0)
    relevance = {i: value / total for i, value in raw.items() if value > floor}
    fits = snapshot.fits(text, problem_types)
    chained = snapshot.chained(previous)
    totals = {i: TEXT_WEIGHT * r for i, r in relevance.items()}
    for i, fit in fits.items():
        totals[i] = totals.get(i, 0.0) + FIT_WEIGHT * fit
    # Chaining and usage only reorder candidates: they never make one.
    for framework, weight in chained.items():
        at = snapshot.positions.get(framework)
        if at in totals:
            totals[at] += CHAIN_WEIGHT * weight
    for framework, (uses, successes) in usage.items():
        at = snapshot.positions.get(framework)
        if at in totals:
            totals[at] += USAGE_WEIGHT * ((successes + 1.0) / (uses + 2.0) - 0.5)
    if not totals:
        return []
    lexical = None
    if snapshot.semantic is not None:
        lexical = min(totals, key=lambda i: (-round(totals[i], 6), -relevance.get(i, 0.0), ids[i]))
        totals = _with_similarity(snapshot.semantic, text, totals)
    # Only totals near the `limit`-th best can rank once rounded; the rest are never sorted.
    kth = heapq.nlargest(limit, totals.values())[-1] - _ROUNDING
    scored = _ordered(snapshot.index, totals, relevance, kth, lexical)
    # With an encoder, the formula's own best stays first (sort is stable).
    scored.sort(key=lambda row: row[2] != lexical)
    ranked = [
        _candidate(snapshot, i, -key[0], -key[1], fits, chained, usage, text, explain)
        for key, _, i in scored[:limit]
    ]
    first = scored[0][2]
    runner_up = max((r for i, r in relevance.items() if i != first), default=0.0)
    lead = relevance.get(first, 0.0) - runner_up
    return [dataclasses.replace(ranked[0], confidence=confidence(lead)), *ranked[1:]]


def _ordered(
    index: RankedIndex,
    totals: Mapping[int, float],
    relevance: Mapping[int, float],
    kth: float,
    lexical: int | None,
) -> list[tuple[tuple[float, float], object, int]]:
    """Each position whose total reaches ``kth`` (and ``lexical``) as ((-score, -relevance),
    tie-break, position), best first: score rounded to six decimals, then relevance, then id.

    Many frameworks may tie (a sentence every one of them matches equally): each distinct
    (total, relevance) pair is rounded once and its key shared, so the rows are made and
    compared at C speed. Ties go to the smaller id; when ids ascend with position, the
    position says which without reading thousands of ids."""
    near = [i for i, value in totals.items() if value >= kth or i == lexical]
    scores = map(totals.__getitem__, near)
    pairs = list(zip(scores, map(relevance.get, near, repeat(0.0)), strict=True))
    keys = {pair: (-round(pair[0], 6), -pair[1]) for pair in set(pairs)}
    ties: Iterable[object] = near if index.ids_ascending else map(index.ids.__getitem__, near)
    return sorted(zip(map(keys.__getitem__, pairs), ties, near, strict=True))


def _with_similarity(
    semantic: SemanticIndex, text: str, totals: Mapping[int, float]
) -> dict[int, float]:
    """Every framework's total plus :data:`SEMANTIC_WEIGHT` x its cosine with ``text``."""
    return {
        i: totals.get(i, 0.0) + SEMANTIC_WEIGHT * similarity
        for i, similarity in enumerate(semantic.similarities(text))
    }


def _candidate(
    snapshot: RoutingSnapshot,
    i: int,
    score: float,
    relevance: float,
    fits: Mapping[int, float],
    chained: Mapping[str, float],
    usage: Mapping[str, tuple[int, int]],
    text: str,
    explain: bool,
) -> RankedCandidate:
    framework = snapshot.index.ids[i]
    uses, successes = usage.get(framework, (0, 0))
    return RankedCandidate(
        id=framework,
        name=snapshot.index.names[i],
        score=score,
        relevance=relevance,
        fit=fits.get(i, 0.0),
        chained=chained.get(framework, 0.0),
        usage=(successes + 1.0) / (uses + 2.0) - 0.5,
        matches=snapshot.index.explain(i, text) if explain else (),
    )
