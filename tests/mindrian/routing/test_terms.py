"""Term extraction: the normalisation free-text selection and trigger inference share."""

from __future__ import annotations

import pytest

from mindrian.routing import STOP_WORDS, extract_terms, normalise_term


def test_a_question_keeps_only_its_content_words() -> None:
    assert extract_terms("Is my startup idea worth building?") == (
        "startup",
        "idea",
        "worth",
        "building",
    )


def test_case_and_compatibility_forms_fold_together() -> None:
    assert extract_terms("STARTUP \uff33tartup startup") == ("startup",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pre-mortem", ("pre-mortem",)),
        ("pre\u2013mortem", ("pre-mortem",)),
        ("pre\u2011mortem", ("pre-mortem",)),
        ("go no-go", ("no-go",)),
        ("--risks--", ("risk",)),
    ],
)
def test_dashes_are_one_hyphen_and_compounds_stay_whole(
    text: str, expected: tuple[str, ...]
) -> None:
    assert extract_terms(text) == expected


@pytest.mark.parametrize(
    ("word", "singular"),
    [
        ("companies", "company"),
        ("risks", "risk"),
        ("customers", "customer"),
        ("processes", "process"),
        ("boxes", "box"),
        ("pitches", "pitch"),
        ("wishes", "wish"),
        ("business", "business"),
        ("analysis", "analysis"),
        ("status", "status"),
        ("famous", "famous"),
        ("pws", "pws"),
        ("gas", "gas"),
        ("ties", "tie"),
        ("stress-tests", "stress-test"),
    ],
)
def test_obvious_plurals_become_singular(word: str, singular: str) -> None:
    assert normalise_term(word) == singular


def test_possessives_and_apostrophes() -> None:
    assert extract_terms("the founder\u2019s market; don't guess") == ("founder", "market", "guess")


def test_contractions_are_stop_words_once_their_apostrophe_is_gone() -> None:
    # Chat-style queries say "I'm", "can't", "we're": none of them names a framework.
    assert extract_terms("I'm sure we can't ship; it isn't ready and they\u2019re late") == (
        "sure",
        "ship",
        "ready",
        "late",
    )


def test_stop_words_single_letters_and_numbers_are_dropped() -> None:
    assert extract_terms("a 2024 plan for the q3 x launch") == ("plan", "q3", "launch")
    assert {"is", "my", "should", "this", "what"} <= STOP_WORDS


def test_repeats_keep_their_first_position() -> None:
    assert extract_terms("risks, market, Risk, markets") == ("risk", "market")


def test_the_cap_keeps_the_first_terms() -> None:
    text = "alpha beta gamma delta epsilon"
    assert extract_terms(text, limit=3) == ("alpha", "beta", "gamma")
    with pytest.raises(ValueError, match="at least 1"):
        extract_terms(text, limit=0)


def test_same_text_same_terms_and_nothing_from_nothing() -> None:
    text = "Validate whether customers pay for churn reduction"
    assert (
        extract_terms(text)
        == extract_terms(text)
        == (
            "validate",
            "customer",
            "pay",
            "churn",
            "reduction",
        )
    )
    assert extract_terms("") == ()
    assert extract_terms("is it the one?") == ()


def test_a_stop_word_is_not_kept_as_its_singular() -> None:
    # "does" is a stop-word; singularised first, it would survive as "doe".
    assert extract_terms("it does what it says") == ("say",)
    assert extract_terms("Does one thing well") == ("thing", "well")
