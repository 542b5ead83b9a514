"""Session state files of the agent bases that persist progress (guided, pipeline).

Each session is one JSON file, ``<state_dir>/<kind>/<agent_id>/<session_id>.json``,
written whole on every save: the text is deterministic (sorted keys, fixed
indentation, trailing newline, no timestamps) and the write is atomic (a temp
file in the same directory, flushed to disk, then ``os.replace``), so a reader
or a crash never sees half a file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from mindrian.agents.base import STATE_DIR_ENV
from mindrian.agents.errors import AgentRunError
from mindrian.atomic import atomic_write_text
from mindrian.serial import from_plain

T = TypeVar("T")

__all__ = [
    "configured_state_dir",
    "dump_json",
    "load_state",
    "read_state",
    "session_file",
    "write_atomic",
]

# Session ids become file names: no separators, no leading dot, bounded length.
_SAFE_SESSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def configured_state_dir(explicit: str | os.PathLike[str] | None) -> Path | None:
    """``explicit``, else ``$MINDRIAN_STATE_DIR``, else None: no fallback directory."""
    chosen = explicit if explicit is not None else os.environ.get(STATE_DIR_ENV)
    return Path(chosen) if chosen else None


def session_file(state_dir: Path, kind: str, agent_id: str, session_id: str) -> Path:
    """Where the state of ``session_id`` is kept; refuses ids that are not plain file names."""
    if not _SAFE_SESSION.fullmatch(session_id):
        raise ValueError(
            f"unusable session id {session_id!r}: letters, digits, '.', '_' and '-' only"
        )
    return state_dir / kind / agent_id / f"{session_id}.json"


def dump_json(data: Mapping[str, Any]) -> str:
    """Deterministic JSON text: sorted keys, two-space indent, UTF-8 kept, trailing newline."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step."""
    atomic_write_text(path, text)


def read_state(path: Path, agent_id: str) -> dict[str, Any] | None:
    """The JSON object saved at ``path``, or None if nothing was saved there.

    Raises :class:`AgentRunError` when the file is unreadable or belongs to another agent.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AgentRunError(f"{path} is not a readable state file: {exc}") from exc
    owner = data.get("agent_id") if isinstance(data, dict) else None
    if not isinstance(data, dict) or owner != agent_id:
        raise AgentRunError(f"{path} belongs to agent {owner!r}, not {agent_id!r}")
    return data


def load_state(path: Path, agent_id: str, cls: type[T]) -> T | None:
    """The ``cls`` record saved at ``path`` (:func:`read_state`), or None if nothing was saved.

    A file damaged or from another version (a key missing, a value of the wrong type) raises
    :class:`AgentRunError` naming the file, not the ``KeyError`` or ``TypeError`` of reading it.
    """
    data = read_state(path, agent_id)
    if data is None:
        return None
    try:
        state: T = from_plain(cls, data)
    except (KeyError, TypeError, ValueError) as error:
        raise AgentRunError(
            f"{path}: a damaged {cls.__name__} state file ({type(error).__name__}: {error}); "
            "delete it to start the session over"
        ) from None
    return state
