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
from mindrian.graph.index_cache import (
    ABANDONED_SECONDS,
    KeptIndex,
    index_cache_file,
    load_snapshot,
    prune_index_cache,
)
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
#: How a kept file begins; the SHA-256 of the rest follows, then the registry's path
#: (4-byte length first) and the pickled data.
_HEAD = b"mindrian routing index 2\n"


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


def kept_index(path: Path) -> KeptIndex:
    found = index_cache_file(path)
    assert found is not None
    return found


def kept(path: Path) -> Path:
    return kept_index(path).file


def body_at(path: Path) -> int:
    """Where the pickled data starts in the kept file of the registry ``path``."""
    return len(_HEAD) + 32 + 4 + len(kept_index(path).registry)


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
    body = data[body_at(database) :]
    stamp = pickle.loads(body)
    revision = (stamp["revision"][0], stamp["revision"][1])
    assert load_snapshot(kept_index(database), revision, revision) is not None
    gains = stamp["snapshot"]["index"]["gain"]
    score = next(iter(next(iter(gains.values())).values()))
    packed = struct.pack(">d", score)  # how pickle writes a float
    at = data.index(packed)
    flipped = bytes([packed[-1] ^ 1])
    file.write_bytes(data[: at + 7] + flipped + data[at + 8 :])
    assert load_snapshot(kept_index(database), revision, revision) is None


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
    owner = file.read_bytes()[len(_HEAD) + 32 : body_at(database)]
    marker = tmp_path / "planted-ran"
    planted = pickle.dumps({"format": 2, "snapshot": _Planted(marker)})
    file.write_bytes(_HEAD + hashlib.sha256(owner + planted).digest() + owner + planted)
    assert load_snapshot(kept_index(database), (0, ""), (0, "")) is None
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


def small_registry(path: Path) -> Path:
    """A registry file at ``path`` holding a few of the project's frameworks."""
    with EmbeddedRegistry(path) as registry:
        registry.register_many(records()[:3])
    return path


def read_once(path: Path) -> None:
    """What ``mindrian select`` does: one sentence through a new read-only handle."""
    with EmbeddedRegistry(path, read_only=True) as registry:
        registry.rank_text("is my startup idea worth building")


def kept_files(cache: Path) -> list[Path]:
    """The kept indexes in ``cache``; a quick index beside one appears when the registry's file
    aged past its settling time before the read (a loaded machine), and is not what is counted."""
    return sorted(p for p in cache.joinpath("routing-index").iterdir() if p.suffix == ".pickle")


def delete_registry(path: Path) -> None:
    for file in path.parent.glob(path.name + "*"):  # the database and its write-ahead log
        file.unlink()


def test_the_file_of_a_deleted_registry_goes_when_another_is_kept(
    tmp_path: Path, cache: Path
) -> None:
    registries = [small_registry(tmp_path / f"r{i}" / "registry.lbug") for i in range(3)]
    for path in registries:
        read_once(path)
    assert {p.name for p in kept_files(cache)} == {kept(path).name for path in registries}
    delete_registry(registries[0])
    delete_registry(registries[1])
    assert kept(registries[0]).is_file()  # nothing is written, so nothing is pruned yet

    newcomer = small_registry(tmp_path / "new" / "registry.lbug")
    read_once(newcomer)
    assert kept_files(cache) == sorted([kept(registries[2]), kept(newcomer)])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RoutingSnapshot, "build", _refuse)
        read_once(registries[2])  # the living registry's file was kept, and is read


def test_a_registry_path_reused_by_a_new_registry_keeps_its_file(
    tmp_path: Path, cache: Path
) -> None:
    path = small_registry(tmp_path / "registry.lbug")
    read_once(path)
    delete_registry(path)
    small_registry(path)  # e.g. `mindrian graph rebuild`
    other = small_registry(tmp_path / "other.lbug")
    read_once(other)
    assert kept(path).is_file()  # its registry exists: stale by revision, replaced when read


def test_pruning_leaves_living_files_temporaries_in_progress_and_other_names(
    tmp_path: Path, cache: Path
) -> None:
    folder = cache / "routing-index"
    living = small_registry(tmp_path / "registry.lbug")
    read_once(living)
    now = 2_000_000_000.0
    digest = "ab" * 32
    files = {
        "writing": folder / f".{digest}.k3j2_x.tmp",  # another process's write in progress
        "abandoned": folder / f".{digest}.q9z1_y.tmp",
        "old format": folder / f"{'cd' * 32}.pickle",
        "torn head": folder / f"{'ef' * 32}.pickle",
        "too long a path": folder / f"{'01' * 32}.pickle",
        "someone else's": folder / "notes.pickle",
        "a folder": folder / f"{'23' * 32}.pickle.d",
    }
    files["writing"].write_bytes(b"half")
    os.utime(files["writing"], (now - 5, now - 5))
    files["abandoned"].write_bytes(b"half")
    stale = now - ABANDONED_SECONDS - 1
    os.utime(files["abandoned"], (stale, stale))
    files["old format"].write_bytes(b"mindrian routing index\n" + bytes(32) + b"\x80\x05")
    files["torn head"].write_bytes(_HEAD + bytes(10))
    files["too long a path"].write_bytes(_HEAD + bytes(32) + struct.pack(">I", 2**32 - 1) + b"/")
    files["someone else's"].write_bytes(b"not ours")
    files["a folder"].mkdir()

    prune_index_cache(folder, now)
    prune_index_cache(folder, now)  # a second pass finds nothing more to do

    left = {what for what, file in files.items() if file.exists()}
    assert left == {"writing", "someone else's", "a folder"}
    assert kept(living).is_file()
    os.utime(files["writing"], (stale, stale))
    prune_index_cache(folder, now)
    assert not files["writing"].exists()


def test_a_file_recording_another_registry_is_not_read(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = small_registry(tmp_path / "one.lbug")
    two = small_registry(tmp_path / "two.lbug")
    read_once(one)
    kept(two).write_bytes(kept(one).read_bytes())  # a digest that holds, for another path
    with monkeypatch.context() as patch:
        patch.setattr(RoutingSnapshot, "build", _refuse)
        with pytest.raises(AssertionError, match="was built"):
            read_once(two)
    read_once(two)
    assert kept(two).read_bytes() != kept(one).read_bytes()


def _refuse(*args: object, **kwargs: object) -> RoutingSnapshot:
    raise AssertionError("the index was built, not read from the cache")
