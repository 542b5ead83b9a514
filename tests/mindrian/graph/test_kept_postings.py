"""A registry's own writes carry its trigger postings along (phase 7 selects after each one).

Records are derived from the real skills of the shared corpus and routing set (their ids, names,
triggers and problem types as phase 1 reads them; chains, confidences and a shared problem type
per source repository added here, deterministically). They are registered one by one, some
registered again changed, some retired, a few together; after each write the registry's answers
for several contexts must equal those of the selection query run inside the same engine, while
the registry itself reads the stored triggers once and never runs the query.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from graph_factories import OpenRegistry

from bench.common import CORPUS, ROUTING
from builder.phases.skill_analysis import analyse
from builder.pipeline.errors import CompilerError
from builder.skill.source import load_source
from mindrian.graph import EmbeddedRegistry, FrameworkRecord, Neo4jRegistry, Registry
from mindrian.graph import queries as q
from mindrian.graph.dialect import embedded_text
from mindrian.testing.neo4j_server import Neo4jServer

#: (trigger, problem type, previous) contexts asked after each write, and limits.
Context = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
LIMITS = (5, 40)


def _skill_files() -> list[tuple[str, Path]]:
    found = []
    for root in (CORPUS, ROUTING / "skills"):
        if root.is_dir():
            found += [(p.relative_to(root).parts[0], p) for p in sorted(root.rglob("SKILL.md"))]
    return found


@functools.cache
def corpus_records() -> tuple[FrameworkRecord, ...]:
    """One record per distinct skill id that phase 1 reads with at least one trigger."""
    records: dict[str, FrameworkRecord] = {}
    for repo, path in _skill_files():
        try:
            skill = analyse(load_source(path, path.name)).output
        except CompilerError:
            continue
        if skill.id in records or not skill.triggers:
            continue
        k = len(records)
        shared = f"from-{repo}"  # a problem type many frameworks list: ties broken by id
        records[skill.id] = FrameworkRecord(
            id=skill.id,
            name=skill.name,
            type="operator",
            triggers=skill.triggers,
            problem_types=(*skill.problem_types, shared),
            good_for=((shared, (1, 0.5, 0.75)[k % 3]),) if k % 4 else (),
        )
    ids = sorted(records)
    # Each chains to two others, some not registered yet (placeholders until they are).
    return tuple(
        replace(
            records[i],
            chains_to=tuple(
                {
                    ids[(n * 11 + 5) % len(ids)]: 0.5,
                    ids[(n * 7 + 3) % len(ids)]: (0.25, 0.5, 1.0)[n % 3],
                }.items()
            ),
        )
        for n, i in enumerate(ids)
    )


needs_corpus = pytest.mark.skipif(
    not _skill_files(), reason=f"no shared corpus at {CORPUS} or routing set at {ROUTING}"
)


def _contexts(written: Sequence[FrameworkRecord], step: int) -> list[Context]:
    """Phase 7's own check and contexts that reach every term of the formula."""
    last, other = written[-1], written[(step * 5) % len(written)]
    return [
        (last.triggers, (), ()),
        ((*last.triggers[:1], *other.triggers), (), ()),
        (other.triggers, other.problem_types[-1:], (last.id,)),
        ((), last.problem_types[-1:], ()),
        ((), (*last.problem_types[-1:], *other.problem_types), (other.id, last.id)),
        (("no such trigger",), (), ()),
    ]


def _queried(registry: Registry, context: Context, limit: int) -> list[tuple[str, str, float]]:
    triggers, problems, previous = context
    params = {
        "triggers": list(triggers),
        "problem_types": list(problems),
        "previous_frameworks": list(previous),
        "limit": limit,
    }
    text = embedded_text(q.SELECT_FRAMEWORKS) if isinstance(registry, EmbeddedRegistry) else None
    rows = registry.read_cypher(text or q.SELECT_QUERY, params)
    return [(r["id"], r["name"], float(r["score"])) for r in rows]


