"""mindrian.atomic: the one atomic-write helper every state writer uses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mindrian.atomic import atomic_write_bytes, atomic_write_text


def test_writes_text_as_utf8_without_newline_translation(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "state.json"
    atomic_write_text(target, "é\r\nx\n")
    assert target.read_bytes() == "é\r\nx\n".encode()


def test_replaces_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "f"
    atomic_write_bytes(target, b"old")
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_a_failed_replace_keeps_the_old_file_and_leaves_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "x" / "1-skill_analysis.yaml"
    atomic_write_text(target, "old: 1\n")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(target, "new: 2\n")
    assert target.read_text() == "old: 1\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["1-skill_analysis.yaml"]


def test_a_long_file_name_still_gets_a_temporary_beside_it(tmp_path: Path) -> None:
    target = tmp_path / ("n" * 250)
    atomic_write_text(target, "ok")
    assert target.read_text() == "ok"


def _fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The descriptors fsynced from now on (still fsynced for real)."""
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def test_a_write_is_durable_unless_the_caller_says_its_reader_rebuilds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = _fsyncs(monkeypatch)
    atomic_write_text(tmp_path / "registry.yaml", "kept\n")
    assert len(synced) == 1
    atomic_write_text(tmp_path / "cache.json", "{}", durable=False)
    atomic_write_bytes(tmp_path / "stamp.json", b"{}", durable=False)
    assert len(synced) == 1
    assert (tmp_path / "cache.json").read_text() == "{}"
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["cache.json", "registry.yaml", "stamp.json"]


def test_a_folder_is_made_only_when_missing(tmp_path: Path, made_folders: list[Path]) -> None:
    atomic_write_text(tmp_path / "a" / "b" / "one", "1")
    assert made_folders[0] == tmp_path / "a" / "b"
    made_folders.clear()
    atomic_write_text(tmp_path / "a" / "b" / "two", "2")
    assert made_folders == []  # it is there now
    assert (tmp_path / "a" / "b" / "two").read_text() == "2"
