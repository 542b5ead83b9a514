"""Explicit-trigger selection (``select --trigger``) from postings built once per revision.

:data:`mindrian.graph.queries.SELECT_QUERY` states the formula in Cypher; a Neo4j
deployment can run it as written (phase 5 publishes it in every GraphConfig), and a
registry handle runs it for its first selection at a revision (a command or phase 7's
check selects once). On the embedded engine it scans every Framework node and follows
three OPTIONAL MATCHes per candidate: ~25 ms at 10,000 frameworks. A handle that selects
again (the MCP server, Larry, a benchmark) builds a :class:`TriggerIndex` from the same
stored properties and relationships and then pays only for the candidates a selection
touches. Both round with the same IEEE operations, so they give the same doubles;
tests/mindrian/graph/test_selection_agreement.py runs both and asserts equal ranked ids
and scores.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["ExplicitFramework", "TriggerIndex"]

#: The formula's weights, as :data:`mindrian.graph.queries.SELECT_QUERY` writes them.
_TRIGGER_BASE, _TRIGGER_STEP, _TRIGGER_CAP, _MOST_HITS = 0.5, 0.1, 0.9, 4
_FIT, _CHAIN, _USAGE = 0.4, 0.3, 0.2
#: Scores are rounded half up to 6 decimals as the query does: floor(x * 10^6 + 0.5) / 10^6.
_SCALE = 1_000_000.0


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


@dataclass(frozen=True)
class TriggerIndex:
    """Postings of triggers and problem types to framework ids; immutable once built."""

    names: Mapping[str, str]
    """Framework id to display name."""
    by_trigger: Mapping[str, Mapping[str, int]]
    """Trigger to (framework id to how often its stored triggers hold it)."""
    by_problem: Mapping[str, frozenset[str]]
    """Problem type to the ids of the frameworks listing it."""
    confidence: Mapping[str, Mapping[str, float]]
    """Problem type to (framework id to the confidence of its GOOD_FOR edge)."""
    chains: Mapping[str, tuple[tuple[str, float], ...]]
    """Framework id to its outgoing CHAINS_TO (target, weight)."""
    fit_ranked: Mapping[str, tuple[tuple[float, str], ...]]
    """Problem type to (minus score, id) of each framework listing it, best first: its whole
    score when that problem type is the only one asked and nothing else applies."""

    @classmethod
    def build(
        cls,
        frameworks: Iterable[ExplicitFramework],
        good_for: Mapping[str, Mapping[str, float]],
        chains: Mapping[str, tuple[tuple[str, float], ...]],
    ) -> TriggerIndex:
        """Index ``frameworks``; ``good_for`` maps an id to its GOOD_FOR (problem, confidence)."""
        names: dict[str, str] = {}
        by_trigger: dict[str, dict[str, int]] = {}
        by_problem: dict[str, set[str]] = {}
        for framework in frameworks:
            names[framework.id] = framework.name
            for trigger, count in Counter(framework.triggers).items():
                by_trigger.setdefault(trigger, {})[framework.id] = count
            for problem in framework.problem_types:
                by_problem.setdefault(problem, set()).add(framework.id)
        confidence: dict[str, dict[str, float]] = {}
        for source, rated in good_for.items():
            for problem, value in rated.items():
                confidence.setdefault(problem, {})[source] = value
        fit_ranked = {
            p: tuple(sorted((-_rounded(_FIT * confidence.get(p, {}).get(f, 1.0)), f) for f in ids))
            for p, ids in by_problem.items()
        }
        return cls(
            names,
            by_trigger,
            {p: frozenset(ids) for p, ids in by_problem.items()},
            confidence,
            chains,
            fit_ranked,
        )

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
        return [(f, self.names[f], -score) for score, f in heapq.nsmallest(limit, scored)]

    def _chained(self, previous: Iterable[str]) -> dict[str, float]:
        total: dict[str, float] = {}
        for source in sorted(set(previous)):
            for target, weight in self.chains.get(source, ()):
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
