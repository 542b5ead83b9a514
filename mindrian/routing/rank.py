"""Ranked free-text selection: BM25F over a framework's stored fields, with negative evidence.

The model (Robertson and Zaragoza's BM25F) reads the fields the registry stores for every
framework: ``name``, ``description``, ``triggers``, ``problem_types`` and ``body`` (the
SKILL.md body's prose, :func:`mindrian.routing.text.prose`: what an author writes about
when and how to use the skill, in more words than the description). For a query
term ``t`` and a framework ``d``::

    tf~(t, d)  = sum over fields f of  w_f * tf_f(t, d) / (1 - b_f + b_f * len_f(d) / avglen_f)
    idf(t)     = ln(1 + (N_s - df(t) + 0.5) / (df(t) + 0.5))
    positive   = sum over query terms t of  q(t) * idf(t) * tf~(t, d) / (K1 + tf~(t, d))
    negative   = sum over query terms t of  q(t) * idf(t) * tn(t, d) / (K1 + tn(t, d))
    relevance  = max(0, positive - NEGATIVE_WEIGHT * negative) / sum over query terms of
                 q(t) * idf(t)

``N_s`` is the number of frameworks holding a token of ``t``'s script
(:func:`mindrian.routing.text.script`: Han, kana, Hangul, Thai... or any other; all
frameworks when none does). A registry of mostly English frameworks would otherwise make
every Chinese bigram rare, so a common one (``帮我``, "help me") would outweigh an English
word that names the task; weighed among the frameworks written in Chinese it is common.

``tn`` counts the term in the description's *negative clauses* (a sentence from "not for",
"do not use", "do not trigger", "instead", "不用于", "不触发"… to its end): they say what the
framework is not for, so a query matching them counts against it, and they are left out of
the positive description field. ``relevance`` is calibrated to [0, 1]: the share of the
query's information (its summed idf, a term unseen in every framework weighing as much as
the rarest) that the framework covers, so one threshold means the same thing for a short
and a long query.

The query terms are the sentence's :func:`mindrian.routing.text.tokens`, ``q(t) = 1``,
then the English gloss of each Chinese word of it that no framework holds (none of its
bigrams indexed; :mod:`mindrian.routing.glosses`, CC-CEDICT), ``q(t) = GLOSS_WEIGHT``:
bigrams cannot match ``面试`` with a framework written only in English, its gloss
``interview`` can, weighed as the guess it is.

Everything is computed from the stored fields, so any backend holding them (LadybugDB,
Neo4j, ``registry.yaml``) ranks identically; the index is plain data built once per
registry revision.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from mindrian.routing.glosses import chinese_words, gloss
from mindrian.routing.text import STEM_MARK, script, stem, tokens

__all__ = [
    "FIELD_WEIGHTS",
    "GLOSS_WEIGHT",
    "K1",
    "NEGATIVE_WEIGHT",
    "FieldMatch",
    "RankedIndex",
    "RoutingDocument",
    "ascending",
    "negative_clauses",
    "summed_gains",
]

#: Per field: (weight w_f, length normalisation b_f). The name and the author's triggers
#: are short and deliberate, so a match there counts more than one in running prose; the
#: body is long and varies most in length (a median of 8 kB on ../shared/routing), so a
#: match there counts least and is normalised hardest.
FIELD_WEIGHTS: Mapping[str, tuple[float, float]] = {
    "name": (3.0, 0.3),
    "triggers": (1.0, 0.5),
    "problem_types": (1.5, 0.3),
    "description": (1.0, 0.75),
    "body": (0.2, 0.9),
}
#: Weight of an English gloss term against a token of the sentence: a dictionary sense is
#: a guess at what the user meant (chosen on one half of the skills of ../shared/routing,
#: checked on the other; bench/routing.py).
GLOSS_WEIGHT = 0.1
#: Term-frequency saturation of BM25.
K1 = 1.2
#: How much a match in a negative clause takes away, relative to a positive match: half,
#: since a clause saying what a skill is not for still names its neighbourhood (chosen on
#: one half of the skills of ../shared/routing, checked on the other; bench/routing.py).
NEGATIVE_WEIGHT = 0.5

# Sentence ends, the CJK full stop and fullwidth ! ? ; included.
_ENDS = ".!?;\n\u3002\uff01\uff1f\uff1b"
_SENTENCE = re.compile(f"[^{_ENDS}]+[{_ENDS}]?")
_NEGATIVE_CUE = re.compile(
    r"\bnot\s+for\b|\bdo\s+not\s+use\b|\bdon'?t\s+use\b|\bnot\s+(?:be\s+)?(?:used|triggered)\b"
    r"|\bdo\s+not\s+trigger\b|\bdon'?t\s+trigger\b|\bnot\s+trigger\b|\bnot\s+when\b"
    r"|\binstead\b|\bavoid\s+(?:using|for)\b|\bnot\s+suitable\b"
    r"|不用于|不适用|不适合|不要用|不触发|请勿|而非|而不是",
    re.IGNORECASE,
)


def negative_clauses(text: str) -> tuple[str, str]:
    """``text`` split into (what it is for, what it says it is not for).

    A sentence is cut at its first negative cue: the part before stays positive, the
    cue and the rest of the sentence are negative evidence.
    """
    positive: list[str] = []
    negative: list[str] = []
    for match in _SENTENCE.finditer(text):
        sentence = match.group()
        cue = _NEGATIVE_CUE.search(sentence)
        if cue is None:
            positive.append(sentence)
        else:
            positive.append(sentence[: cue.start()])
            negative.append(sentence[cue.start() :])
    return " ".join(positive), " ".join(negative)


@dataclass(frozen=True)
class RoutingDocument:
    """The stored fields of one framework that free-text selection reads."""

    id: str
    """Framework id."""
    name: str
    """Display name."""
    description: str = ""
    """Description as written (negative clauses included; the index separates them)."""
    triggers: tuple[str, ...] = ()
    """Trigger phrases."""
    problem_types: tuple[str, ...] = ()
    """Problem types."""
    body: str = ""
    """The body's prose (:func:`mindrian.routing.text.prose`); empty when not stored."""

    def fields(self) -> dict[str, list[str]]:
        """Field name to tokens, plus ``negative`` for the description's negative clauses."""
        positive, negative = negative_clauses(self.description)
        return {
            "name": tokens(self.name.replace("-", " ")),
            "triggers": [t for phrase in self.triggers for t in tokens(phrase)],
            "problem_types": [t for phrase in self.problem_types for t in tokens(phrase)],
            "description": tokens(positive),
            "body": tokens(self.body),
            "negative": tokens(negative),
        }


