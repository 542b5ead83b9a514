"""A registry file's text index laid out for one sentence, read without opening the registry.

A one-shot ``mindrian select "a sentence"`` pays for everything it imports and reads: the
database engine (several times the interpreter's own start), the registry's revision, then
the whole kept index (:mod:`mindrian.graph.index_cache`). A sentence touches a dozen
terms. So beside the kept index, a read-only handle that ranked a sentence also writes the
same index as an SQLite file (``<cache>/routing-index/<digest>.quick.sqlite``, beside
the kept index of the same registry file, pruned with it) with one row per term (its idf
and its gains and losses per framework, as packed arrays), one per word whose stem token is
indexed too (the two lists of gains summed, which a sentence naming the word reads as one),
one per framework (id, name), the problem types by word, and the recorded usage; a one-shot
select reads only its sentence's rows (:func:`load_quick`) and ranks with the one formula
(:func:`mindrian.routing.score.rank_sentence`), bit for bit as the registry would.

It is keyed by the registry file's **signature** instead of its revision: the size, times,
inode and device of the database file and its write-ahead log, taken before the handle
opened the database (every write changes them, and a handle sees the state it opened
with). A signature is recorded only when both files were last modified
:data:`SETTLED_SECONDS` before it was taken, so a write in the same clock tick as the
signature cannot go unseen (the rule git applies to its index). The file also carries the
registry's path, the mindrian and Python versions and a digest of the ranking code
(:func:`stamp`). This module imports neither the registry nor the database engine. A file that does
not match, cannot be read or is damaged is ignored; the command then takes its usual path,
which writes a new one.

Chinese sentences need the CC-CEDICT dictionary to cut and gloss their words
(:mod:`mindrian.routing.glosses`; reading it takes about 0.4 s). Its headwords and senses are
written once per machine into ``<cache>/routing-glosses/<stamp>.sqlite`` when a quick index
is first kept, and looked up one word at a time.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
import sys
import time
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mindrian
from mindrian.cache import cache_dir, cache_path
from mindrian.routing import glosses, rank, score, terms
from mindrian.routing import text as text_module
from mindrian.routing.rank import RankedIndex
from mindrian.routing.score import RoutingSnapshot

__all__ = [
    "FORMAT",
    "SETTLED_SECONDS",
    "QuickIndex",
    "glossary_file",
    "holds",
    "load_quick",
    "quick_file",
    "signature",
    "stamp",
    "write_quick",
]

#: Bumped when the file's layout changes.
FORMAT = 2
#: A signature is trusted only when the files it describes were last modified this long
#: before it was taken.
SETTLED_SECONDS = 2.0
#: Suffix of a quick index; its name is that of the kept index of the same registry file.
SUFFIX = ".quick.sqlite"
_NAMESPACE = "routing-index"
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE framework (pos INTEGER PRIMARY KEY, id TEXT NOT NULL, name TEXT NOT NULL)",
    "CREATE TABLE term (term TEXT PRIMARY KEY, idf REAL, gain BLOB, loss BLOB)",
    "CREATE TABLE summed (word TEXT PRIMARY KEY, gain BLOB NOT NULL)",
    "CREATE TABLE problem (name TEXT PRIMARY KEY, words TEXT NOT NULL, at BLOB NOT NULL)",
    "CREATE TABLE problem_word (word TEXT NOT NULL, name TEXT NOT NULL)",
    "CREATE INDEX problem_by_word ON problem_word (word)",
    "CREATE TABLE usage (id TEXT PRIMARY KEY, pos INTEGER, uses INTEGER, successes INTEGER)",
)


@dataclass(frozen=True)
class QuickIndex:
    """What a one-shot selection ranks with, read from a quick index file."""

    snapshot: RoutingSnapshot
    """The text index, reading each term on demand, with the problem types a sentence can
    name (:meth:`for_sentence`) and no chains (a one-shot select names no previous)."""
    usage: Mapping[str, tuple[int, int]]
    """Recorded (uses, successes) per framework when it was written."""


def quick_file(database: Path) -> Path | None:
    """Where the quick index of the registry file ``database`` is kept; None when caching is
    off (``MINDRIAN_CACHE_DIR`` empty)."""
    return cache_path(cache_dir(_NAMESPACE), os.fsencode(database.resolve()), suffix=SUFFIX)


def stamp(database: Path, found: str) -> dict[str, str]:
    """What a quick index must have been written under to serve ``database`` with the
    signature ``found``: the signature, the registry's path and the code's stamp."""
    return {
        "format": str(FORMAT),
        "signature": found,
        "registry": os.fsdecode(os.fsencode(database.resolve())),
        "code": _code_stamp(),
    }


@functools.cache
def _code_stamp() -> str:
    """The mindrian and Python versions and a digest of the modules ranking reads through."""
    digest = hashlib.sha256()
    for module in (glosses, rank, score, terms, text_module, sys.modules[__name__]):
        source = Path(module.__file__ or "").read_bytes()
        digest.update(b"%d:" % len(source) + source)
    return f"{mindrian.__version__}:{sys.version}:{digest.hexdigest()}"


def signature(database: Path, now: float | None = None) -> str | None:
    """The signature of ``database`` and its write-ahead log, or None when it cannot be
    trusted (a file modified within :data:`SETTLED_SECONDS` of ``now``, or unreadable)."""
    taken = time.time() if now is None else now
    parts = []
    for path in (database, database.with_name(database.name + ".wal")):
        try:
            found = os.stat(path)
        except FileNotFoundError:
            parts.append("-")
            continue
        except OSError:
            return None
        if taken - found.st_mtime < SETTLED_SECONDS:
            return None
        parts.append(
            f"{found.st_dev}:{found.st_ino}:{found.st_size}:{found.st_mtime_ns}:{found.st_ctime_ns}"
        )
    return "|".join(parts)


def write_quick(
    file: Path,
    stamp: Mapping[str, Any],
    snapshot: RoutingSnapshot,
    usage: Mapping[str, tuple[int, int]],
    words: Mapping[str, str] | None,
) -> None:
    """Write ``snapshot`` and ``usage`` under ``stamp`` (signature, code, registry) to ``file``
    atomically (a temporary renamed over it); and the glossary beside it from ``words`` (the
    Chinese dictionary) when it is missing. A refusal of the file system is dropped: the
    quick index only saves time."""
    plain = snapshot.to_plain()
    index = plain["index"]
    temporary = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    try:
        temporary.unlink(missing_ok=True)
        with contextlib.closing(sqlite3.connect(temporary)) as db:
            for statement in _SCHEMA:
                db.execute(statement)
            meta = {
                "stamp": json.dumps(dict(stamp), sort_keys=True),
                "count": str(index["count"]),
                "written": json.dumps(index["written"], sort_keys=True),
                "ids_ascending": json.dumps(rank.ascending(index["ids"])),
            }
            db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
            db.executemany(
                "INSERT INTO framework VALUES (?, ?, ?)",
                (
                    (i, fid, name)
                    for i, (fid, name) in enumerate(zip(index["ids"], index["names"], strict=True))
                ),
            )
            gain, loss, idf = index["gain"], index["loss"], index["idf"]
            db.executemany(
                "INSERT INTO term VALUES (?, ?, ?, ?)",
                (
                    (t, idf.get(t), _packed(gain.get(t)), _packed(loss.get(t)))
                    for t in sorted(set(gain) | set(loss))
                ),
            )
            pairs = snapshot.index.word_pairs()
            db.executemany(
                "INSERT INTO summed VALUES (?, ?)",
                ((w, _packed(rank.summed_gains(gain[w], gain[pairs[w]]))) for w in sorted(pairs)),
            )
            for name, (problem_words, at) in sorted(plain["problem_types"].items()):
                db.execute(
                    "INSERT INTO problem VALUES (?, ?, ?)",
                    (name, json.dumps(list(problem_words)), _packed(at)),
                )
                db.executemany(
                    "INSERT INTO problem_word VALUES (?, ?)", ((w, name) for w in problem_words)
                )
            positions = snapshot.positions
            db.executemany(
                "INSERT INTO usage VALUES (?, ?, ?, ?)",
                ((fid, positions.get(fid), u, s) for fid, (u, s) in sorted(usage.items())),
            )
            db.commit()
        os.replace(temporary, file)
        if words is not None:
            _write_glossary(glossary_file(file.parent.parent), words)
    except (OSError, sqlite3.Error):
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)


def holds(file: Path, stamp: Mapping[str, Any]) -> bool:
    """Whether ``file`` is a quick index written under ``stamp`` (its head alone is read)."""
    try:
        with contextlib.closing(sqlite3.connect(f"{file.as_uri()}?mode=ro", uri=True)) as db:
            found = db.execute("SELECT value FROM meta WHERE key = 'stamp'").fetchone()
        return found is not None and json.loads(found[0]) == dict(stamp)
    except (sqlite3.Error, ValueError):
        return False


def load_quick(file: Path, stamp: Mapping[str, Any], text: str) -> QuickIndex | None:
    """The quick index in ``file`` if it was written under ``stamp``, ready to rank ``text``;
    None when it is absent, of another stamp or unreadable."""
    try:
        db = sqlite3.connect(f"{file.as_uri()}?mode=ro", uri=True)
    except (sqlite3.Error, ValueError):
        return None
    try:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        if json.loads(meta.get("stamp", "null")) != dict(stamp):
            db.close()
            return None
        return _quick(db, meta, text, file.parent.parent)
    except (sqlite3.Error, ValueError, KeyError, TypeError):
        db.close()
        return None


def _quick(db: sqlite3.Connection, meta: Mapping[str, str], text: str, cache: Path) -> QuickIndex:
    terms = _Terms(db)
    glossary = glossary_file(cache)
    words = _Words(glossary) if glossary.is_file() else None
    index = RankedIndex.from_lookups(
        _Column(db, "id"),
        _Column(db, "name"),
        _View(terms, 1),
        _View(terms, 2),
        _View(terms, 0),
        int(meta["count"]),
        json.loads(meta["written"]),
        words,
        json.loads(meta["ids_ascending"]) is True,
        _Summed(db),
    )
    usage: dict[str, tuple[int, int]] = {}
    positions: dict[str, int] = {}
    for fid, pos, uses, successes in db.execute("SELECT id, pos, uses, successes FROM usage"):
        usage[fid] = (int(uses), int(successes))
        if pos is not None:
            positions[fid] = int(pos)
    snapshot = RoutingSnapshot((0, ""), index, _problems(db, text), positions, {})
    return QuickIndex(snapshot, usage)


def _problems(
    db: sqlite3.Connection, text: str
) -> dict[str, tuple[frozenset[str], Mapping[int, float]]]:
    """The problem types whose every word is in ``text``: the only ones a sentence with no
    problem type given can name (:meth:`RoutingSnapshot.fits`)."""
    sentence = sorted(text_module.stemmed(text))
    if not sentence:
        return {}
    marks = ",".join("?" * len(sentence))
    rows = db.execute(
        "SELECT name, words, at FROM problem WHERE name IN "
        f"(SELECT name FROM problem_word WHERE word IN ({marks}))",
        sentence,
    ).fetchall()
    found: dict[str, tuple[frozenset[str], Mapping[int, float]]] = {}
    for name, problem_words, at in rows:
        held = frozenset(json.loads(problem_words))
        if held <= set(sentence):
            found[name] = (held, _unpacked(at))
    return found


def glossary_file(cache: Path) -> Path:
    """Where the dictionary's headwords and senses are kept for this code and dictionary."""
    source = Path(glosses.__file__ or "").read_bytes()
    return cache / "routing-glosses" / (hashlib.sha256(source).hexdigest()[:32] + ".sqlite")


