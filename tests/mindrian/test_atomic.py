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