@dataclass(frozen=True)
class FieldMatch:
    """One query term found in one framework."""

    term: str
    """The token."""
    idf: float
    """Its inverse document frequency in the registry."""
    fields: tuple[tuple[str, int], ...]
    """(field, occurrences) for each field holding it, ``negative`` included."""
    contribution: float
    """What it added to (or, negative, took from) the raw score."""
    weight: float = 1.0
    """1 for a token of the sentence, :data:`GLOSS_WEIGHT` for a gloss of one of its
    Chinese words."""


def ascending(ids: Sequence[str]) -> bool:
    """Whether each id is less than the next (so no two are equal)."""
    return all(a < b for a, b in pairwise(ids))


class RankedIndex:
    """An inverted index of :class:`RoutingDocument` s; its ranking never changes once built
    (it only keeps the summed lists of the words sentences have asked for, :meth:`_summed`).

    What ranking reads round-trips through plain containers (:meth:`to_plain`,
    :meth:`from_plain`) bit for bit; the per-document term counts that only :meth:`explain`
    reads do not, so a restored index is not :attr:`explainable`.
    """

    def __init__(self, documents: Sequence[RoutingDocument]) -> None:
        """Tokenise every document and precompute each (term, document) weight."""
        self.ids: tuple[str, ...] = tuple(d.id for d in documents)
        """Each document's id, by position."""
        self.names: tuple[str, ...] = tuple(d.name for d in documents)
        """Each document's display name, by position."""
        self.ids_ascending = ascending(self.ids)
        """Whether the ids strictly ascend with the position (the registry lists frameworks
        by id): a position then breaks a tie as its id would, without reading the id."""
        fields = [d.fields() for d in documents]
        count = len(fields)
        average = {
            f: (sum(len(doc[f]) for doc in fields) / count if count else 0.0) or 1.0
            for f in FIELD_WEIGHTS
        }
        self._positive: dict[str, dict[int, float]] = {}
        self._negative: dict[str, dict[int, float]] = {}
        every_count: list[dict[str, Counter[str]]] = []
        for i, doc in enumerate(fields):
            counts = {f: Counter(terms) for f, terms in doc.items()}
            every_count.append(counts)
            for f, (weight, b) in FIELD_WEIGHTS.items():
                norm = 1.0 - b + b * len(doc[f]) / average[f]
                for term, n in counts[f].items():
                    bucket = self._positive.setdefault(term, {})
                    bucket[i] = bucket.get(i, 0.0) + weight * n / norm
            for term, n in counts["negative"].items():
                self._negative.setdefault(term, {})[i] = float(n)
        self._counts: list[dict[str, Counter[str]]] | None = every_count
        self._count = count
        self._written = _written(self._positive, self._negative)
        self._idf = {
            term: _idf(self._written[script(term)], len(postings))
            for term, postings in self._positive.items()
        }
        # What each (term, framework) adds, computed once: a query only sums these.
        self._gain = {
            term: {i: self._idf[term] * tf / (K1 + tf) for i, tf in postings.items()}
            for term, postings in self._positive.items()
        }
        self._loss = {
            term: {i: NEGATIVE_WEIGHT * self.idf(term) * tn / (K1 + tn) for i, tn in at.items()}
            for term, at in self._negative.items()
        }
        self._both: dict[str, Mapping[int, float]] = {}
        self._sums: Mapping[str, Mapping[int, float]] = {}
        self._words: Mapping[str, str] | None = None

    @property
    def explainable(self) -> bool:
        """Whether :meth:`explain` can answer: built from documents, not restored."""
        return self._counts is not None

    def to_plain(self) -> dict[str, Any]:
        """What ranking reads, as dicts, lists, strings and floats (:meth:`from_plain`)."""
        return {
            "ids": list(self.ids),
            "names": list(self.names),
            "gain": self._gain,
            "loss": self._loss,
            "idf": self._idf,
            "count": self._count,
            "written": self._written,
        }

    @classmethod
    def from_plain(cls, data: Mapping[str, Any]) -> RankedIndex:
        """The index :meth:`to_plain` described: it ranks exactly as the one built, and
        cannot :meth:`explain`. Raises KeyError or TypeError for data of another shape."""
        index = cls.__new__(cls)
        index.ids, index.names = tuple(data["ids"]), tuple(data["names"])
        index._gain, index._loss = dict(data["gain"]), dict(data["loss"])
        index._idf, index._count = dict(data["idf"]), int(data["count"])
        index._written = dict(data["written"])
        if len(index.ids) != len(index.names):
            raise TypeError("ids and names differ in length")
        index.ids_ascending = ascending(index.ids)
        index._positive, index._negative, index._counts = {}, {}, None
        index._both, index._sums, index._words = {}, {}, None
        return index

    @classmethod
    def from_lookups(
        cls,
        ids: Sequence[str],
        names: Sequence[str],
        gain: Mapping[str, Mapping[int, float]],
        loss: Mapping[str, Mapping[int, float]],
        idf: Mapping[str, float],
        count: int,
        written: Mapping[str, int],
        words: Mapping[str, str] | None,
        ids_ascending: bool,
        sums: Mapping[str, Mapping[int, float]],
    ) -> RankedIndex:
        """An index reading what :meth:`to_plain` describes through mappings that may fetch
        each term on demand (a store holding one registry's index); ``words`` stands for the
        Chinese dictionary (:func:`mindrian.routing.glosses.dictionary`), ``ids_ascending``
        what :func:`ascending` said of the ids when they were stored, ``sums`` the
        :func:`summed_gains` of each of :meth:`word_pairs` (by word) as stored. It ranks as
        the one built when they hold the same values, and cannot :meth:`explain`."""
        index = cls.__new__(cls)
        index.ids, index.names = ids, names  # type: ignore[assignment]
        index.ids_ascending = ids_ascending
        index._gain, index._loss, index._idf = gain, loss, idf  # type: ignore[assignment]
        index._count, index._written = count, dict(written)
        index._positive, index._negative, index._counts = {}, {}, None
        index._both, index._sums, index._words = {}, sums, words
        return index

    def idf(self, term: str) -> float:
        """Inverse document frequency of ``term`` among the frameworks written in its script
        (the highest possible there when it is unseen)."""
        found = self._idf.get(term)
        if found is None:
            return _idf(self._written.get(script(term), self._count), 0)
        return found

    def query(self, text: str) -> dict[str, float]:
        """The terms of ``text`` with their weights: 1 for its own tokens, then
        :data:`GLOSS_WEIGHT` for the English gloss of each Chinese word of it that no
        framework holds (:mod:`mindrian.routing.glosses`; none of its bigrams indexed)."""
        terms = dict.fromkeys(tokens(text), 1.0)
        for word in chinese_words(text, self._words):
            if not any(word[k : k + 2] in self._gain for k in range(len(word) - 1)):
                for term in gloss(word, self._words):
                    terms.setdefault(term, GLOSS_WEIGHT)
        return terms

    def raw_scores(self, text: str) -> tuple[dict[int, float], float]:
        """Position to raw score (above zero) of the frameworks sharing a term with ``text``,
        and the divisor that calibrates them (the query's weighted summed idf)."""
        query = self.query(text)
        whole = sorted(self._lists(query), key=len)
        # The longest posting list is copied (at C speed), the shorter ones added to it.
        raw = dict(whole.pop()) if whole else {}
        for gains in whole:
            for i, gain in gains.items():
                raw[i] = raw.get(i, 0.0) + gain
        for term, weight in query.items():
            if weight != 1.0:
                for i, gain in self._gain.get(term, {}).items():
                    raw[i] = raw.get(i, 0.0) + weight * gain
        for term, weight in query.items():
            for i, loss in self._loss.get(term, {}).items():
                if i in raw:
                    raw[i] -= weight * loss
        return raw, sum(weight * self.idf(t) for t, weight in query.items())

    def _lists(self, query: Mapping[str, float]) -> list[Mapping[int, float]]:
        """The gains the sentence's own tokens (weight 1) add, each token's once: a word's
        singular and its stem read as one list when both are in ``query`` (:meth:`_summed`)."""
        lists: list[Mapping[int, float]] = []
        read: set[str] = set()
        for term, weight in query.items():
            if weight != 1.0 or term in read or term not in self._gain:
                continue
            read.add(term)
            partner = STEM_MARK + stem(term)
            if query.get(partner) == 1.0 and partner not in read and partner in self._gain:
                read.add(partner)
                lists.append(self._summed(term, partner))
            else:
                lists.append(self._gain[term])
        return lists

    def _summed(self, word: str, partner: str) -> Mapping[int, float]:
        """``word``'s gains plus those of its stem token ``partner``, per framework holding
        either; summed the first time a sentence needs them and kept, so a Latin word costs
        one list's additions from then on, not two (the kept index stays plain data). An
        index read from a store may hold them summed already (:meth:`from_lookups`)."""
        found = self._both.get(word)
        if found is None:
            found = self._sums.get(word)
            if found is None:
                found = summed_gains(self._gain[word], self._gain[partner])
            self._both[word] = found
        return found

    def word_pairs(self) -> dict[str, str]:
        """Each term whose stem token is indexed too, with that token: the lists a sentence
        naming the word reads as one (:meth:`_summed`)."""
        pairs = {}
        for term in self._gain:
            partner = STEM_MARK + stem(term)
            if partner != term and partner in self._gain:
                pairs[term] = partner
        return pairs

    def relevance(self, text: str) -> dict[int, float]:
        """Position to calibrated relevance of every framework scoring above zero for ``text``."""
        raw, total = self.raw_scores(text)
        return {i: value / total for i, value in raw.items() if value > 0}

    def explain(self, i: int, text: str) -> tuple[FieldMatch, ...]:
        """The terms of ``text`` found in framework ``i``, strongest first (an index restored
        by :meth:`from_plain` raises ValueError: it has no term counts)."""
        if self._counts is None:
            raise ValueError("a restored index cannot explain; build one from the documents")
        found = []
        for term, weight in self.query(text).items():
            held = tuple((f, c[term]) for f, c in self._counts[i].items() if c[term])
            if not held:
                continue
            idf = self.idf(term)
            tf = self._positive.get(term, {}).get(i, 0.0)
            tn = self._negative.get(term, {}).get(i, 0.0)
            value = weight * (idf * tf / (K1 + tf) - NEGATIVE_WEIGHT * idf * tn / (K1 + tn))
            found.append(FieldMatch(term, idf, held, value, weight))
        return tuple(sorted(found, key=lambda m: (-abs(m.contribution), m.term)))


def summed_gains(word: Mapping[int, float], partner: Mapping[int, float]) -> dict[int, float]:
    """A word's gains plus its stem token's, per framework holding either, added in the one
    order ranking uses (so a stored sum is bit for bit the one computed)."""
    found = dict(partner)
    for i, gain in word.items():
        found[i] = gain + found.get(i, 0.0)
    return found


def _written(*postings: Mapping[str, Mapping[int, float]]) -> dict[str, int]:
    """Script to the number of documents holding a token of it: the N its tokens are weighed
    in. Each distinct term is classified once, not each occurrence."""
    holders: dict[str, set[int]] = {}
    for index in postings:
        for term, at in index.items():
            holders.setdefault(script(term), set()).update(at)
    return {name: len(docs) for name, docs in holders.items()}


def _idf(count: int, frequency: int) -> float:
    return math.log(1.0 + (count - frequency + 0.5) / (frequency + 0.5))
