"""The builder's answer cache: entries a crash may truncate, read as no answer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from builder.pipeline.cache import read_json, write_json


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
