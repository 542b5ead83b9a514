"""The registry interface, its records, and the transaction work both backends share.

A backend only knows how to run one named query inside a read or a write transaction
(:meth:`Registry._read` / :meth:`Registry._write`); everything a registration,
selection or export does is written once here, so both backends execute the same
statements in the same order.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypeVar

from mindrian.graph import queries as q
from mindrian.graph.index_cache import KeptIndex, load_snapshot, store_snapshot
from mindrian.graph.triggers import ExplicitFramework, TriggerIndex
from mindrian.routing.rank import RoutingDocument
from mindrian.routing.score import CONFIDENT_AT, RankedCandidate, RoutingSnapshot, rank_sentence
from mindrian.routing.semantic import Encoder, semantic_index

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_SELECT_LIMIT",
    "FrameworkRecord",
    "GraphCounts",
    "Registry",
    "Revision",
    "Row",
    "Run",
    "Selection",
    "Step",
    "Usage",
    "check_params",
    "stored_revision",
]

#: Frameworks per write transaction in :meth:`Registry.register_many`.
DEFAULT_BATCH_SIZE = 1000
#: How many frameworks a selection returns unless told otherwise.
DEFAULT_SELECT_LIMIT = 5

#: One result row, column name to value.
Row = dict[str, Any]
#: Runs one query with its parameters inside the current transaction.
Run = Callable[[q.Query, Mapping[str, Any]], list[Row]]
#: A registry's frameworks revision, as :meth:`Registry._revisions` reads it.
Revision = tuple[int, str]
#: The revision a write transaction found and the one it left (:meth:`Registry._write_frameworks`).
Step = tuple[Revision, Revision]
_T = TypeVar("_T")


@dataclass(frozen=True)
class FrameworkRecord:
    """A framework as the registry stores it (seed 000 §5.1 and §5.2)."""

    id: str
    """Normalised framework id, the node's unique key."""
    name: str
    """Display name."""
    type: str
    """Agent type (operator, role, collaborative, pipeline, guided)."""
    description: str | None = None
    """One-paragraph description from the skill."""
    triggers: tuple[str, ...] = ()
    """Words that make this framework a candidate, in source order."""
    problem_types: tuple[str, ...] = ()
    """Problem types it addresses, in source order."""
    version: str | None = None
    """The skill's declared version."""
    source_digest: str | None = None
    """Digest of the SKILL.md it was compiled from."""
    chains_to: tuple[tuple[str, float], ...] = ()
    """(target framework id, weight) pairs, kept sorted by target."""
    good_for: tuple[tuple[str, float], ...] = ()
    """(problem type, confidence) pairs, kept sorted by problem type."""
    body: str = ""
    """The SKILL.md body's prose, for ranking (:func:`mindrian.routing.text.prose`). Stored
    in the registry database, never in registry.yaml (:meth:`to_plain`; a reviewed file that
    every body edit would otherwise change): a registry built from registry.yaml gets it
    from the packages' spec.yaml (:func:`mindrian.graph.registry_yaml.with_routing_bodies`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"framework id must be a non-empty string, got {self.id!r}")
        object.__setattr__(self, "triggers", _strings(self.triggers, "triggers"))
        object.__setattr__(self, "problem_types", _strings(self.problem_types, "problem_types"))
        object.__setattr__(self, "chains_to", _weighted(self.chains_to, "chains_to", self.id))
        object.__setattr__(self, "good_for", _weighted(self.good_for, "good_for", self.id))

    def to_plain(self) -> dict[str, Any]:
        """Plain data in a fixed key order, as written to registry.yaml (no ``source_digest``
        key when there is none: the builder leaves provenance out of generated files)."""
        plain: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "type": self.type,
            "description": self.description,
            "version": self.version,
            "source_digest": self.source_digest,
            "triggers": list(self.triggers),
            "problem_types": list(self.problem_types),
            "chains_to": [{"target": t, "weight": w} for t, w in self.chains_to],
            "good_for": [{"problem_type": p, "confidence": c} for p, c in self.good_for],
        }
        if self.source_digest is None:
            del plain["source_digest"]
        return plain

    @classmethod
    def from_plain(cls, data: Mapping[str, Any]) -> FrameworkRecord:
        """The inverse of :meth:`to_plain`."""
        return cls(
            id=data["id"],
            name=data["name"],
            type=data["type"],
            description=data.get("description"),
            version=data.get("version"),
            source_digest=data.get("source_digest"),
            triggers=tuple(data.get("triggers") or ()),
            problem_types=tuple(data.get("problem_types") or ()),
            chains_to=tuple((c["target"], c["weight"]) for c in data.get("chains_to") or ()),
            good_for=tuple(
                (g["problem_type"], g["confidence"]) for g in data.get("good_for") or ()
            ),
        )


@dataclass(frozen=True)
class Selection:
    """One framework chosen by the selection query."""

    id: str
    """Framework id."""
    name: str
    """Framework display name."""
    score: float
    """Triggers, problem-type fit, chaining from previous frameworks and observed success.

    ``0.6 + 0.1 x (matched triggers - 1, at most 3)`` when a trigger matches,
    ``+ 0.4 x GOOD_FOR confidence`` when a problem type matches,
    ``+ 0.3 x sum of CHAINS_TO weights from the previous frameworks to this one``,
    ``+ 0.2 x ((successes + 1) / (uses + 2) - 0.5)`` from recorded USED_BY.
    """
    confidence: float | None = None
    """For the first of a sentence's selection, the calibrated probability that it is the one
    meant (:func:`mindrian.routing.score.confidence`); None otherwise."""

    @property
    def confident(self) -> bool:
        """Whether the router stands behind this selection alone (the first of a sentence's,
        with a confidence of at least :data:`mindrian.routing.score.CONFIDENT_AT`)."""
        return self.confidence is not None and self.confidence >= CONFIDENT_AT


@dataclass(frozen=True)
class Usage:
    """How often a framework was handed work, and how often that work succeeded."""

    uses: int
    """USED_BY relationships recorded (one per handoff)."""
    successes: int
    """Those whose handoff succeeded."""


@dataclass(frozen=True)
class GraphCounts:
    """Sizes of the registry graph, for idempotence checks and status output."""

    frameworks: int
    """Registered Framework nodes."""
    placeholders: int
    """Framework nodes only referenced by CHAINS_TO, not registered yet."""
    problem_types: int
    """ProblemType nodes."""
    chains: int
    """CHAINS_TO relationships."""
    good_for: int
    """GOOD_FOR relationships."""


def check_params(query: q.Query, params: Mapping[str, Any]) -> None:
    """Refuse to run a query with parameters other than those it declares."""
    if set(params) != set(query.params):
        raise ValueError(
            f"query {query.name} takes {sorted(query.params)}, was given {sorted(params)}"
        )


class Registry(ABC):
    """The framework registry; use as a context manager or call :meth:`close`."""

    #: The text index of the last revision read, reused while the registry is unchanged.
    _routing: RoutingSnapshot | None = None
    #: The sentence encoder that orders the candidates after the first (:meth:`use_encoder`).
    _encoder: Encoder | None = None
    #: The trigger postings, with the revision they hold (built then, or carried to it by this
    #: object's own writes).
    _triggers: tuple[Revision, TriggerIndex] | None = None
    #: The revision the last trigger selection answered by query was made at.
    _triggers_queried: Revision | None = None
    #: Whether frameworks were written through this object (a writer selects again).
    _wrote_frameworks: bool = False
    #: Recorded usage per framework, with the usage revision it was read at.
    _usage: tuple[tuple[int, int], Mapping[str, tuple[int, int]]] | None = None
    #: Write transactions on recorded usage run through this object.
    _usage_writes: int = 0

    @abstractmethod
    def _write(self, work: Callable[[Run], _T]) -> _T:
        """Run ``work`` in one write transaction, committed only if it returns."""

    def _write_frameworks(self, work: Callable[[Run], _T]) -> tuple[_T, Step | None]:
        """:meth:`_write` for a change of the registered frameworks (a registration, a retire),
        with the revision the transaction found and the one it left, as :meth:`_revisions` would
        read them (None where the backend cannot tell: a later selection reads the postings
        again). A backend that keeps the registry's revision apart raises it in the same
        transaction."""
        return self._write(work), None

    def _change_frameworks(
        self,
        work: Callable[[Run], _T],
        gone: Iterable[str] = (),
        new: Sequence[FrameworkRecord] = (),
    ) -> _T:
        """Run ``work``, a write transaction that unregisters ``gone`` and registers ``new``
        (nothing else), and carry the trigger postings along when they held the revision it
        found: a selection after this object's own write then reads no framework again.

        Another client's write in between, or one that failed, leaves the postings at a
        revision the registry no longer has, so the next selection reads them again.
        """
        kept = self._triggers
        self._wrote_frameworks = True
        result, step = self._write_frameworks(work)
        if kept is not None and step is not None and kept[0] == step[0]:
            carried = kept[1].replaced(gone, (_explicit(r) for r in new))
            self._triggers = (step[1], carried)
        return result

    @abstractmethod
    def _read(self, work: Callable[[Run], _T]) -> _T:
        """Run ``work`` in one read-only transaction."""

    @abstractmethod
    def close(self) -> None:
        """Release the database or driver."""

    @contextlib.contextmanager
    def together(self) -> Iterator[None]:
        """The reads and writes made in the block, one transaction where the backend keeps them
        together: committed when the block ends, undone when it raises (a statement failed in
        it, the rest of it fails too). Here each keeps its own transaction: Neo4j's driver runs
        and retries one transaction function per call."""
        yield

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def register(self, framework: FrameworkRecord, *, new: bool = False) -> None:
        """Register or update one framework, node and relationships in one transaction.
        ``new``: the caller knows the registry holds no relationship from this framework (it is
        not registered; at most a placeholder another's chain made), so none is read to
        delete."""
        work = functools.partial(_register_batch, records=(framework,), new=new)
        self._change_frameworks(work, new=(framework,))

    def register_many(
        self,
        frameworks: Iterable[FrameworkRecord],
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> int:
        """Register frameworks with batched UNWIND, one transaction per batch; returns the count."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        records = tuple(frameworks)
        _reject_duplicate_ids(records)
        for start in range(0, len(records), batch_size):
            batch = records[start : start + batch_size]
            self._change_frameworks(functools.partial(_register_batch, records=batch), new=batch)
        return len(records)

    def unregister(self, framework_id: str) -> bool:
        """Remove a registered framework; False if it was not registered."""
        with self._writing_usage():
            work = functools.partial(_unregister, framework_id=framework_id)
            return self._change_frameworks(work, gone=(framework_id,))

    def select(
        self,
        triggers: Iterable[str],
        problem_types: Iterable[str] = (),
        previous: Iterable[str] = (),
        limit: int = DEFAULT_SELECT_LIMIT,
    ) -> tuple[Selection, ...]:
        """The best registered frameworks for a context, best first, ties by id.

        The score is :data:`mindrian.graph.queries.SELECT_QUERY`'s: the first selection at a
        revision runs it, a second one builds :class:`mindrian.graph.triggers.TriggerIndex`
        from the stored fields, which answers every later one (equal ids and scores). A handle
        that has written frameworks builds it at once and carries it along its own writes
        (:meth:`_change_frameworks`): phase 7 selects after each registration.
        """
        if limit < 1:
            raise ValueError("limit must be at least 1")
        wanted = _strings(triggers, "triggers")
        types = _strings(problem_types, "problem_types")
        before = _strings(previous, "previous")

        def work(run: Run) -> list[tuple[str, str, float]]:
            framework_revision, usage_revision = self._revisions(run)
            index = self._trigger_index(run, framework_revision)
            if index is None:
                params = {
                    "triggers": list(wanted),
                    "problem_types": list(types),
                    "previous_frameworks": list(before),
                    "limit": int(limit),
                }
                rows = run(q.SELECT_FRAMEWORKS, params)
                return [(r["id"], r["name"], float(r["score"])) for r in rows]
            usage = self._routing_usage(run, usage_revision)
            return index.select(wanted, types, before, usage, int(limit))

        return tuple(Selection(*found) for found in self._read(work))

    def select_text(
        self,
        text: str,
        problem_types: Iterable[str] = (),
        previous: Iterable[str] = (),
        limit: int = DEFAULT_SELECT_LIMIT,
    ) -> tuple[Selection, ...]:
        """The best frameworks for a sentence by :mod:`mindrian.routing.score`."""
        ranked = self.rank_text(text, problem_types, previous, limit)
        return tuple(Selection(c.id, c.name, c.score, c.confidence) for c in ranked)

    def rank_text(
        self,
        text: str,
        problem_types: Iterable[str] = (),
        previous: Iterable[str] = (),
        limit: int = DEFAULT_SELECT_LIMIT,
        explain: bool = False,
    ) -> tuple[RankedCandidate, ...]:
        """:meth:`select_text` with every part of each score (and matched terms if ``explain``)."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        types = _strings(problem_types, "problem_types")
        before = sorted(set(_strings(previous, "previous")))

        def work(run: Run) -> tuple[RankedCandidate, ...]:
            framework_revision, usage_revision = self._revisions(run)
            snapshot = self._routing_snapshot(run, framework_revision, explain)
            usage = self._routing_usage(run, usage_revision)
            return tuple(rank_sentence(snapshot, text, types, before, usage, limit, explain))

        return self._read(work)

    def _revisions(self, run: Run) -> tuple[Revision, tuple[int, int]]:
        """(frameworks, usage) revisions of the graph as this transaction sees it: the cached
        indexes are rebuilt when the first changed, the usage reread when the second did.

        Read from the graph, since other clients of a server write to it too; a backend
        that only ever sees its own writes overrides this without a query.
        """
        frameworks = self._framework_revision(run)
        usage = run(q.ROUTING_USAGE_REVISION, {})[0]
        return frameworks, (int(usage["n"]), int(usage["successes"] or 0))

    def _framework_revision(self, run: Run) -> Revision:
        """The revision of the registered frameworks as this transaction sees it (a backend
        that keeps one apart reads it instead of scanning every framework)."""
        return stored_revision(run)

    def _index_cache_file(self) -> KeptIndex | None:
        """Where the text index is kept between processes (:mod:`mindrian.graph.index_cache`);
        None, the default, keeps it in this object only."""
        return None

    def _routing_snapshot(
        self, run: Run, revision: Revision, explain: bool = False
    ) -> RoutingSnapshot:
        """The text index at ``revision``: this object's while the registry is unchanged, else
        the one kept on disk for the registry's stored revision, else built (and kept).
        ``explain`` needs one built from the documents, which a kept one is not."""
        cached = self._routing
        if cached is not None and cached.revision == revision:
            if cached.index.explainable or not explain:
                return cached
        kept = self._index_cache_file()
        stored = stored_revision(run) if kept is not None else revision
        loaded = None if explain else load_snapshot(kept, stored, revision)
        if loaded is not None:
            self._routing = self._encoded(loaded)
            return self._routing
        documents = [
            RoutingDocument(
                id=r["id"],
                name=r["name"] or r["id"],
                description=r["description"] or "",
                triggers=tuple(r["triggers"] or ()),
                problem_types=tuple(r["problem_types"] or ()),
                body=r["body"] or "",
            )
            for r in run(q.ROUTING_DOCUMENTS, {})
        ]
        good_for, chains = _stored_relationships(run)
        built = RoutingSnapshot.build(revision, documents, good_for, chains)
        store_snapshot(kept, stored, built)
        self._routing = self._encoded(built)
        return self._routing

    def use_encoder(self, encoder: Encoder | None) -> None:
        """Order the candidates after the first of a sentence with ``encoder``'s similarities
        too (:mod:`mindrian.routing.semantic`); None ranks by the text alone."""
        self._encoder = encoder
        self._routing = None

    def _encoded(self, snapshot: RoutingSnapshot) -> RoutingSnapshot:
        """``snapshot`` with its frameworks' vectors when an encoder is in use."""
        if self._encoder is None:
            return snapshot
        vectors = semantic_index(self._encoder, snapshot.passages)
        return dataclasses.replace(snapshot, semantic=vectors)

    def _trigger_index(self, run: Run, revision: Revision) -> TriggerIndex | None:
        """The trigger postings of ``revision``; None for its first selection, which the
        query answers more cheaply than reading every framework (a command selects once),
        unless this object writes frameworks: its writes carry the postings along
        (:meth:`_change_frameworks`), so a writer reads them once (phase 7 selects after each
        registration)."""
        if self._triggers is not None and self._triggers[0] == revision:
            return self._triggers[1]
        if self._triggers_queried != revision and not self._wrote_frameworks:
            self._triggers_queried = revision
            return None
        rows = run(q.ROUTING_TRIGGERS, {})
        good_for, chains = _stored_relationships(run)
        index = TriggerIndex.build(
            ExplicitFramework(
                r["id"],
                r["name"],
                tuple(r["triggers"] or ()),
                tuple(r["problem_types"] or ()),
                tuple(good_for.get(r["id"], {}).items()),
                chains.get(r["id"], ()),
            )
            for r in rows
        )
        self._triggers = (revision, index)
        return index

    def trigger_postings(self) -> TriggerIndex | None:
        """The trigger postings this handle holds for the registry as it now reads it (None when
        it holds none): for a later handle of the same registry (:meth:`use_trigger_postings`)."""

        def work(run: Run) -> TriggerIndex | None:
            revision, _ = self._revisions(run)
            kept = self._triggers
            return kept[1] if kept is not None and kept[0] == revision else None

        return self._read(work)

    def use_trigger_postings(self, postings: TriggerIndex) -> None:
        """Answer explicit selections from ``postings`` (another handle's
        :meth:`trigger_postings`) while the registry stays as it is now, and carry them along
        this handle's writes. The caller vouches that the registry holds now what they were
        made of (phase 7: registry.yaml's seal, whose text lists every field they index)."""
        self._triggers = (self._read(lambda run: self._revisions(run)[0]), postings)

    def _routing_usage(self, run: Run, revision: tuple[int, int]) -> Mapping[str, tuple[int, int]]:
        """Recorded (uses, successes) per framework, reread only when usage changed."""
        cached = self._usage
        if cached is not None and cached[0] == revision:
            return cached[1]
        rows = run(q.ROUTING_USAGE, {})
        usage = {r["id"]: (int(r["uses"]), int(r["successes"] or 0)) for r in rows}
        self._usage = (revision, usage)
        return usage

    def record_usage(
        self, framework_id: str, session_id: str, handoff_id: str, success: bool
    ) -> bool:
        """Record one handoff to ``framework_id`` in ``session_id``; False if it is not registered.

        Recording the same ``handoff_id`` again only updates its ``success``.
        """
        params = {
            "framework_id": framework_id,
            "session_id": session_id,
            "handoff_id": handoff_id,
            "success": bool(success),
        }
        for name, value in params.items():
            if name != "success" and (not isinstance(value, str) or not value):
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        with self._writing_usage():
            return bool(self._write(lambda run: run(q.RECORD_USAGE, params)))

    @contextlib.contextmanager
    def _writing_usage(self) -> Iterator[None]:
        """Count a write of recorded usage (committed or not: a needless reread is only
        slower)."""
        try:
            yield
        finally:
            self._usage_writes += 1

    def usage(self, framework_id: str) -> Usage:
        """The recorded uses of one framework (zero when there are none)."""
        rows = self._read(lambda run: run(q.USAGE, {"id": framework_id}))
        row = rows[0] if rows else {"uses": 0, "successes": 0}
        return Usage(int(row["uses"]), int(row["successes"] or 0))

    def read_cypher(self, text: str, parameters: Mapping[str, Any] | None = None) -> list[Row]:
        """Run a caller's query in a read-only transaction; values only as ``parameters``.

        The transaction itself refuses writes; callers facing untrusted text check
        it first with :mod:`mindrian.guards` (as ``mindrian.mcp`` does).
        """
        params = dict(parameters or {})
        query = q.Query(q.CALLER_QUERY, text, tuple(sorted(params)))
        return self._read(lambda run: run(query, params))

    def get(self, framework_id: str) -> FrameworkRecord | None:
        """The registered framework with this id, or None."""
        return self._read(lambda run: _get(run, framework_id))

    def export(self) -> tuple[FrameworkRecord, ...]:
        """Every registered framework, sorted by id, relationships sorted too."""
        return self._read(_export)

    def counts(self) -> GraphCounts:
        """Node and relationship counts of the whole registry graph."""
        return self._read(_counts)


def stored_revision(run: Run) -> Revision:
    """(registered frameworks, latest registration time) as the graph stores them: every
    registration and retire changes it."""
    frameworks = run(q.ROUTING_REVISION, {})[0]
    return int(frameworks["n"]), str(frameworks["latest"])


def _stored_relationships(
    run: Run,
) -> tuple[dict[str, dict[str, float]], dict[str, tuple[tuple[str, float], ...]]]:
    """GOOD_FOR (framework to problem type to confidence) and CHAINS_TO (framework to its
    (target, weight) pairs) of every registered framework."""
    good_for: dict[str, dict[str, float]] = {}
    for r in run(q.EXPORT_GOOD_FOR, {}):
        good_for.setdefault(r["source"], {})[r["problem_type"]] = float(r["confidence"])
    chains: dict[str, list[tuple[str, float]]] = {}
    for r in run(q.EXPORT_CHAINS, {}):
        chains.setdefault(r["source"], []).append((r["target"], float(r["weight"])))
    return good_for, {source: tuple(targets) for source, targets in chains.items()}


def _strings(values: Iterable[str], what: str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise TypeError(f"{what} must be a sequence of strings, not one string")
    items = tuple(values)
    if not all(isinstance(v, str) for v in items):
        raise TypeError(f"{what} must contain only strings: {items!r}")
    return items


def _weighted(
    pairs: Iterable[Sequence[Any]], what: str, owner: str
) -> tuple[tuple[str, float], ...]:
    items = tuple((str(key), float(value)) for key, value in pairs)
    keys = [key for key, _ in items]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{owner}: {what} names the same target twice: {sorted(keys)}")
    if not all(math.isfinite(value) for _, value in items):
        raise ValueError(f"{owner}: {what} weights must be finite numbers")
    return tuple(sorted(items))


def _explicit(record: FrameworkRecord) -> ExplicitFramework:
    """What a registration of ``record`` stores of what explicit selection reads."""
    return ExplicitFramework(
        record.id,
        record.name,
        record.triggers,
        record.problem_types,
        record.good_for,
        record.chains_to,
    )


def _reject_duplicate_ids(records: Sequence[FrameworkRecord]) -> None:
    seen: set[str] = set()
    for record in records:
        if record.id in seen:
            raise ValueError(f"framework {record.id} appears twice in one registration")
        seen.add(record.id)


def _framework_row(record: FrameworkRecord) -> Row:
    return {
        "id": record.id,
        "name": record.name,
        "type": record.type,
        "description": record.description,
        "triggers": list(record.triggers),
        "problem_types": list(record.problem_types),
        "version": record.version,
        "source_digest": record.source_digest,
    }


def _body_row(record: FrameworkRecord) -> Row:
    return {"id": record.id, "body": record.body}


def _register_batch(run: Run, records: Sequence[FrameworkRecord], new: bool = False) -> None:
    """Register ``records``; ``new``: none of them has relationships of its own stored yet."""
    _reject_duplicate_ids(records)
    wanted_chains = {(r.id, t): w for r in records for t, w in r.chains_to}
    wanted_good_for = {(r.id, p): c for r in records for p, c in r.good_for}
    ids = [r.id for r in records]
    released = [] if new else _delete_relationships(run, ids, wanted_chains, wanted_good_for)
    _rows(run, q.REGISTER_FRAMEWORKS, q.REGISTER_FRAMEWORK, [_framework_row(r) for r in records])
    run(q.SET_ROUTING_BODIES, {"bodies": [_body_row(r) for r in records]})
    chains = [{"source": s, "target": t, "weight": w} for (s, t), w in wanted_chains.items()]
    _rows(run, q.MERGE_CHAINS, q.MERGE_CHAIN, chains)
    good_for = [
        {"source": s, "problem_type": p, "confidence": c} for (s, p), c in wanted_good_for.items()
    ]
    _rows(run, q.MERGE_GOOD_FOR, q.MERGE_ONE_GOOD_FOR, good_for)
    _prune(run, released)


def _rows(run: Run, unwinding: q.Query, one: q.Query, rows: Sequence[Row]) -> None:
    """``unwinding`` (``UNWIND $<its one parameter>``) over ``rows``; a single row as ``one``,
    the same statement with the row's fields as parameters: the embedded engine runs UNWIND
    over one row at about twice the cost. None is sent for no row: UNWIND over nothing is a
    no-op in Neo4j, but the embedded engine cannot type an empty list parameter."""
    if len(rows) == 1:
        run(one, rows[0])
    elif rows:
        (name,) = unwinding.params
        run(unwinding, {name: list(rows)})


def _delete_relationships(
    run: Run,
    ids: Sequence[str],
    keep_chains: Mapping[tuple[str, str], float],
    keep_good_for: Mapping[tuple[str, str], float],
) -> list[str]:
    """Delete outgoing relationships of ``ids`` not in the keep sets; returns released targets."""
    stored_chains = run(q.OUTGOING_CHAINS, {"ids": list(ids)})
    stale_chains = [r for r in stored_chains if (r["source"], r["target"]) not in keep_chains]
    if stale_chains:
        run(q.DELETE_CHAINS, {"pairs": stale_chains})
    stored_good_for = run(q.OUTGOING_GOOD_FOR, {"ids": list(ids)})
    stale_good_for = [
        r for r in stored_good_for if (r["source"], r["problem_type"]) not in keep_good_for
    ]
    if stale_good_for:
        run(q.DELETE_GOOD_FOR, {"pairs": stale_good_for})
    return [r["target"] for r in stale_chains]


def _prune(run: Run, candidates: Iterable[str]) -> None:
    ids = sorted(set(candidates))
    if ids:
        run(q.PRUNE_PLACEHOLDERS, {"ids": ids})


def _unregister(run: Run, framework_id: str) -> bool:
    if not run(q.DEMOTE_FRAMEWORK, {"id": framework_id}):
        return False
    released = _delete_relationships(run, [framework_id], {}, {})
    run(q.DELETE_USAGE, {"id": framework_id})
    _prune(run, [framework_id, *released])
    return True


def _record(node: Row, chains: Iterable[Row], good_for: Iterable[Row]) -> FrameworkRecord:
    return FrameworkRecord(
        id=node["id"],
        name=node["name"],
        type=node["type"],
        description=node["description"],
        triggers=tuple(node["triggers"] or ()),
        problem_types=tuple(node["problem_types"] or ()),
        version=node["version"],
        source_digest=node["source_digest"],
        chains_to=tuple((c["target"], c["weight"]) for c in chains),
        good_for=tuple((g["problem_type"], g["confidence"]) for g in good_for),
        body=node["body"] or "",
    )


def _get(run: Run, framework_id: str) -> FrameworkRecord | None:
    nodes = run(q.GET_FRAMEWORK, {"id": framework_id})
    if not nodes:
        return None
    body = run(q.GET_ROUTING_BODY, {"id": framework_id})
    chains = run(q.GET_CHAINS, {"id": framework_id})
    good_for = run(q.GET_GOOD_FOR, {"id": framework_id})
    return _record({**nodes[0], "body": body[0]["body"] if body else None}, chains, good_for)


def _export(run: Run) -> tuple[FrameworkRecord, ...]:
    chains: dict[str, list[Row]] = {}
    for row in run(q.EXPORT_CHAINS, {}):
        chains.setdefault(row["source"], []).append(row)
    good_for: dict[str, list[Row]] = {}
    for row in run(q.EXPORT_GOOD_FOR, {}):
        good_for.setdefault(row["source"], []).append(row)
    nodes = run(q.EXPORT_FRAMEWORKS, {})
    records = (_record(n, chains.get(n["id"], ()), good_for.get(n["id"], ())) for n in nodes)
    return tuple(sorted(records, key=lambda r: r.id))


def _single_count(run: Run, query: q.Query) -> int:
    return int(run(query, {})[0]["n"])


def _counts(run: Run) -> GraphCounts:
    by_state = {row["registered"]: int(row["n"]) for row in run(q.COUNT_FRAMEWORKS, {})}
    return GraphCounts(
        frameworks=by_state.get(True, 0),
        placeholders=sum(n for state, n in by_state.items() if state is not True),
        problem_types=_single_count(run, q.COUNT_PROBLEM_TYPES),
        chains=_single_count(run, q.COUNT_CHAINS),
        good_for=_single_count(run, q.COUNT_GOOD_FOR),
    )
