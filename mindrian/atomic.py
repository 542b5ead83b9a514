"""Atomic file replacement: a reader sees the old file or the new one, never a mix.

The one implementation every writer of state uses (checkpoints, registry.yaml,
agent sessions, workflow runs, caches): a unique temporary file in the target's
own folder (so the final ``os.replace`` never crosses a filesystem), flushed
and fsynced, then renamed over the target. On any failure the temporary file is
removed and the target is left as it was.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write_bytes", "atomic_write_text"]


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` in one step, creating its folder when needed."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # A unique name, so two writers of one file never share a half-written temporary.
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name[:64]}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Replace ``path`` by ``text`` as UTF-8, line endings exactly as given (no translation)."""
    atomic_write_bytes(path, text.encode("utf-8"))
