"""The builder's answer cache: entries a crash may truncate, read as no answer; a bounded
folder swept of the entries unused for longest."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from builder.pipeline.cache import SWEPT_STAMP, Bound, read_json, sweep_if_due, write_json


def test_an_entry_is_not_fsynced_and_any_truncation_of_it_is_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash of the machine may leave an entry written without fsync truncated (or empty):
    the reader must take every such prefix for a missing answer, never for another answer."""
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    entry = tmp_path / "black" / "key.json"
    answer = {"formatted": "x = 1\n", "more": [1, {"a": "b"}]}

    write_json(entry, answer)

    assert synced == []
    assert read_json(entry) == answer
    whole = entry.read_bytes()
    for end in range(len(whole)):
        entry.write_bytes(whole[:end])
        assert read_json(entry) is None, whole[:end]


DAY = 24 * 3600.0


def _entries(folder: Path, ages_in_days: dict[str, float]) -> None:
    """One cache entry per name, last used that many days ago."""
    now = time.time()
    for name, age in ages_in_days.items():
        write_json(folder / f"{name}.json", {"name": name})
        os.utime(folder / f"{name}.json", (now - age * DAY, now - age * DAY))


def _left(folder: Path) -> set[str]:
    return {p.stem for p in folder.iterdir() if p.name != SWEPT_STAMP}


def test_a_sweep_drops_what_went_unused_and_the_least_recently_used_beyond_the_count(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "black"
    _entries(folder, {"new": 0, "day": 1, "week": 7, "month": 31, "year": 365})
    (folder / ".key.json.abc.tmp").write_text("{")  # a crashed writer's leftover
    os.utime(folder / ".key.json.abc.tmp", (0, 0))

    dropped = sweep_if_due(folder, Bound(max_entries=2, max_age=30 * DAY))

    assert _left(folder) == {"new", "day"}
    assert dropped == 4
    assert (folder / SWEPT_STAMP).exists()


def test_a_sweep_is_due_once_per_period_and_reading_an_entry_keeps_it(tmp_path: Path) -> None:
    folder = tmp_path / "black"
    bound = Bound(max_entries=10, max_age=30 * DAY, every=DAY)
    _entries(folder, {"asked": 40, "unasked": 40})
    (folder / SWEPT_STAMP).touch()

    assert sweep_if_due(folder, bound) == 0  # swept less than a day ago: not even listed
    assert read_json(folder / "asked.json", mark_used=True) == {"name": "asked"}
    assert read_json(folder / "unasked.json") == {"name": "unasked"}
    os.utime(folder / SWEPT_STAMP, (time.time() - 2 * DAY,) * 2)

    assert sweep_if_due(folder, bound) == 1
    assert _left(folder) == {"asked"}


def test_no_folder_or_no_cache_is_no_sweep(tmp_path: Path) -> None:
    assert sweep_if_due(None, Bound(max_entries=0, max_age=0)) == 0
    assert sweep_if_due(tmp_path / "absent", Bound(max_entries=0, max_age=0)) == 0
    assert not (tmp_path / "absent").exists()


def test_an_answer_is_read_where_its_use_cannot_be_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = tmp_path / "black" / "key.json"
    write_json(entry, {"formatted": "x = 1\n"})

    def read_only(*args: object, **kwargs: object) -> None:
        raise PermissionError("read-only file system")

    monkeypatch.setattr(os, "utime", read_only)
    assert read_json(entry, mark_used=True) == {"formatted": "x = 1\n"}