def _write_glossary(file: Path, words: Mapping[str, str]) -> None:
    if file.is_file():
        return
    file.parent.mkdir(parents=True, exist_ok=True)
    temporary = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    temporary.unlink(missing_ok=True)
    with contextlib.closing(sqlite3.connect(temporary)) as db:
        db.execute("CREATE TABLE word (word TEXT PRIMARY KEY, senses TEXT NOT NULL)")
        db.executemany("INSERT INTO word VALUES (?, ?)", sorted(words.items()))
        db.commit()
    os.replace(temporary, file)


def _packed(postings: Mapping[int, float] | None) -> bytes | None:
    """Positions then values, as native int32 and float64 arrays (exact doubles)."""
    if postings is None:
        return None
    return array("i", postings.keys()).tobytes() + array("d", postings.values()).tobytes()


def _unpacked(blob: bytes | None) -> dict[int, float]:
    if not blob:
        return {}
    half = len(blob) // 12 * 4
    positions, values = array("i"), array("d")
    positions.frombytes(blob[:half])
    values.frombytes(blob[half:])
    return dict(zip(positions, values, strict=True))


class _Terms:
    """The term rows read so far: [idf, gains, losses], None for a term not held; a list of
    gains or losses stays packed (bytes, or None) until it is read (a word whose summed list
    is kept is ranked without unpacking its own)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._rows: dict[str, list[Any] | None] = {}

    def row(self, term: str) -> list[Any] | None:
        if term not in self._rows:
            found = self._db.execute(
                "SELECT idf, gain, loss FROM term WHERE term = ?", (term,)
            ).fetchone()
            self._rows[term] = None if found is None else list(found)
        return self._rows[term]

    def value(self, term: str, column: int) -> Any:
        """The idf (0), gains (1) or losses (2) of ``term``, unpacked on first read; None when
        the row does not hold it (an empty list for a packed one held empty)."""
        row = self.row(term)
        if row is None:
            return None
        value = row[column]
        if column and isinstance(value, bytes):
            value = row[column] = _unpacked(value)
        return value

    def all_terms(self) -> list[str]:
        return [t for (t,) in self._db.execute("SELECT term FROM term ORDER BY term")]


class _View(Mapping[str, Any]):
    """One column of the term rows as a mapping: idf (0), gains (1) or losses (2); a term
    is in it when its row holds that column."""

    def __init__(self, terms: _Terms, column: int) -> None:
        self._terms, self._column = terms, column

    def __getitem__(self, term: str) -> Any:
        value = self._terms.value(term, self._column)
        if value is None or (self._column and not value):
            raise KeyError(term)
        return value

    def __contains__(self, term: object) -> bool:
        # What __getitem__ would find, without unpacking a list (bytes are empty when it is).
        row = self._terms.row(term) if isinstance(term, str) else None
        if row is None or row[self._column] is None:
            return False
        return not self._column or bool(row[self._column])

    def __iter__(self) -> Iterator[str]:
        return iter([t for t in self._terms.all_terms() if t in self])

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Summed(Mapping[str, Mapping[int, float]]):
    """The kept sums of a word's gains and its stem token's (:func:`rank.summed_gains`), read
    one word at a time."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __getitem__(self, word: str) -> dict[int, float]:
        found = self._db.execute("SELECT gain FROM summed WHERE word = ?", (word,)).fetchone()
        if found is None:
            raise KeyError(word)
        return _unpacked(found[0])

    def __iter__(self) -> Iterator[str]:
        return iter([w for (w,) in self._db.execute("SELECT word FROM summed ORDER BY word")])

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM summed").fetchone()[0])


