"""The registry contract on both engines (``engine``: LadybugDB in memory, and the test Neo4j):
selection, idempotence, placeholders, usage; then what only the embedded file has (its format,
locks, checkpoints)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import ladybug
import pytest
from graph_factories import INJECTION, SIX, OpenRegistry, by_id, framework, with_injection

from mindrian.graph import (
    EmbeddedRegistry,
    FrameworkRecord,
    GraphCounts,
    GraphError,
    Registry,
    Usage,
    embedded,
)
from mindrian.graph import queries as q
from mindrian.graph.base import check_params
from mindrian.graph.dialect import EMBEDDED_REWRITES, EMBEDDED_SCHEMA, embedded_text
from mindrian.graph.embedded import FORMAT_SCHEMA, FORMAT_VERSION
from mindrian.graph.errors import RegistryBusy, RegistryDamaged

#: Every column of the Framework node table; nothing else may ever appear on a node.
NODE_COLUMNS = {
    "id",
    "name",
    "type",
    "description",
    "triggers",
    "problem_types",
    "version",
    "source_digest",
    "body",
    "registered",
    "updated_at",
}


@pytest.fixture
def registry(engine: OpenRegistry) -> Iterator[Registry]:
    with engine() as reg:
        reg.register_many(SIX)
        yield reg


def node_properties(registry: Registry, framework_id: str) -> dict[str, Any] | None:
    """Every property of one Framework node, registered or a placeholder, None when absent
    (Neo4j stores no null property: those read back as missing)."""
    if isinstance(registry, EmbeddedRegistry):
        return registry.node_properties(framework_id)
    rows = registry.read_cypher(
        "MATCH (f:Framework) WHERE f.id = $id RETURN properties(f) AS p", {"id": framework_id}
    )
    return dict(rows[0]["p"]) if rows else None


# (triggers, problem_types, previous, limit, expected [(id, score)]), scores by hand:
# 0.6 for a trigger match + 0.1 per further matched trigger (three at most)
# + 0.4 x GOOD_FOR confidence of a matched problem type (1.0 without a GOOD_FOR edge)
# + 0.3 x sum of CHAINS_TO weights from the previous frameworks to the candidate.
# Nothing is recorded in USED_BY here, so the usage term is 0.
SELECTIONS = [
    pytest.param(
        ["scqa"],
        ["ill-defined"],
        ["pws"],
        5,
        # minto 0.6+0.4*0.7+0.3*0.4 (pws chains to minto); scenario 0.6+0.4*1.0: a tie
        # broken by id; trending 0.4*1.0 above pws 0.4*0.9.
        [
            ("minto", 1.0),
            ("scenario", 1.0),
            ("csio", 0.6),
            ("trending", 0.4),
            ("pws", 0.36),
        ],
        id="chained-bonus-confidence-and-tie-break",
    ),
    # minto and jtbd both chain to pws: 0.6 + 0.3*(0.9+0.5).
    pytest.param(["validate"], [], ["minto", "jtbd"], 5, [("pws", 1.02)], id="bonus-sums-weights"),
    # pws chains only to minto; jtbd's own chain to pws earns it nothing.
    pytest.param(["customer"], [], ["pws"], 5, [("jtbd", 0.6)], id="bonus-follows-successors"),
    pytest.param(["scqa"], [], [], 2, [("csio", 0.6), ("minto", 0.6)], id="limit-after-tie-break"),
    pytest.param(
        ["structure", "scqa", "communicate", "future"],
        [],
        [],
        5,
        [("minto", 0.8), ("scenario", 0.7), ("csio", 0.6)],
        id="more-matched-triggers-rank-higher",
    ),
    pytest.param(
        [],
        ["market"],
        [],
        5,
        [("trending", 0.4), ("jtbd", 0.32)],
        id="problem-type-weighted-by-confidence",
    ),
    pytest.param(["nothing-matches"], [], [], 5, [], id="no-match"),
    pytest.param([], [], ["pws"], 5, [], id="bonus-alone-selects-nothing"),
    pytest.param(
        ["scqa", "problem", "customer", "trend"],
        [],
        [],
        5,
        [("csio", 0.6), ("jtbd", 0.6), ("minto", 0.6), ("pws", 0.6), ("scenario", 0.6)],
        id="top-five-of-six",
    ),
]


@pytest.mark.parametrize("triggers, problem_types, previous, limit, expected", SELECTIONS)
def test_select_scores_match_hand_computation(
    registry: Registry,
    triggers: list[str],
    problem_types: list[str],
    previous: list[str],
    limit: int,
    expected: list[tuple[str, float]],
) -> None:
    chosen = registry.select(triggers, problem_types, previous, limit=limit)
    assert [s.id for s in chosen] == [framework_id for framework_id, _ in expected]
    assert [s.score for s in chosen] == pytest.approx([score for _, score in expected])
    assert all(s.name == by_id(s.id).name for s in chosen)


def test_get_returns_the_registered_record(registry: Registry) -> None:
    for record in SIX:
        assert registry.get(record.id) == record
    assert registry.get("unknown") is None


def test_export_is_sorted_and_complete(registry: Registry) -> None:
    assert registry.export() == tuple(sorted(SIX, key=lambda r: r.id))


SIX_COUNTS = GraphCounts(frameworks=6, placeholders=0, problem_types=3, chains=5, good_for=4)


def test_one_framework_is_stored_as_a_batch_of_one_would_be(engine: OpenRegistry) -> None:
    """A registration of one sends its rows as parameters (no chain, one, several), and ``new``
    reads nothing back first: the graph ends as registering them all in one batch leaves it
    (the same frameworks under two prefixes, in one registry)."""

    def records(prefix: str) -> list[FrameworkRecord]:
        return [
            framework(f"{prefix}solo", triggers=("alone",)),
            framework(
                f"{prefix}one",
                triggers=("single",),
                chains_to=((f"{prefix}solo", 0.5),),
                good_for=(("x", 0.7),),
            ),
            framework(
                f"{prefix}two",
                triggers=("pair",),
                chains_to=((f"{prefix}one", 0.4), (f"{prefix}ghost", 0.1)),
                good_for=(("x", 0.2), ("y", 0.9)),
            ),
        ]

    def unprefixed(record: FrameworkRecord, prefix: str) -> FrameworkRecord:
        chains = tuple((t.removeprefix(prefix), w) for t, w in record.chains_to)
        named = {"name": "", "description": "", "source_digest": ""}  # made from the id
        return replace(record, id=record.id.removeprefix(prefix), chains_to=chains, **named)

    with engine() as registry:
        registry.register_many(records("b-"))
        for record in records("a-"):
            registry.register(record, new=True)
        held = registry.export()
        alone = [unprefixed(r, "a-") for r in held if r.id.startswith("a-")]
        together = [unprefixed(r, "b-") for r in held if r.id.startswith("b-")]
        assert alone == together and len(alone) == 3
        first, second = (node_properties(registry, f"{p}ghost") for p in ("a-", "b-"))
        assert first is not None and second is not None
        assert first.get("registered") is False
        first.pop("id"), second.pop("id")
        assert first == second


@pytest.mark.parametrize("repeat", ["register", "register_many"])
def test_registering_twice_changes_nothing(registry: Registry, repeat: str) -> None:
    assert registry.counts() == SIX_COUNTS
    before = registry.export()
    if repeat == "register":
        for record in SIX:
            registry.register(record)
    else:
        registry.register_many(SIX, batch_size=4)
    assert registry.counts() == SIX_COUNTS
    assert registry.export() == before


def test_stale_relationships_are_removed(registry: Registry) -> None:
    changed = replace(by_id("minto"), chains_to=(("jtbd", 0.25),), good_for=(("market", 0.1),))
    registry.register(changed)
    assert registry.get("minto") == changed
    assert registry.counts() == SIX_COUNTS  # one chain and one GOOD_FOR swapped
    # After minto, the bonus now goes to its new successor only.
    assert registry.select(["validate"], [], ["minto"])[0].score == pytest.approx(0.6)
    assert registry.select(["customer"], [], ["minto"])[0].score == pytest.approx(0.6 + 0.075)


def test_relationship_weights_are_updated_in_place(registry: Registry) -> None:
    registry.register(replace(by_id("minto"), chains_to=(("pws", 0.1),)))
    assert registry.get("minto").chains_to == (("pws", 0.1),)
    assert registry.counts() == SIX_COUNTS


def test_unknown_chain_target_becomes_placeholder_then_completes(engine: OpenRegistry) -> None:
    with engine() as reg:
        reg.register(framework("alpha", triggers=("go",), chains_to=(("ghost", 0.7),)))
        assert reg.counts() == GraphCounts(1, 1, 0, 1, 0)
        assert reg.get("ghost") is None
        placeholder = node_properties(reg, "ghost")
        assert placeholder is not None and placeholder["registered"] is False
        assert placeholder.get("name") is None
        assert [s.id for s in reg.select(["go"], [], ["ghost"])] == ["alpha"]

        ghost = framework("ghost", triggers=("go",))
        reg.register(ghost)
        assert reg.counts() == GraphCounts(2, 0, 0, 1, 0)
        assert reg.get("ghost") == ghost
        assert reg.get("alpha").chains_to == (("ghost", 0.7),)
        (first, second) = reg.select(["go"], [], ["alpha"])
        assert (first.id, second.id) == ("ghost", "alpha")
        assert (first.score, second.score) == pytest.approx((0.6 + 0.3 * 0.7, 0.6))


def test_placeholder_nobody_chains_to_is_pruned(engine: OpenRegistry) -> None:
    with engine() as reg:
        reg.register(framework("alpha", chains_to=(("ghost", 0.7),)))
        reg.register(framework("alpha"))
        assert reg.counts() == GraphCounts(1, 0, 0, 0, 0)
        assert node_properties(reg, "ghost") is None


def test_unregister_keeps_incoming_chains_as_placeholder(
    registry: Registry,
) -> None:
    assert registry.unregister("pws") is True
    assert registry.get("pws") is None
    assert "pws" not in {s.id for s in registry.select(["problem", "scqa"], ["ill-defined"])}
    # minto, jtbd and scenario still chain to pws; its own relationships are gone.
    assert registry.counts() == GraphCounts(
        frameworks=5, placeholders=1, problem_types=3, chains=4, good_for=2
    )
    registry.register(by_id("pws"))
    assert registry.counts() == SIX_COUNTS
    assert registry.export() == tuple(sorted(SIX, key=lambda r: r.id))


def test_unregister_deletes_a_framework_nobody_chains_to(
    registry: Registry,
) -> None:
    assert registry.unregister("trending") is True
    assert node_properties(registry, "trending") is None
    assert registry.unregister("trending") is False
    assert registry.unregister("never-registered") is False


def test_unregister_releases_placeholders_it_was_the_last_to_point_at(engine: OpenRegistry) -> None:
    with engine() as reg:
        reg.register(framework("alpha", chains_to=(("ghost", 0.5),)))
        assert reg.unregister("alpha") is True
        assert reg.counts() == GraphCounts(0, 0, 0, 0, 0)


@pytest.mark.parametrize("target", ["minto", "csio"])
def test_injection_text_is_stored_verbatim_and_changes_nothing_else(
    registry: Registry, target: str
) -> None:
    others_before = [r for r in registry.export() if r.id != target]
    hostile = with_injection(by_id(target))
    registry.register(hostile)

    assert registry.get(target) == hostile
    stored = node_properties(registry, target)
    assert stored is not None and set(stored) == NODE_COLUMNS
    assert stored["name"] == stored["version"] == stored["description"] == INJECTION
    assert stored["registered"] is True
    assert [r for r in registry.export() if r.id != target] == others_before
    assert [s.id for s in registry.select([INJECTION], [], [])] == [target]


def test_injection_in_ids_is_just_an_id(registry: Registry) -> None:
    hostile = framework("x' }) DETACH DELETE f //", triggers=("scqa",))
    registry.register(hostile)
    assert registry.get(hostile.id) == hostile
    assert registry.counts().frameworks == 7


def test_database_file_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "registry.lbug"
    with EmbeddedRegistry(path) as reg:
        reg.register_many(SIX)
    with EmbeddedRegistry(path) as reopened:  # schema creation is idempotent
        assert reopened.export() == tuple(sorted(SIX, key=lambda r: r.id))


def _on_disk(path: Path) -> int:
    """Bytes of the database file and of its write-ahead log."""
    log = Path(f"{path}.wal")
    return path.stat().st_size + (log.stat().st_size if log.exists() else 0)


def test_one_registration_per_open_keeps_the_file_near_its_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Phase 7 registers each skill in a process of its own. Folding the log at every close
    # rewrote the grown body column to new pages each time and left the old ones unusable:
    # these 60 frameworks took 12.7 MB one by one against 1.0 MB written at once. A small
    # log threshold makes the test fold several times, as a large project would.
    threshold = 64 * 1024
    monkeypatch.setattr(embedded, "CHECKPOINT_WAL_BYTES", threshold)
    records = [
        framework(f"fw-{k:03d}", triggers=(f"t{k}",), body=f"word{k} " * 1000) for k in range(60)
    ]
    at_once = tmp_path / "at-once.lbug"
    with EmbeddedRegistry(at_once) as reg:
        reg.register_many(records)
        reg.checkpoint()
    one_by_one = tmp_path / "one-by-one.lbug"
    for record in records:
        with EmbeddedRegistry(one_by_one) as reg:
            reg.register(record)
    log = Path(f"{one_by_one}.wal")
    assert not log.exists() or log.stat().st_size <= 2 * threshold
    assert one_by_one.stat().st_size > at_once.stat().st_size / 2  # the log was folded
    assert _on_disk(one_by_one) <= 3 * _on_disk(at_once)
    with EmbeddedRegistry(one_by_one, read_only=True) as reader:
        assert reader.export() == tuple(records)


def test_a_writer_runs_its_statements_on_one_thread_and_a_reader_on_the_engines_default(
    tmp_path: Path,
) -> None:
    # A writer's statements touch a few rows each: the engine's per-core workers only added
    # CPU to phase 7 (reader handles keep them).
    setting = "CALL current_setting('threads') RETURN *"
    path = tmp_path / "registry.lbug"
    with EmbeddedRegistry(path) as writer:
        assert writer.read_cypher(setting) == [{"threads": "1"}]
    with EmbeddedRegistry(path, read_only=True) as reader:
        default = ladybug.Database(max_num_threads=0)
        try:
            expected = ladybug.Connection(default).execute(setting).get_all()  # type: ignore[union-attr]
        finally:
            default.close()
        assert reader.read_cypher(setting) == [{"threads": expected[0][0]}]


def test_a_checkpoint_leaves_the_whole_registry_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "registry.lbug"
    with EmbeddedRegistry(path) as reg:
        reg.register_many(SIX)
        reg.checkpoint()
    Path(f"{path}.wal").unlink(missing_ok=True)  # what moving the file alone does
    with EmbeddedRegistry(path, read_only=True) as moved:
        assert moved.export() == tuple(sorted(SIX, key=lambda r: r.id))


def test_failed_write_transaction_leaves_nothing_behind(
    registry: Registry,
) -> None:
    before = registry.export()

    def work(run):  # type: ignore[no-untyped-def]
        run(q.DEMOTE_FRAMEWORK, {"id": "minto"})
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        registry._write(work)
    assert registry.export() == before
    registry.register(framework("after-failure"))  # the connection is usable again
    assert registry.get("after-failure") is not None


def test_calls_made_together_see_each_other_and_land_at_the_end(registry: Registry) -> None:
    """Phase 7's group: registrations, reads back and selections in one block. On the embedded
    engine it is one transaction; on Neo4j each call keeps its own. Either way the calls see
    what the block wrote before them, and all of it is there after."""
    with registry.together():
        registry.register(framework("first", triggers=("opening",)), new=True)
        assert registry.get("first") is not None
        assert [s.id for s in registry.select(["opening"])] == ["first"]
        registry.unregister("minto")
    assert registry.get("first") is not None and registry.get("minto") is None


def test_a_block_that_raises_leaves_nothing_of_itself() -> None:
    with EmbeddedRegistry(None) as registry:
        registry.register_many(SIX)
        before = registry.export()
        with pytest.raises(RuntimeError, match="checks failed"), registry.together():
            registry.register(framework("doomed"), new=True)
            registry.unregister("minto")
            raise RuntimeError("checks failed")
        assert registry.export() == before
        registry.register(framework("after"))  # the connection is usable again
        assert registry.get("after") is not None


def test_a_block_undone_leaves_no_selection_of_what_it_wrote() -> None:
    """The trigger postings and text index a handle carries along its own writes are not used
    for a state a rolled-back block wrote: its selections read the registry again."""
    with EmbeddedRegistry(None) as registry:
        registry.register_many(SIX)
        assert registry.select(["spectral"]) == ()
        with pytest.raises(RuntimeError, match="undone"), registry.together():
            registry.register(framework("ghost", triggers=("spectral",)), new=True)
            assert [s.id for s in registry.select(["spectral"])] == ["ghost"]
            assert "ghost" in [s.id for s in registry.select_text("spectral")]
            raise RuntimeError("undone")
        assert registry.get("ghost") is None
        assert registry.select(["spectral"]) == ()
        assert "ghost" not in [s.id for s in registry.select_text("spectral")]


def test_a_failed_statement_fails_the_whole_block_even_when_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine may end a transaction at a failed statement: the block's later calls fail and
    it ends undone, whatever its caller made of the failure."""
    with EmbeddedRegistry(None) as registry:
        registry.register_many(SIX)
        before = registry.export()
        real = registry._run

        def failing(query: q.Query, params: Any) -> Any:
            if query.name == q.SET_ROUTING_BODIES.name:
                raise GraphError("a statement failed")
            return real(query, params)

        with pytest.raises(GraphError, match="a statement failed"), registry.together():
            registry.register(framework("kept-so-far"), new=True)
            monkeypatch.setattr(registry, "_run", failing)
            with pytest.raises(GraphError):
                registry.register(framework("failing"), new=True)
            monkeypatch.setattr(registry, "_run", real)
            with pytest.raises(GraphError, match="an earlier statement failed"):
                registry.get("kept-so-far")
        assert registry.export() == before
        with pytest.raises(RuntimeError, match="already"), registry.together():
            with registry.together():
                pass


