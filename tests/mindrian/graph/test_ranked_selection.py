"""Ranked free-text selection (issue 23): tokens, BM25F, negative clauses, the one formula,
the cached index, ``select --eval`` and ``select --explain``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import ladybug
import pytest

from builder.graph.route_eval import read_evals, run_evals
from builder.pipeline.errors import UsageError
from mindrian.graph import EmbeddedRegistry, FrameworkRecord, Selection
from mindrian.graph.dialect import EMBEDDED_SCHEMA
from mindrian.graph.embedded import FORMAT_SCHEMA, FORMAT_VERSION
from mindrian.graph.errors import GraphError
from mindrian.routing.rank import RankedIndex, RoutingDocument, negative_clauses
from mindrian.routing.score import CONFIDENT_AT, confidence
from mindrian.routing.text import prose, stem, stemmed, tokens


def test_cjk_runs_become_bigrams_and_latin_words_are_stemmed() -> None:
    assert tokens("帮我写单元测试") == ["帮我", "我写", "写单", "单元", "元测", "测试"]
    # A Latin word gives its singular and its marked stem: exact forms match on both.
    assert tokens("Testing the tests, TESTED!") == [
        *("testing", "~test"),
        *("test", "~test"),
        *("tested", "~test"),
    ]
    assert tokens("\uff34\uff25\uff33\uff34") == ["test", "~test"]  # NFKC folds fullwidth
    assert tokens("property-based_testing") == [
        *("property", "~property"),
        *("based", "~bas"),
        *("testing", "~test"),
    ]
    assert tokens("한국어 café") == ["한국", "국어", "café"]


def test_a_problem_type_is_named_by_the_stems_of_its_words() -> None:
    assert stemmed("testing") == {"~test"}
    assert stemmed("unit testing") <= stemmed("my unit tests keep failing")
    assert stemmed("单元测试") == {"单元", "元测", "测试"}


def test_a_term_is_weighed_among_the_frameworks_written_in_its_script() -> None:
    index = RankedIndex(
        [
            RoutingDocument("review", "review", "Review pull requests."),
            RoutingDocument("sql", "sql", "Review SQL migrations."),
            RoutingDocument("notes", "notes", "Write release notes."),
            RoutingDocument("sprint", "sprint", "Plan a sprint."),
            RoutingDocument("tidy", "tidy", "帮我整理文档"),
            RoutingDocument("unit", "unit", "帮我写单元测试"),
        ]
    )
    # Two of the six frameworks hold Han tokens: a bigram both hold is common there,
    # however rare it is among all six.
    assert index.idf("帮我") == pytest.approx(math.log(1 + 0.5 / 2.5))
    assert index.idf("单元") == pytest.approx(math.log(1 + 1.5 / 1.5))
    assert index.idf("从未") == pytest.approx(math.log(1 + 2.5 / 0.5))  # unseen Han
    assert index.idf("sprint") == pytest.approx(math.log(1 + 5.5 / 1.5))
    assert index.idf("never") == pytest.approx(math.log(1 + 6.5 / 0.5))
    # No framework is written in Thai: its tokens are weighed among all six.
    assert index.idf("ทดสอบ") == pytest.approx(math.log(1 + 6.5 / 0.5))


def test_stem_leaves_short_and_non_latin_words_alone() -> None:
    assert stem("gas") == "gas"
    assert stem("analysis") == "analysis"
    assert stem("validation") == stem("validate") == stem("validating")
    assert stem("café") == "café"


def test_negative_clauses_are_cut_at_the_cue() -> None:
    positive, negative = negative_clauses(
        "Reviews pull requests. Not for SQL migrations; use db-review instead. 不用于调研。"
    )
    assert "Reviews pull requests." in positive
    assert "Not for SQL migrations;" in negative
    assert "instead" in negative
    assert "不用于调研" in negative


def test_prose_leaves_fenced_code_out_and_keeps_headings() -> None:
    body = (
        "# When to use\nA flaky test fails.\n```bash\npytest --lf\n```\n"
        "~~~~\n```\nstill code\n~~~~\nAfter.\n```\nunclosed runs to the end"
    )
    assert prose(body) == "# When to use\nA flaky test fails.\nAfter."


def test_the_body_is_a_low_weight_field_that_explain_names() -> None:
    index = RankedIndex(
        [
            RoutingDocument(
                "tidy", "tidy", "Tidy a repository.", body="Use it when tests are flaky."
            ),
            RoutingDocument("flaky", "flaky", "Find and fix flaky tests."),
            RoutingDocument("notes", "notes", "Write release notes."),
        ]
    )
    scores = index.relevance("my tests are flaky")
    assert 0 < scores[0] < scores[1]  # the body finds it; the description counts more
    assert [(m.term, m.fields) for m in index.explain(0, "flaky")] == [
        ("flaky", (("body", 1),)),
        ("~flaky", (("body", 1),)),
    ]


def test_the_registry_stores_the_body_and_registry_yaml_does_not() -> None:
    flaky = FrameworkRecord("flaky", "Flaky", "operator", "Tidy a repo.", body="Tests are flaky.")
    notes = FrameworkRecord(
        "notes", "Notes", "operator", "Release notes.", chains_to=(("flaky", 1),)
    )
    with EmbeddedRegistry(None) as registry:
        registry.register_many([flaky, notes])
        assert [s.id for s in registry.select_text("my flaky tests")] == ["flaky"]
        assert (registry.node_properties("flaky") or {})["body"] == "Tests are flaky."
        assert registry.get("flaky") == flaky
        assert registry.export() == (flaky, notes)
        assert "body" not in flaky.to_plain()  # so not in registry.yaml
        registry.unregister("flaky")  # a placeholder now: notes still chains to it
        assert (registry.node_properties("flaky") or {})["body"] is None
        assert registry.select_text("my flaky tests") == ()


def test_a_file_from_before_the_body_is_upgraded_by_a_writable_open(tmp_path: Path) -> None:
    path = tmp_path / "old.lbug"
    database = ladybug.Database(str(path))
    connection = ladybug.Connection(database)
    for statement in (*EMBEDDED_SCHEMA[:-1], *FORMAT_SCHEMA):  # every table, no body column
        connection.execute(statement)
    connection.execute(
        "MERGE (m:MindrianRegistry {key: 'format'}) SET m.version = $v", {"v": FORMAT_VERSION}
    )
    connection.close()
    database.close()
    with pytest.raises(GraphError, match="predates the Framework column body; open it once"):
        EmbeddedRegistry(path, read_only=True)
    with EmbeddedRegistry(path) as writable:
        writable.register(FrameworkRecord("flaky", "Flaky", "operator", body="Tests are flaky."))
    with EmbeddedRegistry(path, read_only=True) as upgraded:
        assert [s.id for s in upgraded.select_text("flaky tests")] == ["flaky"]


@pytest.mark.parametrize(
    "sentence",
    [
        "my tests are flaky",
        "testing the tests I tested",  # three words, one stem: it counts once
        "test testing",  # the second word's stem is read with the first word
        "review the SQL migrations I tested",  # a negative clause takes away
        "帮我写单元测试 flaky tests",
    ],
)
def test_a_word_reads_its_singular_and_stem_as_one_list_with_the_same_score(
    sentence: str,
) -> None:
    index = RankedIndex(
        [
            RoutingDocument("tidy", "tidy", "Tidy a repository.", body="When tests are flaky."),
            RoutingDocument("flaky", "flaky", "Find and fix flaky tests; testing made calm."),
            RoutingDocument("unit", "unit", "写单元测试 for a function once it is tested."),
            RoutingDocument("code", "code", "Review code. Not for SQL migrations or tests."),
        ]
    )
    raw, total = index.raw_scores(sentence)
    assert raw
    for i, value in raw.items():
        # What each distinct term adds, term by term, as --explain lists them.
        assert value == pytest.approx(sum(m.contribution for m in index.explain(i, sentence)))
    # Bit for bit again once the words' lists are kept, and from a restored index.
    assert index.raw_scores(sentence) == (raw, total)
    assert RankedIndex.from_plain(index.to_plain()).raw_scores(sentence) == (raw, total)


def _index() -> RankedIndex:
    return RankedIndex(
        [
            RoutingDocument("code-review", "code-review", "Review code. Not for SQL migrations."),
            RoutingDocument("sql-review", "sql-review", "Review SQL migrations and schemas."),
            RoutingDocument("unit-tests", "unit-tests", "写单元测试 for a function."),
        ]
    )


def test_a_query_matching_a_negative_clause_counts_against_the_framework() -> None:
    scores = _index().relevance("review my SQL migrations")
    assert scores[1] > scores.get(0, 0.0)
    # Without its negative clause, code-review would share "review" and more.
    assert 0 not in scores or scores[0] < scores[1] / 2


def test_relevance_is_calibrated_and_finds_chinese() -> None:
    scores = _index().relevance("帮我写个单元测试")
    assert list(scores) == [2]
    assert 0.0 < scores[2] <= 1.0
    assert _index().relevance("nothing shared") == {}


def _records() -> list[FrameworkRecord]:
    return [
        FrameworkRecord(
            "code-review",
            "code-review",
            "operator",
            "Review code changes before merging. Not for SQL migrations.",
            triggers=("review",),
        ),
        FrameworkRecord(
            "sql-review",
            "sql-review",
            "operator",
            "Review SQL migrations and database schemas.",
            triggers=("migration",),
            problem_types=("schema drift",),
        ),
        FrameworkRecord(
            "release-notes",
            "release-notes",
            "operator",
            "Write release notes from merged changes.",
            chains_to=(("code-review", 0.5),),
        ),
    ]


@pytest.fixture
def registry() -> EmbeddedRegistry:
    reg = EmbeddedRegistry(None)
    reg.register_many(_records())
    return reg


def test_sentence_selection_uses_text_negative_evidence_and_one_formula(
    registry: EmbeddedRegistry,
) -> None:
    ranked = registry.rank_text("please review these SQL migrations")
    # code-review shares "review" but says it is not for SQL migrations: no candidate.
    assert [c.id for c in ranked] == ["sql-review"]
    assert registry.rank_text("please review this code")[0].id == "code-review"
    for c in ranked:
        expected = c.relevance + 0.4 * c.fit + 0.3 * c.chained + 0.2 * c.usage
        assert c.score == pytest.approx(round(expected, 6))
    assert registry.select_text("zzz qqq") == ()


def test_problem_type_named_in_full_and_chaining_add_to_the_text(
    registry: EmbeddedRegistry,
) -> None:
    fit = registry.rank_text("we have schema drift")
    assert fit[0].id == "sql-review" and fit[0].fit == 1.0
    plain = {c.id: c.score for c in registry.rank_text("review the changes")}
    chained = {
        c.id: c.score for c in registry.rank_text("review the changes", previous=["release-notes"])
    }
    assert chained["code-review"] == pytest.approx(plain["code-review"] + 0.15)


def test_the_cached_index_follows_registrations_and_usage(registry: EmbeddedRegistry) -> None:
    before = registry.select_text("deploy kubernetes clusters")
    registry.register(
        FrameworkRecord("k8s", "k8s", "operator", "Deploy Kubernetes clusters safely.")
    )
    assert registry.select_text("deploy kubernetes clusters")[0].id == "k8s"
    assert before == ()
    score = registry.select_text("deploy kubernetes clusters")[0].score
    registry.record_usage("k8s", "s1", "h1", success=True)
    assert registry.select_text("deploy kubernetes clusters")[0].score == pytest.approx(
        score + 0.2 * (2 / 3 - 0.5), abs=1e-6
    )


def test_selection_is_deterministic_across_registries() -> None:
    def run() -> tuple[Selection, ...]:
        with EmbeddedRegistry(None) as reg:
            reg.register_many(reversed(_records()))
            return reg.select_text("review merged changes", limit=3)

    assert run() == run()


# --- trigger evals -----------------------------------------------------------------


@pytest.mark.parametrize(
    "document",
    [
        [{"query": "review my SQL migrations", "should_trigger": True}],
        {"evals": [{"prompt": "review my SQL migrations", "should_trigger": True}]},
        {"cases": [{"query": "review my SQL migrations", "should_trigger": True}]},
    ],
    ids=["array", "evals-prompt", "cases"],
)
def test_eval_formats_in_the_wild_are_read(tmp_path: Path, document: object) -> None:
    path = tmp_path / "sql-review" / "evals" / "trigger-eval.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    (case,) = read_evals(tmp_path)
    assert (case.skill, case.query, case.should_trigger) == (
        "sql-review",
        "review my SQL migrations",
        True,
    )


def test_an_eval_file_without_a_skill_or_cases_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "loose.json"
    path.write_text('[{"query": "x", "should_trigger": true}]', encoding="utf-8")
    with pytest.raises(UsageError, match="names no skill"):
        read_evals(path)
    path.write_text('{"skill_name": "a", "items": []}', encoding="utf-8")
    with pytest.raises(UsageError, match="expected a list"):
        read_evals(path)


def test_rates_count_hits_abstentions_and_false_triggers(
    tmp_path: Path, registry: EmbeddedRegistry
) -> None:
    path = tmp_path / "e.json"
    cases = [
        {"query": "review these SQL migrations", "should_trigger": True},
        {"query": "zzz", "should_trigger": True},
        {"query": "review SQL schemas", "should_trigger": False},
        {"query": "write release notes", "should_trigger": False},
    ]
    path.write_text(json.dumps({"skill_name": "sql-review", "cases": cases}), encoding="utf-8")
    report = run_evals(read_evals(path), lambda q: registry.select_text(q, limit=3))
    plain = report.plain()["overall"]
    assert (plain["top1"], plain["abstention"], plain["false_trigger"]) == (0.5, 0.5, 0.5)
    assert [m.query for m in report.worst] == ["zzz"]
    assert "overall" in report.table()


def test_only_the_first_carries_a_confidence_calibrated_on_its_lead(
    registry: EmbeddedRegistry,
) -> None:
    # sql-review alone holds "sql" and "migrations": it leads every other candidate widely.
    alone = registry.rank_text("please review these SQL migrations")
    assert alone[0].confident and alone[0].confidence == confidence(alone[0].relevance)
    # Two frameworks about reviewing: the first leads by little, so it is no answer to act on.
    close = registry.rank_text("review the changes")
    lead = close[0].relevance - close[1].relevance
    assert close[0].confidence == confidence(lead) and not close[0].confident
    assert all(c.confidence is None and not c.confident for c in (*alone[1:], *close[1:]))
    assert registry.select_text("review the changes")[0].confidence == close[0].confidence
    assert confidence(0.0) < 0.5 < confidence(0.2) < CONFIDENT_AT <= confidence(0.4) < 1.0


def _answer(skill: str, confidence: float | None) -> tuple[Selection, ...]:
    return (Selection(skill, skill, 1.0, confidence), Selection("other", "other", 0.5))


def test_the_confident_mark_is_scored_by_precision_coverage_and_reliability(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.json"
    queries = ["right sure", "wrong sure", "right unsure", "near-miss sure", "near-miss other"]
    cases = [{"query": q, "should_trigger": not q.startswith("near")} for q in queries]
    path.write_text(json.dumps({"skill_name": "mine", "cases": cases}), encoding="utf-8")
    answers = {
        "right sure": _answer("mine", 0.95),
        "wrong sure": _answer("yours", 0.92),
        "right unsure": _answer("mine", 0.55),
        "near-miss sure": _answer("mine", 0.97),
        # Another skill answered for a near-miss: not labelled either way.
        "near-miss other": _answer("yours", 0.99),
    }
    report = run_evals(read_evals(path), answers.__getitem__)
    plain = report.plain()["overall"]
    # Confident: one right, one wrong skill, one near-miss triggered: 1 of 3 right; 2 of the
    # 3 should-select queries were answered confidently.
    assert plain["confident_precision"] == round(1 / 3, 6)
    assert plain["confident_coverage"] == round(2 / 3, 6)
    assert report.reliability() == (
        (0.5, 0.6, 1, 0.55, 1.0),
        (0.9, 1.0, 3, round((0.95 + 0.92 + 0.97) / 3, 6), round(1 / 3, 6)),
    )
    assert [r["answers"] for r in report.plain()["reliability"]] == [1, 3]
    assert "confident first answers: precision 33.3%, coverage 66.7%" in report.table()
