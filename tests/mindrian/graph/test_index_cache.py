"""The text index kept on disk between processes: the same ranking bit for bit, ignored when
stale or damaged (mindrian.graph.index_cache)."""

from __future__ import annotations

import hashlib
import os
import pickle
import struct
from pathlib import Path

import pytest

from mindrian.graph import EmbeddedRegistry, FrameworkRecord, load_registry_yaml
from mindrian.graph.index_cache import index_cache_file, load_snapshot
from mindrian.graph.registry_yaml import with_routing_bodies
from mindrian.routing.score import RankedCandidate, RoutingSnapshot

GENERATED = Path(__file__).resolve().parents[3] / "generated" / "registry.yaml"
#: Sentences, problem types and previous frameworks: relevance, fit and chaining all count.
QUERIES = (
    ("is my startup idea worth building", (), ()),
    ("structure the argument of my report top-down", ("communication",), ("pws-validation",)),
    ("what job does the customer hire us for", (), ("larry",)),
    ("critique this plan and its risks", ("decision",), ("deep-research", "jtbd")),
    ("find sources on EV charging", (), ()),
    # A Chinese word some framework holds is not glossed, one none holds is: both indexes
    # must tell them apart the same way.
    ("帮我写单元测试 再做个面试准备", (), ()),
)
Ranking = tuple[tuple[RankedCandidate, ...], ...]
#: How a kept file begins; the SHA-256 of the rest follows.
_HEAD = b"mindrian routing index\n"


def records() -> tuple[FrameworkRecord, ...]:
    """The project's frameworks with their bodies, plus some that differ only a little."""
    real = with_routing_bodies(load_registry_yaml(GENERATED), GENERATED)
    extra = tuple(
        FrameworkRecord(
            id=f"extra-{i}",
            name=f"Extra {i}",
            type="operator",
            description=f"Checks plans of kind {i}. Not for startup ideas.",
            triggers=(f"kind {i}", "plan"),
            problem_types=("decision",),
            body="Use it when a plan has gaps." * (i % 3),
            good_for=(("decision", 0.1 * i),),
            chains_to=(("jtbd", 0.5),),
        )
        for i in range(1, 8)
    )
    chinese = FrameworkRecord(
        id="unit-test-coach",
        name="单元测试教练",
        type="operator",
        description="帮助开发者为函数编写单元测试。",
        triggers=("单元测试",),
    )
    return (*real, *extra, chinese)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def database(tmp_path: Path, cache: Path) -> Path:
    path = tmp_path / "registry.lbug"
    with EmbeddedRegistry(path) as registry:
        registry.register_many(records())
    return path


def ranking(path: Path) -> Ranking:
    """Every query's candidates, every part of each score, through a new read-only handle."""
    with EmbeddedRegistry(path, read_only=True) as registry:
        return tuple(registry.rank_text(t, p, b, limit=20) for t, p, b in QUERIES)


def fresh(path: Path, monkeypatch: pytest.MonkeyPatch) -> Ranking:
    """The ranking with no cache at all: the index built from the registry."""
    with monkeypatch.context() as patch:
        patch.setenv("MINDRIAN_CACHE_DIR", "")
        return ranking(path)


def kept(path: Path) -> Path:
    found = index_cache_file(path)
    assert found is not None
    return found


def test_a_kept_index_ranks_as_a_fresh_one_bit_for_bit(
    database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = fresh(database, monkeypatch)
    assert not kept(database).exists()
    assert ranking(database) == expected  # builds and keeps it
    assert kept(database).is_file()
    with monkeypatch.context() as patch:
        patch.setattr(RoutingSnapshot, "build", _refuse)
        assert ranking(database) == expected  # reads it
    assert all(expected) and expected[0][0].id == "pws-validation"


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # torn
        lambda data: b"",
        lambda data: b"not a cache file at all",
    ],
    ids=["truncated", "empty", "foreign"],
)
def test_a_damaged_cache_file_is_ignored_and_replaced(
    database: Path, monkeypatch: pytest.MonkeyPatch, damage
) -> None:
    expected = ranking(database)
    file = kept(database)
    file.write_bytes(damage(file.read_bytes()))
    assert ranking(database) == expected
    with monkeypatch.context() as patch:
        patch.setattr(RoutingSnapshot, "build", _refuse)
        assert ranking(database) == expected  # rewritten whole