def test_register_many_rejects_duplicate_ids_before_writing(engine: OpenRegistry) -> None:
    with engine() as reg:
        with pytest.raises(ValueError, match="appears twice"):
            reg.register_many([framework("a"), framework("b"), framework("a")])
        assert reg.counts().frameworks == 0


@pytest.mark.parametrize(
    "make",
    [
        lambda: framework(""),
        lambda: framework("a", chains_to=(("b", 0.1), ("b", 0.2))),
        lambda: framework("a", good_for=(("x", float("nan")),)),
        lambda: framework("a", triggers="scqa"),
    ],
    ids=["empty-id", "duplicate-target", "nan-weight", "bare-string-triggers"],
)
def test_invalid_records_are_refused(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises((ValueError, TypeError)):
        make()


def test_select_rejects_bad_arguments(registry: Registry) -> None:
    with pytest.raises(ValueError):
        registry.select(["scqa"], limit=0)
    with pytest.raises(TypeError):
        registry.select("scqa")


def test_query_parameters_must_match_the_declaration() -> None:
    check_params(q.GET_FRAMEWORK, {"id": "x"})
    with pytest.raises(ValueError, match="get_framework"):
        check_params(q.GET_FRAMEWORK, {"id": "x", "extra": 1})


def test_the_path_is_required_so_no_project_registry_is_opened_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``EmbeddedRegistry()`` once opened and wrote the working directory's
    # .mindrian/registry.lbug: a scratch registry in a test mutated the project's.
    project = tmp_path / "project"
    (project / ".mindrian").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.mindrian]\n", encoding="utf-8")
    monkeypatch.chdir(project)
    for arguments in ({}, {"read_only": True}, {"wait": 1.0}):
        with pytest.raises(TypeError, match="missing 1 required positional argument: 'path'"):
            EmbeddedRegistry(**arguments)  # type: ignore[call-arg, arg-type]
    with EmbeddedRegistry(None) as scratch:  # in memory, said so
        scratch.register_many(SIX)
        assert repr(scratch) == "EmbeddedRegistry('in-memory database')"
    assert list((project / ".mindrian").iterdir()) == []


