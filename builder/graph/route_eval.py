"""``mindrian select --eval``: route skill-creator trigger evals and score the ranking.

A trigger-eval file holds queries that should select one skill and near-misses that should
not. In the wild it is a JSON array of ``{"query" (or "prompt"), "should_trigger"}``, or an
object wrapping that array under ``evals``, ``queries`` or ``cases``; the object may name
its skill (``skill_name``, or ``skill``). A file that does not name it belongs to the skill
of the folder holding its ``evals/`` folder (``<skill>/evals/trigger-eval.json``): the id
that folder's skill builds to when the caller can tell (``metadata.mindrian.id`` may differ
from the folder's name), else the folder's name.

Scoring (as ``../shared/routing/README.md`` defines it): a positive query is a top-1 hit
when its own framework ranks first, a top-3 hit when it is among the first three; a
near-miss is a false trigger when its own framework ranks first (it is labelled only
against its own skill); a query with no result at all is an abstention.

The first answer's *confident* mark (:attr:`mindrian.graph.Selection.confident`) is scored
as a caller acting alone would meet it: its **precision** is the share of confident first
answers that are right (a should-select query's own skill), counting as wrong a confident
first answer of another skill and a near-miss whose own skill is confidently first (a
near-miss answered confidently with another skill is not labelled either way); its
**coverage** the share of should-select queries answered confidently. The reliability table
bins every labelled first answer by its predicted confidence beside how often it was right.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.pipeline.errors import UsageError
from builder.skill.model import skill_id
from mindrian.graph import Selection

__all__ = [
    "BINS",
    "EvalCase",
    "EvalReport",
    "FolderId",
    "Judged",
    "Miss",
    "Rates",
    "read_evals",
    "run_evals",
]

_WRAPPERS = ("evals", "queries", "cases")
_WORST = 10
#: Lower bounds of the reliability table's bins of predicted confidence.
BINS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True)
class EvalCase:
    """One query of a trigger-eval file."""

    skill: str
    """Id of the framework the file is about."""
    query: str
    """The user's words."""
    should_trigger: bool
    """True for a query that should select the skill, False for a near-miss."""
    source: str
    """The file it came from."""


@dataclass(frozen=True)
class Rates:
    """Counts of one skill's (or all skills') queries and what routing did with them."""

    positives: int
    """Queries that should select the skill."""
    negatives: int
    """Near-misses."""
    top1: int
    """Positives whose skill ranked first."""
    top3: int
    """Positives whose skill ranked in the first three."""
    abstained: int
    """Positives with no result at all."""
    false_triggers: int
    """Near-misses whose skill ranked first."""
    confident: int = 0
    """Positives whose first answer was marked confident."""
    confident_right: int = 0
    """Of those, the ones whose skill it was."""
    confident_false: int = 0
    """Near-misses whose skill ranked first marked confident."""

    def precision(self) -> float | None:
        """Share of confident first answers that were right (None when there were none)."""
        return _rate(self.confident_right, self.confident + self.confident_false)

    def plain(self) -> dict[str, Any]:
        """Counts and rates (0..1, six decimals) as plain data."""
        return {
            "positives": self.positives,
            "negatives": self.negatives,
            "top1": _rate(self.top1, self.positives),
            "top3": _rate(self.top3, self.positives),
            "abstention": _rate(self.abstained, self.positives),
            "false_trigger": _rate(self.false_triggers, self.negatives),
            "confident_precision": self.precision(),
            "confident_coverage": _rate(self.confident, self.positives),
        }


@dataclass(frozen=True)
class Judged:
    """A labelled first answer and its predicted confidence."""

    skill: str
    """The skill the query is labelled against."""
    confidence: float
    """What the router predicted."""
    right: bool
    """Whether it was right."""


@dataclass(frozen=True)
class Miss:
    """A positive query whose skill did not rank first."""

    query: str
    """The query."""
    expected: str
    """Its skill."""
    expected_score: float | None
    """The skill's score, None when it was not ranked at all."""
    got: str | None
    """What ranked first, None on abstention."""
    got_score: float | None
    """Its score."""


