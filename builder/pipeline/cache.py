"""The builder's answer cache: JSON files named by a digest of everything an answer depends on.

Some answers cost far more to find than to keep: Node's Cypher front end takes
about a second to start, and asking Agno whether a model takes a setting imports
the provider's SDK (two seconds for Anthropic's). Both are pure functions of
their inputs and of installed code, so the key hashes all of it and a stale
entry is never read: it simply stops being asked for.

Where the files live and how they are named is :mod:`mindrian.cache`, which the runtime's own
caches use too. Nothing in a build's output depends on whether an answer came from the cache.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from mindrian.atomic import atomic_write_text
from mindrian.cache import cache_dir, cache_path

__all__ = ["cache_dir", "cache_path", "installed_version", "read_json", "write_json"]


@functools.cache
def installed_version(distribution: str) -> str:
    """The installed version of ``distribution`` (``"absent"`` when it is not): part of a key
    whenever an answer comes from that distribution's code. Looked up once a process."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "absent"


def read_json(path: Path | None) -> dict[str, Any] | None:
    """The cached answer, or None when absent, unreadable or damaged (then it is recomputed)."""
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
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