def test_unopenable_path_is_a_graph_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(GraphError, match="cannot open embedded registry"):
        EmbeddedRegistry(blocker / "registry.lbug")


def test_every_dialect_rewrite_names_a_query_and_applies() -> None:
    for rewrite in EMBEDDED_REWRITES:
        query = q.ALL_QUERIES[rewrite.query]
        assert rewrite.why
        assert rewrite.old in query.text and rewrite.new not in query.text
        assert rewrite.new in embedded_text(query)
    rewritten = {r.query for r in EMBEDDED_REWRITES}
    for name, query in q.ALL_QUERIES.items():
        if name not in rewritten:
            assert embedded_text(query) == query.text, name


def test_records_keep_relationships_sorted() -> None:
    record = FrameworkRecord("a", "A", "operator", chains_to=(("z", 1), ("b", 0.5)))
    assert record.chains_to == (("b", 0.5), ("z", 1.0))


# --- usage (USED_BY -> Session) and free text -----------------------------------


def test_each_handoff_is_one_used_by_and_rerecording_only_updates_success(
    registry: Registry,
) -> None:
    assert registry.usage("csio") == Usage(0, 0)
    assert registry.record_usage("csio", "session-1", "handoff-1", success=False)
    assert registry.record_usage("csio", "session-1", "handoff-2", success=True)
    assert registry.record_usage("csio", "session-1", "handoff-1", success=True)
    assert registry.usage("csio") == Usage(2, 2)
    # A placeholder or an unknown id is never credited.
    assert not registry.record_usage("nowhere", "session-1", "handoff-3", success=True)
    assert registry.usage("nowhere") == Usage(0, 0)
    with pytest.raises(ValueError, match="session_id"):
        registry.record_usage("csio", "", "handoff-4", success=True)


