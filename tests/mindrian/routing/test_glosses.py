"""English glosses of Chinese words (CC-CEDICT): how a Chinese sentence reaches an
English-only framework, and only when no framework holds the Chinese word itself."""

from __future__ import annotations

import pytest

from builder.graph.explain import explain_text
from mindrian.routing.glosses import chinese_words, gloss
from mindrian.routing.rank import GLOSS_WEIGHT, RankedIndex, RoutingDocument
from mindrian.routing.score import RoutingSnapshot, rank_sentence


def test_han_runs_are_cut_into_dictionary_words() -> None:
    # 帮我 ("help me") is two words, neither a headword of two characters or more.
    assert chinese_words("明天面试，帮我看看简历") == ["明天", "面试", "看看", "简历"]  # noqa: RUF001
    assert chinese_words("面試") == ["面試"]  # traditional headwords too
    assert chinese_words("review my pull request") == []


def test_a_gloss_is_the_tokens_of_the_first_senses_without_notes() -> None:
    assert "interview" in gloss("面试")
    assert "candidate" not in gloss("面试")  # "(as a candidate)" is a note
    assert "curriculum" in gloss("简历")
    assert gloss("不是一个词") == []


DOCUMENTS = (
    RoutingDocument("interview-coach", "interview coach", "Prepare for a job interview."),
    RoutingDocument("release-notes", "release notes", "Write release notes."),
    RoutingDocument("unit-tests", "单元测试", "帮我写单元测试 for a function."),
)


def _index() -> RankedIndex:
    return RankedIndex(DOCUMENTS)


def test_a_chinese_sentence_reaches_an_english_only_framework_through_glosses() -> None:
    index = _index()
    query = index.query("明天面试")
    assert query["面试"] == 1.0  # the bigram itself, as for any sentence
    assert query["interview"] == pytest.approx(GLOSS_WEIGHT)
    assert list(index.relevance("明天面试")) == [0]
    matches = index.explain(0, "明天面试")
    assert [(m.term, m.weight) for m in matches] == [
        ("interview", GLOSS_WEIGHT),
        ("~interview", GLOSS_WEIGHT),
    ]


def test_a_chinese_word_some_framework_holds_is_not_glossed() -> None:
    query = _index().query("帮我写单元测试")
    assert set(query.values()) == {1.0}
    assert "unit" not in query


def test_explain_marks_a_gloss() -> None:
    snapshot = RoutingSnapshot.build((3, ""), DOCUMENTS, {}, {})
    ranked = rank_sentence(snapshot, "明天面试", (), (), {}, 3, explain=True)
    assert "'interview' (gloss of a Chinese word, x0.1): idf" in explain_text(ranked)
