"""The builder's answer cache: JSON files named by a digest of everything an answer depends on.

Some answers cost far more to find than to keep: Node's Cypher front end takes
about a second to start, and asking Agno whether a model takes a setting imports
the provider's SDK (two seconds for Anthropic's). Both are pure functions of
their inputs and of installed code, so the key hashes all of it and a stale
entry is never read: it simply stops being asked for.

The folder is ``$MINDRIAN_CACHE_DIR/<namespace>``, else the user's cache folder;
``MINDRIAN_CACHE_DIR=`` (empty) turns caching off. Nothing in a build's output
depends on whether an answer came from the cache.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from mindrian.atomic import atomic_write_text

__all__ = ["cache_dir", "cache_path", "installed_version", "read_json", "write_json"]


def cache_dir(namespace: str) -> Path | None:
    """The folder of one kind of answer, or None when caching is off."""
    configured = os.environ.get("MINDRIAN_CACHE_DIR")
    if configured is not None:
        return Path(configured) / namespace if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mindrian" / namespace


@functools.cache
def installed_version(distribution: str) -> str:
    """The installed version of ``distribution`` (``"absent"`` when it is not): part of a key
    whenever an answer comes from that distribution's code. Looked up once a process."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "absent"


def cache_path(folder: Path | None, *parts: bytes) -> Path | None:
    """The file of the answer keyed on ``parts`` (each length-prefixed, so no two keys blur)."""
    if folder is None:
        return None
    key = hashlib.sha256()
    for part in parts:
        key.update(b"%d:" % len(part) + part)
    return folder / f"{key.hexdigest()}.json"


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
        atomic_write_text(path, json.dumps(data, sort_keys=True))
    except OSError:
        pass