def test_observed_success_moves_the_score_within_a_tenth(registry: Registry) -> None:
    # csio, minto and scenario tie at 0.6 for "scqa"; usage breaks the tie.
    for number in range(8):
        registry.record_usage("scenario", f"s{number}", f"ok-{number}", success=True)
    for number in range(2):
        registry.record_usage("csio", f"s{number}", f"bad-{number}", success=False)
    chosen = registry.select(["scqa"])
    assert [s.id for s in chosen] == ["scenario", "minto", "csio"]
    # 0.2 x ((8+1)/(8+2) - 0.5) = 0.08; 0.2 x ((0+1)/(2+2) - 0.5) = -0.05
    assert [s.score for s in chosen] == pytest.approx([0.68, 0.6, 0.55])


def test_unregistering_drops_the_usage_of_the_framework(registry: Registry) -> None:
    registry.record_usage("trending", "s1", "h1", success=True)
    assert registry.unregister("trending")
    assert registry.usage("trending") == Usage(0, 0)
    assert registry.get("trending") is None


def test_free_text_matches_triggers_and_problem_types_by_their_terms(
    registry: Registry,
) -> None:
    chosen = registry.rank_text("Our customers' jobs in a wicked market")
    # jtbd: its triggers customer and job match and its problem type market (GOOD_FOR 0.8);
    # csio and trending: only a problem type (wicked, market: 1.0 without a GOOD_FOR edge)
    # plus what their fields share with the sentence. pws has a GOOD_FOR to wicked but does
    # not list it among its problem types, so it is no candidate.
    assert [c.id for c in chosen] == ["jtbd", "csio", "trending"]
    assert [c.fit for c in chosen] == [0.8, 1.0, 1.0]
    for c in chosen:
        assert c.score == pytest.approx(round(c.relevance + 0.4 * c.fit, 6))
    assert registry.select_text("is it the one?") == ()


