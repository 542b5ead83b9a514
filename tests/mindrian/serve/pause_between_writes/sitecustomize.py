"""Injected into one ``mindrian serve`` process by a test (on its ``PYTHONPATH``): a pause
between the two writes that store a run, the session's row and then the run's.

Agno stores a continued run with ``upsert_session`` and then ``upsert_run``. While the file
``$PAUSE_BETWEEN_WRITES/arm`` exists, the next ``upsert_run`` of this process removes it,
creates ``reached`` and waits until ``release`` exists. The wait blocks the whole process on
purpose: the request that is retried meanwhile goes to another process.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from agno.db.sqlite import SqliteDb

_FOLDER = Path(os.environ["PAUSE_BETWEEN_WRITES"])
_WAIT_SECONDS = 120.0
_upsert_run = SqliteDb.upsert_run


def _paused_upsert_run(self: SqliteDb, *args: Any, **kwargs: Any) -> Any:
    try:
        (_FOLDER / "arm").unlink()
    except FileNotFoundError:
        return _upsert_run(self, *args, **kwargs)
    (_FOLDER / "reached").touch()
    deadline = time.monotonic() + _WAIT_SECONDS
    while not (_FOLDER / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return _upsert_run(self, *args, **kwargs)


SqliteDb.upsert_run = _paused_upsert_run  # type: ignore[method-assign]