@dataclass(frozen=True)
class EvalReport:
    """Per-skill and overall rates, and the worst misses."""

    per_skill: tuple[tuple[str, Rates], ...]
    """(skill id, rates), sorted by id."""
    overall: Rates
    """All queries together."""
    worst: tuple[Miss, ...]
    """Misses with the largest gap between what won and the expected skill."""
    judged: tuple[Judged, ...] = ()
    """Every labelled first answer that carried a confidence, in the order routed."""

    def reliability(self) -> tuple[tuple[float, float, int, float, float], ...]:
        """Per bin of predicted confidence (:data:`BINS`) holding answers: (low, high, answers,
        mean predicted, share right)."""
        rows = []
        for low, high in zip(BINS, (*BINS[1:], 1.0), strict=True):
            inside = [j for j in self.judged if low <= j.confidence < high or j.confidence == high]
            if inside:
                predicted = sum(j.confidence for j in inside) / len(inside)
                right = sum(j.right for j in inside) / len(inside)
                rows.append((low, high, len(inside), round(predicted, 6), round(right, 6)))
        return tuple(rows)

    def plain(self) -> dict[str, Any]:
        """The report as plain data (``select --eval --format json``)."""
        return {
            "overall": self.overall.plain(),
            "skills": {skill: rates.plain() for skill, rates in self.per_skill},
            "reliability": [
                {"low": lo, "high": hi, "answers": n, "predicted": p, "observed": o}
                for lo, hi, n, p, o in self.reliability()
            ],
            "worst_misses": [m.__dict__ for m in self.worst],
        }

    def reliability_table(self) -> str:
        """:meth:`reliability` as aligned text."""
        lines = ["confidence   answers  predicted  observed"]
        lines += [
            f"{lo:.1f}-{hi:.1f}  {n:>10}  {100 * p:>8.1f}%  {100 * o:>7.1f}%"
            for lo, hi, n, p, o in self.reliability()
        ]
        return "\n".join(lines) + "\n"

    def table(self) -> str:
        """The report as aligned text: one row per skill, the overall row, the confident mark's
        precision and coverage, the reliability table, the worst misses."""
        header = ("skill", "pos", "neg", "top-1", "top-3", "none", "false")
        rows = [header]
        for skill, r in (*self.per_skill, ("overall", self.overall)):
            p = r.plain()
            rows.append(
                (
                    skill,
                    str(r.positives),
                    str(r.negatives),
                    _percent(p["top1"]),
                    _percent(p["top3"]),
                    _percent(p["abstention"]),
                    _percent(p["false_trigger"]),
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines = [
            "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r))
            for r in rows
        ]
        overall = self.overall.plain()
        lines += [
            "",
            f"confident first answers: precision {_percent(overall['confident_precision'])}, "
            f"coverage {_percent(overall['confident_coverage'])} of should-select queries",
            "",
            self.reliability_table().rstrip("\n"),
        ]
        if self.worst:
            lines += ["", "worst misses (query | expected score | got score):"]
            lines += [
                f"  {m.query[:70]!r} | {m.expected} {_score(m.expected_score)} | "
                f"{m.got or '(nothing)'} {_score(m.got_score)}"
                for m in self.worst
            ]
        return "\n".join(lines) + "\n"


def _rate(count: int, total: int) -> float | None:
    return round(count / total, 6) if total else None


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def _score(score: float | None) -> str:
    return "unranked" if score is None else f"{score:.3f}"


#: The agent id a skill folder builds to, or None when it holds no buildable skill.
FolderId = Callable[[Path], "str | None"]


def read_evals(path: Path, folder_id: FolderId | None = None) -> tuple[EvalCase, ...]:
    """Every case of a trigger-eval file, or of each ``*.json`` under a folder (sorted).

    ``folder_id`` names the skill of a file that does not name its own and sits in a
    skill's ``evals/`` folder; without it (or when it answers None) the folder's name.
    """
    files = sorted(path.rglob("*.json")) if path.is_dir() else [path]
    if not files:
        raise UsageError(f"{path}: no trigger-eval files (*.json) found", code="U025")
    return tuple(case for file in files for case in _read_file(file, folder_id))


def _read_file(path: Path, folder_id: FolderId | None) -> list[EvalCase]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: cannot read trigger evals: {exc}", code="U025") from None
    items = data
    named: Any = None
    if isinstance(data, dict):
        named = data.get("skill_name") or data.get("skill")
        items = next((data[k] for k in _WRAPPERS if isinstance(data.get(k), list)), None)
    if not isinstance(items, list):
        raise UsageError(
            f"{path}: expected a list of cases, or an object with one under {', '.join(_WRAPPERS)}",
            code="U025",
        )
    skill = _skill_of(path, named, folder_id)
    return [_case(path, number, item, skill) for number, item in enumerate(items, 1)]


def _skill_of(path: Path, named: Any, folder_id: FolderId | None) -> str:
    if isinstance(named, str) and named.strip():
        return skill_id(named)
    if path.parent.name == "evals":
        folder = path.parent.parent
        return (folder_id(folder) if folder_id is not None else None) or skill_id(folder.name)
    raise UsageError(
        f"{path}: the file names no skill (skill_name) and is not in a skill's evals/ folder",
        code="U025",
    )


def _case(path: Path, number: int, item: Any, skill: str) -> EvalCase:
    query = item.get("query", item.get("prompt")) if isinstance(item, dict) else None
    trigger = item.get("should_trigger") if isinstance(item, dict) else None
    if not isinstance(query, str) or not isinstance(trigger, bool):
        raise UsageError(
            f"{path}: case {number} needs a string query (or prompt) and a boolean should_trigger",
            code="U025",
        )
    return EvalCase(skill, query, trigger, path.as_posix())


def run_evals(
    cases: Iterable[EvalCase],
    route: Callable[[str], Sequence[Selection]],
    skill_of: Mapping[str, str] | None = None,
) -> EvalReport:
    """Route every case with ``route`` (best first) and count hits per skill.

    ``skill_of`` maps a case's skill to the registered id when they differ.
    """
    counts: dict[str, list[int]] = {}
    misses: list[tuple[float, Miss]] = []
    judged: list[Judged] = []
    for case in cases:
        skill = (skill_of or {}).get(case.skill, case.skill)
        ranked = list(route(case.query))
        ids = [s.id for s in ranked]
        c = counts.setdefault(skill, [0] * 9)
        first = ids[:1] == [skill]
        sure = bool(ranked) and ranked[0].confident
        if case.should_trigger:
            c[0] += 1
            c[2] += first
            c[3] += skill in ids[:3]
            c[4] += not ids
            c[6] += sure
            c[7] += sure and first
            if not first:
                misses.append(_miss(case.query, skill, ranked))
        else:
            c[1] += 1
            c[5] += first
            c[8] += sure and first
        predicted = ranked[0].confidence if ranked else None
        if predicted is not None and (case.should_trigger or first):
            judged.append(Judged(skill, predicted, case.should_trigger and first))
    per_skill = tuple((skill, Rates(*c)) for skill, c in sorted(counts.items()))
    overall = Rates(*(sum(c[i] for c in counts.values()) for i in range(9)))
    misses.sort(key=lambda pair: (-pair[0], pair[1].query))
    return EvalReport(per_skill, overall, tuple(m for _, m in misses[:_WORST]), tuple(judged))


def _miss(query: str, skill: str, ranked: Sequence[Selection]) -> tuple[float, Miss]:
    mine = next((s.score for s in ranked if s.id == skill), None)
    top = ranked[0] if ranked else None
    gap = (top.score if top else 0.0) - (mine if mine is not None else 0.0)
    miss = Miss(query, skill, mine, top.id if top else None, top.score if top else None)
    return gap, miss