def test_a_read_only_open_of_an_older_file_says_how_to_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "old.lbug"
    database = ladybug.Database(str(path))
    connection = ladybug.Connection(database)
    for statement in EMBEDDED_SCHEMA[:4]:  # the tables before usage tracking
        connection.execute(statement)
    for statement in FORMAT_SCHEMA:  # a file of this format, from before those tables
        connection.execute(statement)
    connection.execute(
        "MERGE (m:MindrianRegistry {key: 'format'}) SET m.version = $v", {"v": FORMAT_VERSION}
    )
    connection.close()
    database.close()
    with pytest.raises(GraphError, match=r"predates tables Session, USED_BY; open it once"):
        EmbeddedRegistry(path, read_only=True)
    EmbeddedRegistry(path).close()  # a writable open adds them
    with EmbeddedRegistry(path, read_only=True) as upgraded:
        assert upgraded.usage("any") == Usage(0, 0)


def test_a_callers_query_runs_read_only_with_parameters(registry: Registry) -> None:
    rows = registry.read_cypher(
        "MATCH (f:Framework) WHERE f.id = $id RETURN f.id AS id, f.name AS name", {"id": "jtbd"}
    )
    assert rows == [{"id": "jtbd", "name": "Jtbd"}]
    # The transaction itself refuses a write that got past every check.
    with pytest.raises(GraphError):
        registry.read_cypher("MATCH (f:Framework) SET f.name = 'x' RETURN f.id")
    assert registry.get("jtbd") == by_id("jtbd")


