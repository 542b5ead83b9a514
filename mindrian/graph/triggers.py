"""Explicit-trigger selection (``select --trigger``) from postings built once per revision.

:data:`mindrian.graph.queries.SELECT_QUERY` states the formula in Cypher; a Neo4j
deployment can run it as written (phase 5 publishes it in every GraphConfig), and a
registry handle runs it for its first selection at a revision (a command selects once).
On the embedded engine it scans every Framework node and follows three OPTIONAL MATCHes
per candidate: ~25 ms at 10,000 frameworks. A handle that selects again (the MCP server,
Larry, a benchmark) builds a :class:`TriggerIndex` from the same stored properties and
relationships and then pays only for the candidates a selection touches. A handle that
writes (phase 7, which selects after each registration to check it) builds it at its first
selection and carries it along its own writes (:meth:`TriggerIndex.replaced`), so its later
selections read no framework again. Both round with the same IEEE operations, so they give
the same doubles; tests/mindrian/graph/test_selection_agreement.py runs both and asserts
equal ranked ids and scores, tests/mindrian/graph/test_kept_postings.py the carried postings
after each write.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["ExplicitFramework", "TriggerIndex"]

#: The formula's weights, as :data:`mindrian.graph.queries.SELECT_QUERY` writes them.
_TRIGGER_BASE, _TRIGGER_STEP, _TRIGGER_CAP, _MOST_HITS = 0.5, 0.1, 0.9, 4
_FIT, _CHAIN, _USAGE = 0.4, 0.3, 0.2
#: Scores are rounded half up to 6 decimals as the query does: floor(x * 10^6 + 0.5) / 10^6.
_SCALE = 1_000_000.0
_V = TypeVar("_V")


@dataclass(frozen=True)
class ExplicitFramework:
    """The stored fields of one registered framework that explicit selection reads."""

    id: str
    """Framework id."""
    name: str
    """Display name."""
    triggers: tuple[str, ...]
    """Stored triggers, repeats kept (the query counts every matching element)."""
    problem_types: tuple[str, ...]
    """Stored problem types."""
    good_for: tuple[tuple[str, float], ...] = ()
    """(problem type, confidence) of its GOOD_FOR relationships."""
    chains_to: tuple[tuple[str, float], ...] = ()
    """(target framework id, weight) of its CHAINS_TO relationships."""


@dataclass(frozen=True)
class TriggerIndex:
    """Postings of triggers and problem types to framework ids; immutable once built.

    A registry keeps one current with its own writes through :meth:`replaced`, which copies
    the top-level maps and rebuilds only the postings the changed frameworks are in, so a
    selection after a registration costs what it touches, not the whole registry.
    """

    frameworks: Mapping[str, ExplicitFramework]
    """Framework id to its stored fields."""
    by_trigger: Mapping[str, Mapping[str, int]]
    """Trigger to (framework id to how often its stored triggers hold it)."""
    by_problem: Mapping[str, frozenset[str]]
    """Problem type to the ids of the frameworks listing it."""
    confidence: Mapping[str, Mapping[str, float]]
    """Problem type to (framework id to the confidence of its GOOD_FOR edge)."""
    fit_ranked: Mapping[str, tuple[tuple[float, str], ...]]
    """Problem type to (minus score, id) of each framework listing it, best first: its whole
    score when that problem type is the only one asked and nothing else applies."""

    @classmethod
    def build(cls, frameworks: Iterable[ExplicitFramework]) -> TriggerIndex:
        """Index ``frameworks`` (their ids distinct)."""
        return _EMPTY.replaced((), frameworks)

    def replaced(self, gone: Iterable[str], new: Iterable[ExplicitFramework]) -> TriggerIndex:
        """This index without the frameworks ``gone`` names and with ``new``, each in place of
        an indexed one of its id: the index :meth:`build` makes of what is then registered."""
        added = {framework.id: framework for framework in new}
        frameworks = dict(self.frameworks)
        changed = {*gone, *added}
        old = [frameworks.pop(f) for f in changed if f in frameworks]
        frameworks.update(added)
        return TriggerIndex(
            frameworks,
            self._triggers_replaced(changed, added.values()),
            *self._problems_replaced(changed, old, added.values()),
        )

    def _triggers_replaced(
        self, changed: set[str], added: Iterable[ExplicitFramework]
    ) -> dict[str, Mapping[str, int]]:
        counted: dict[str, dict[str, int]] = {}
        for framework in added:
            for trigger, count in Counter(framework.triggers).items():
                counted.setdefault(trigger, {})[framework.id] = count
        touched = {t for f in changed if f in self.frameworks for t in self.frameworks[f].triggers}
        by_trigger = dict(self.by_trigger)
        for trigger in touched | counted.keys():
            kept = {f: n for f, n in by_trigger.get(trigger, {}).items() if f not in changed}
            _put(by_trigger, trigger, {**kept, **counted.get(trigger, {})})
        return by_trigger

    def _problems_replaced(
        self,
        changed: set[str],
        old: Iterable[ExplicitFramework],
        added: Iterable[ExplicitFramework],
    ) -> tuple[
        dict[str, frozenset[str]],
        dict[str, Mapping[str, float]],
        dict[str, tuple[tuple[float, str], ...]],
    ]:
        added = tuple(added)
        touched = {
            problem
            for framework in (*old, *added)
            for problem in (*framework.problem_types, *(p for p, _ in framework.good_for))
        }
        by_problem = dict(self.by_problem)
        confidence = dict(self.confidence)
        fit_ranked = dict(self.fit_ranked)
        listing: dict[str, set[str]] = {}
        rating: dict[str, dict[str, float]] = {}
        for framework in added:
            for problem in framework.problem_types:
                listing.setdefault(problem, set()).add(framework.id)
            for problem, value in framework.good_for:
                rating.setdefault(problem, {})[framework.id] = value
        for problem in touched:
            ids = (by_problem.get(problem, frozenset()) - changed) | listing.get(problem, set())
            rated = {
                **{f: c for f, c in confidence.get(problem, {}).items() if f not in changed},
                **rating.get(problem, {}),
            }
            _put(by_problem, problem, frozenset(ids))
            _put(confidence, problem, rated)
            ranked = sorted((-_rounded(_FIT * rated.get(f, 1.0)), f) for f in ids)
            _put(fit_ranked, problem, tuple(ranked))
        return by_problem, confidence, fit_ranked

    def select(
        self,
        triggers: Iterable[str],
        problem_types: Iterable[str],
        previous: Iterable[str],
        usage: Mapping[str, tuple[int, int]],
        limit: int,
    ) -> list[tuple[str, str, float]]:
        """(id, name, score) of the best ``limit`` frameworks, score descending, then id."""
        problems = set(problem_types)
        hits: dict[str, int] = {}
        for trigger in set(triggers):
            for framework, count in self.by_trigger.get(trigger, {}).items():
                hits[framework] = hits.get(framework, 0) + count
        fitting: set[str] = set()
        for problem in problems:
            fitting |= self.by_problem.get(problem, frozenset())
        chained = self._chained(previous)
        # Frameworks with a trigger hit, a chain or recorded usage are scored term by term;
        # the others fit by one problem type alone and already stand in its ranked list.
        special = hits.keys() | (fitting & (chained.keys() | usage.keys()))
        if len(problems) != 1:
            special |= fitting
        scored = [
            (-self._score(f, hits.get(f, 0), f in fitting, problems, chained, usage), f)
            for f in special
        ]
        if len(problems) == 1:
            (problem,) = problems
            plain = (entry for entry in self.fit_ranked.get(problem, ()) if entry[1] not in special)
            scored.extend(itertools.islice(plain, limit))
        found = heapq.nsmallest(limit, scored)
        return [(f, self.frameworks[f].name, -score) for score, f in found]

    def _chained(self, previous: Iterable[str]) -> dict[str, float]:
        total: dict[str, float] = {}
        for source in sorted(set(previous)):
            framework = self.frameworks.get(source)
            for target, weight in () if framework is None else framework.chains_to:
                total[target] = total.get(target, 0.0) + weight
        return total

    def _score(
        self,
        framework: str,
        hits: int,
        fits: bool,
        problems: set[str],
        chained: Mapping[str, float],
        usage: Mapping[str, tuple[int, int]],
    ) -> float:
        """The query's sum, term by term in its order, rounded as it rounds."""
        if hits == 0:
            trigger = 0.0
        elif hits > _MOST_HITS:
            trigger = _TRIGGER_CAP
        else:
            trigger = _TRIGGER_BASE + _TRIGGER_STEP * hits
        fit = 0.0
        if fits:
            # GOOD_FOR of any wanted problem type counts, listed by the framework or not.
            rated = [self.confidence.get(p, {}).get(framework) for p in problems]
            known = [value for value in rated if value is not None]
            fit = _FIT * (max(known) if known else 1.0)
        uses, successes = usage.get(framework, (0, 0))
        total = (
            trigger
            + fit
            + _CHAIN * chained.get(framework, 0.0)
            + _USAGE * ((successes + 1.0) / (uses + 2.0) - 0.5)
        )
        return _rounded(total)


def _rounded(total: float) -> float:
    return math.floor(total * _SCALE + 0.5) / _SCALE


def _put(postings: dict[str, _V], key: str, value: _V) -> None:
    """Set ``key``'s posting, or drop it when empty (as :meth:`TriggerIndex.build` has none)."""
    if value:
        postings[key] = value
    else:
        postings.pop(key, None)


_EMPTY = TriggerIndex({}, {}, {}, {}, {})
