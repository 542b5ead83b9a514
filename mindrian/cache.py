"""Where mindrian keeps answers that cost more to find than to keep: one folder per kind.

The folder is ``$MINDRIAN_CACHE_DIR/<namespace>``, else ``<user cache>/mindrian/<namespace>``
(``$XDG_CACHE_HOME``, else ``~/.cache``); ``MINDRIAN_CACHE_DIR=`` (empty) turns every cache
off. The builder's caches (:mod:`builder.pipeline.cache`) and the runtime's (the text index
of a registry, :mod:`mindrian.graph.index_cache`) share it. A file is named by a digest of
what it is keyed on, so no two keys blur and nothing in any output depends on whether an
answer came from the cache.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["cache_dir", "cache_path"]


def cache_dir(namespace: str) -> Path | None:
    """The folder of one kind of answer, or None when caching is off."""
    configured = os.environ.get("MINDRIAN_CACHE_DIR")
    if configured is not None:
        return Path(configured) / namespace if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mindrian" / namespace


def cache_path(folder: Path | None, *parts: bytes, suffix: str = ".json") -> Path | None:
    """The file of the answer keyed on ``parts`` (each length-prefixed, so no two keys blur)."""
    if folder is None:
        return None
    key = hashlib.sha256()
    for part in parts:
        key.update(b"%d:" % len(part) + part)
    return folder / f"{key.hexdigest()}{suffix}"
