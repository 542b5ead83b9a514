"""The builder's answer cache: JSON files named by a digest of everything an answer depends on.

Some answers cost far more to find than to keep: Node's Cypher front end takes
about a second to start, and asking Agno whether a model takes a setting imports
the provider's SDK (two seconds for Anthropic's). Both are pure functions of
their inputs and of installed code, so the key hashes all of it and a stale
entry is never read: it simply stops being asked for.

Where the files live and how they are named is :mod:`mindrian.cache`, which the runtime's own
caches use too. Nothing in a build's output depends on whether an answer came from the cache.

A cache whose keys keep changing (Black's: one entry per new text formatted) is given a
:class:`Bound`: a hit marks its entry used (its modification time), and at most once a day
(a stamp file's age, one ``stat`` to decide) :func:`sweep_if_due` drops the entries unused for
longest, so the folder never holds more than the bound's count for long.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mindrian.atomic import atomic_write_text
from mindrian.cache import cache_dir, cache_path

__all__ = [
    "Bound",
    "cache_dir",
    "cache_path",
    "installed_version",
    "read_json",
    "sweep",
    "sweep_if_due",
    "write_json",
]


@functools.cache
def installed_version(distribution: str) -> str:
    """The installed version of ``distribution`` (``"absent"`` when it is not): part of a key
    whenever an answer comes from that distribution's code. Looked up once a process."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "absent"


def read_json(path: Path | None, *, mark_used: bool = False) -> dict[str, Any] | None:
    """The cached answer, or None when absent, unreadable or damaged (then it is recomputed).

    ``mark_used`` (a cache with a :class:`Bound`): a hit sets the entry's modification time to
    now, so a sweep keeps the entries still asked for."""
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if mark_used:
        with contextlib.suppress(OSError):  # a cache it cannot write keeps its answers still
            os.utime(path)
    return data if isinstance(data, dict) else None


def write_json(path: Path | None, data: dict[str, Any]) -> None:
    """Keep an answer; a cache that cannot be written only costs time, so errors are dropped."""
    if path is None:
        return
    try:
        # Not fsynced: a reader takes a damaged or missing entry for no answer (read_json).
        atomic_write_text(path, json.dumps(data, sort_keys=True), durable=False)
    except OSError:
        pass


@dataclass(frozen=True)
class Bound:
    """How much of one cache folder is kept."""

    max_entries: int
    """Entries a sweep leaves at most: those used most recently."""
    max_age: float
    """Seconds an entry may go unused before a sweep drops it."""
    every: float = 24 * 3600.0
    """Seconds between two sweeps of a folder."""


#: The file whose modification time says when its folder was last swept (entries are
#: ``<sha256>.json``, so no entry has this name).
SWEPT_STAMP = ".swept"


def sweep_if_due(folder: Path | None, bound: Bound) -> int:
    """:func:`sweep` ``folder`` when its last sweep is ``bound.every`` old or it has none; the
    number of entries dropped. Deciding costs one ``stat``; the stamp is renewed before the
    sweep, so processes building at once do not all sweep."""
    if folder is None:
        return 0
    stamp = folder / SWEPT_STAMP
    now = time.time()
    try:
        if now - stamp.stat().st_mtime < bound.every:
            return 0
    except FileNotFoundError:
        pass
    except OSError:
        return 0
    try:
        stamp.touch()
    except OSError:
        return 0  # a folder that cannot be written cannot be swept either (nor grow)
    return sweep(folder, bound, now)


def sweep(folder: Path, bound: Bound, now: float) -> int:
    """Drop the entries of ``folder`` unused since ``now - bound.max_age``, then the least
    recently used beyond ``bound.max_entries`` (a writer's leftover temporary file counts as
    an entry); the number dropped. Another process dropping the same file is no error."""
    entries: list[tuple[float, str]] = []
    try:
        with os.scandir(folder) as found:
            for entry in found:
                if entry.name == SWEPT_STAMP:
                    continue
                try:
                    if entry.is_file(follow_symlinks=False):
                        entries.append((entry.stat(follow_symlinks=False).st_mtime, entry.path))
                except OSError:
                    continue
    except OSError:
        return 0
    entries.sort(reverse=True)  # most recently used first
    oldest_kept = now - bound.max_age
    dropped = 0
    for rank, (used, path) in enumerate(entries):
        if rank >= bound.max_entries or used < oldest_kept:
            try:
                os.unlink(path)
                dropped += 1
            except OSError:
                continue
    return dropped