class _Column(Sequence[str]):
    """Framework ids or names by position: a few read one row at a time (ranking reads the
    first candidates'), then the whole column at once (when many candidates tie and their
    ids break the tie)."""

    #: Rows read one at a time before the whole column is read.
    ONE_BY_ONE = 32

    def __init__(self, db: sqlite3.Connection, column: str) -> None:
        self._db, self._column = db, column
        self._read: list[str] | None = None
        self._some: dict[int, str] = {}

    def _values(self) -> list[str]:
        if self._read is None:
            query = f"SELECT {self._column} FROM framework ORDER BY pos"
            self._read = [str(value) for (value,) in self._db.execute(query)]
        return self._read

    def __getitem__(self, position: int) -> str:  # type: ignore[override]
        if self._read is not None or position < 0 or len(self._some) >= self.ONE_BY_ONE:
            return self._values()[position]
        if position not in self._some:
            query = f"SELECT {self._column} FROM framework WHERE pos = ?"
            found = self._db.execute(query, (position,)).fetchone()
            if found is None:  # past the end: the list raises IndexError
                return self._values()[position]
            self._some[position] = str(found[0])
        return self._some[position]

    def __len__(self) -> int:
        return len(self._values())


class _Words(Mapping[str, str]):
    """The glossary's headwords and senses, looked up one word at a time."""

    def __init__(self, file: Path) -> None:
        self._db = sqlite3.connect(f"{file.as_uri()}?mode=ro", uri=True)
        self._read: dict[str, str | None] = {}

    def __getitem__(self, word: str) -> str:
        if word not in self._read:
            found = self._db.execute("SELECT senses FROM word WHERE word = ?", (word,)).fetchone()
            self._read[word] = None if found is None else str(found[0])
        value = self._read[word]
        if value is None:
            raise KeyError(word)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter([w for (w,) in self._db.execute("SELECT word FROM word ORDER BY word")])

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM word").fetchone()[0])