def _selected(registry: Registry, context: Context, limit: int) -> list[tuple[str, str, float]]:
    return [(s.id, s.name, s.score) for s in registry.select(*context, limit=limit)]


def _writes(records: Sequence[FrameworkRecord]) -> Iterator[tuple[str, Callable[[Registry], Any]]]:
    """Register the records one by one; every fifth, register an earlier one again with other
    triggers and problem types; every seventh, retire one; every eleventh, register two at once."""
    k = 0
    while k < len(records):
        if k % 11 == 10 and k + 1 < len(records):
            pair = records[k : k + 2]
            yield f"register_many {pair[0].id}", lambda r, pair=pair: r.register_many(pair)
            k += 2
        else:
            yield f"register {records[k].id}", functools.partial(_register, record=records[k])
            k += 1
        if k % 5 == 0:
            changed = replace(records[k // 2], triggers=records[k - 1].triggers[:1])
            yield f"change {changed.id}", functools.partial(_register, record=changed)
        if k % 7 == 0:
            gone = records[k // 3].id
            yield f"retire {gone}", lambda r, gone=gone: r.unregister(gone)


def _register(registry: Registry, record: FrameworkRecord) -> None:
    registry.register(record)


def _statements(registry: Registry) -> list[str]:
    """The names of the statements ``registry`` reads with from now on (its select's)."""
    seen: list[str] = []
    read = registry._read

    def spied(work: Callable[[Any], Any]) -> Any:
        def counted(run: Any) -> Any:
            def logged(query: q.Query, params: Any) -> Any:
                seen.append(query.name)
                return run(query, params)

            return work(logged)

        return read(counted)

    registry._read = spied  # type: ignore[method-assign]
    return seen


@needs_corpus
def test_every_selection_after_an_own_write_equals_the_query(engine: OpenRegistry) -> None:
    records = corpus_records()
    assert len(records) >= 60  # the corpus and the routing set, read by phase 1
    registry = engine()
    statements = _statements(registry)
    written: list[FrameworkRecord] = []
    for step, (what, write) in enumerate(_writes(records)):
        write(registry)
        if what.startswith(("register", "change")):
            written.append(next(r for r in records if r.id == what.split()[1]))
        for context in _contexts(written, step):
            for limit in LIMITS:
                want = _queried(registry, context, limit)
                assert _selected(registry, context, limit) == want, (what, context, limit)
    # The registry read the stored triggers once, at its first selection, and never queried.
    assert statements.count(q.ROUTING_TRIGGERS.name) == 1
    assert q.SELECT_FRAMEWORKS.name not in statements


@needs_corpus
def test_a_write_by_another_client_between_two_selections_is_seen(
    neo4j_server: Neo4jServer,
) -> None:
    records = corpus_records()[:10]
    rival = replace(records[7], triggers=records[0].triggers)  # answers the same triggers
    context: Context = (records[0].triggers, (), ())

    def agree(registry: Registry) -> list[str]:
        selected = _selected(registry, context, 5)
        assert selected == _queried(registry, context, 5)
        return [found[0] for found in selected]

    def connect() -> Neo4jRegistry:
        return Neo4jRegistry(neo4j_server.uri, neo4j_server.user, neo4j_server.password)

    with connect() as writer, connect() as other:
        writer.register_many(records[:6])
        statements = _statements(writer)
        assert agree(writer) == [records[0].id]
        writer.register(records[6])
        assert agree(writer) == [records[0].id]
        other.register(rival)
        assert rival.id in agree(writer)
        other.unregister(records[0].id)
        assert records[0].id not in agree(writer)
        writer.register(records[8])
        assert records[0].id not in agree(writer)
    # Read at the first selection, and again after each of the other client's writes only.
    assert statements.count(q.ROUTING_TRIGGERS.name) == 3
    assert q.SELECT_FRAMEWORKS.name not in statements