def test_a_stale_revision_is_ignored(database: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = ranking(database)
    old = kept(database).read_bytes()
    newcomer = FrameworkRecord(
        id="startup-check",
        name="Startup check",
        type="operator",
        description="Is my startup idea worth building? A quick check of the idea.",
        triggers=("startup idea",),
    )
    with EmbeddedRegistry(database) as registry:
        registry.register(newcomer)
    after = ranking(database)
    assert after != before and after[0][0].id == "startup-check"
    assert after == fresh(database, monkeypatch)
    assert kept(database).read_bytes() != old

    # Unregistering it brings the earlier frameworks back, at a revision of its own.
    with EmbeddedRegistry(database) as registry:
        registry.unregister("startup-check")
    assert ranking(database) == fresh(database, monkeypatch) == before

    # An older framework leaves: the latest registration time stays, the count tells.
    with EmbeddedRegistry(database) as registry:
        registry.unregister("pws-validation")
    gone = ranking(database)
    assert gone == fresh(database, monkeypatch) != before
    assert "pws-validation" not in {c.id for candidates in gone for c in candidates}


def test_an_index_kept_by_other_ranking_code_is_ignored(
    database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = ranking(database)
    monkeypatch.setattr("mindrian.graph.index_cache._code_stamp", lambda: "0.0.0:other code")
    with monkeypatch.context() as patch:
        patch.setattr(RoutingSnapshot, "build", _refuse)
        with pytest.raises(AssertionError, match="was built"):
            ranking(database)
    assert ranking(database) == expected


def test_one_changed_bit_of_a_score_fails_the_digest(database: Path) -> None:
    ranking(database)
    file = kept(database)
    data = file.read_bytes()
    body = data[len(_HEAD) + 32 :]
    stamp = pickle.loads(body)
    revision = (stamp["revision"][0], stamp["revision"][1])
    assert load_snapshot(file, revision, revision) is not None
    gains = stamp["snapshot"]["index"]["gain"]
    score = next(iter(next(iter(gains.values())).values()))
    packed = struct.pack(">d", score)  # how pickle writes a float
    at = data.index(packed)
    flipped = bytes([packed[-1] ^ 1])
    file.write_bytes(data[: at + 7] + flipped + data[at + 8 :])
    assert load_snapshot(file, revision, revision) is None


class _Planted:
    """What unpickling would turn into a call of os.mkdir."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.mkdir, (str(self.marker),)


def test_a_file_naming_a_callable_is_refused_without_calling_it(
    database: Path, tmp_path: Path
) -> None:
    ranking(database)
    file = kept(database)
    head = file.read_bytes()[: len(_HEAD)]
    marker = tmp_path / "planted-ran"
    planted = pickle.dumps({"format": 1, "snapshot": _Planted(marker)})
    file.write_bytes(head + hashlib.sha256(planted).digest() + planted)
    assert load_snapshot(file, (0, ""), (0, "")) is None
    assert not marker.exists()
    pickle.loads(planted)  # the file is what it claims: a plain unpickler would have run it
    assert marker.is_dir()


def test_explain_builds_the_index_the_kept_one_cannot_explain(database: Path) -> None:
    ranking(database)
    with EmbeddedRegistry(database, read_only=True) as registry:
        plain = registry.rank_text("is my startup idea worth building")
        explained = registry.rank_text("is my startup idea worth building", explain=True)
    assert [(c.id, c.score) for c in explained] == [(c.id, c.score) for c in plain]
    assert explained[0].matches and not plain[0].matches


def test_a_writing_handle_keeps_no_index(database: Path) -> None:
    with EmbeddedRegistry(database) as registry:
        assert registry.select_text("is my startup idea worth building")
    assert not kept(database).exists()


def test_no_cache_folder_keeps_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", "")
    path = tmp_path / "registry.lbug"
    with EmbeddedRegistry(path) as registry:
        registry.register_many(records())
    assert index_cache_file(path) is None
    assert ranking(path)
    # The database and its write-ahead log, nothing else.
    assert {p.name for p in tmp_path.iterdir()} <= {"registry.lbug", "registry.lbug.wal"}


def _refuse(*args: object, **kwargs: object) -> RoutingSnapshot:
    raise AssertionError("the index was built, not read from the cache")