# --- integrity and concurrency --------------------------------------------------------------


def test_a_zero_byte_file_is_refused_not_opened_as_an_empty_registry(tmp_path: Path) -> None:
    path = tmp_path / "registry.lbug"
    path.write_bytes(b"")
    for read_only in (True, False):
        with pytest.raises(RegistryDamaged, match=r"empty file.*mindrian graph rebuild"):
            EmbeddedRegistry(path, read_only=read_only)
    assert path.read_bytes() == b""  # the writable attempt did not initialise it


def test_a_database_without_the_format_marker_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "foreign.lbug"
    database = ladybug.Database(str(path))
    connection = ladybug.Connection(database)
    for statement in EMBEDDED_SCHEMA:
        connection.execute(statement)
    connection.close()
    database.close()
    with pytest.raises(
        RegistryDamaged, match=r"no format marker.*mindrian graph rebuild"
    ) as caught:
        EmbeddedRegistry(path)
    assert caught.value.code == "G012"


def test_a_new_database_carries_the_marker_and_reopens(tmp_path: Path) -> None:
    path = tmp_path / "new.lbug"
    EmbeddedRegistry(path).close()
    with EmbeddedRegistry(path, read_only=True) as reopened:
        assert reopened.counts().frameworks == 0


#: Holds the registry's writer lock until a line (or the end) comes on its stdin, or for
#: ``argv[2]`` seconds at most.
HOLD_WRITER = """
import select, sys
from mindrian.graph import EmbeddedRegistry
registry = EmbeddedRegistry(sys.argv[1])
print("held", flush=True)
select.select([sys.stdin], [], [], float(sys.argv[2]))
registry.close()
"""


def hold_writer(path: Path, seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_WRITER, str(path), str(seconds)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_readers_share_the_file_with_a_writer_in_another_process(tmp_path: Path) -> None:
    path = tmp_path / "registry.lbug"
    with EmbeddedRegistry(path) as registry:
        registry.register(
            FrameworkRecord(id="jtbd", name="Jtbd", type="operator", triggers=("job",))
        )
    holder = hold_writer(path, 30)
    try:
        for _ in range(3):  # two readers at once, and again, while the writer holds its lock
            with (
                EmbeddedRegistry(path, read_only=True) as one,
                EmbeddedRegistry(path, read_only=True) as two,
            ):
                assert [s.id for s in one.select(("job",))] == ["jtbd"]
                assert two.get("jtbd") is not None
    finally:
        holder.kill()
        holder.wait()


def test_a_writer_waits_for_the_lock_then_opens(tmp_path: Path) -> None:
    path = tmp_path / "registry.lbug"
    EmbeddedRegistry(path).close()
    holder = hold_writer(path, 120)
    told: list[str] = []

    def waiting(message: str) -> None:
        # The writer waits now: the holder lets go (not after a time the test might overrun).
        told.append(message)
        assert holder.stdin is not None
        holder.stdin.close()

    try:
        with EmbeddedRegistry(path, wait=60, on_wait=waiting) as registry:
            registry.register(FrameworkRecord(id="late", name="Late", type="operator"))
    finally:
        holder.kill()
        holder.wait()
    assert len(told) == 1 and "waiting up to 60 s" in told[0]


def test_a_writer_gives_up_after_its_bound(tmp_path: Path) -> None:
    path = tmp_path / "registry.lbug"
    EmbeddedRegistry(path).close()
    holder = hold_writer(path, 30)
    try:
        with pytest.raises(RegistryBusy, match=r"locked by another process \(waited 0.3 s\)"):
            EmbeddedRegistry(path, wait=0.3)
    finally:
        holder.kill()
        holder.wait()
