"""Agents as MCP tools: over HTTP with JWTs, a session and a workspace are the user's own."""

from __future__ import annotations

from pathlib import Path

from mindrian.mcp.agents import _scoped, _workspace
from mindrian.request_limits import SESSION_ID_PATTERN


def test_the_same_session_id_from_two_users_names_two_sessions() -> None:
    alice, bob = _scoped("s1", "alice"), _scoped("s1", "bob")
    assert alice != bob and alice.startswith("s1.") and bob.startswith("s1.")
    assert _scoped("s1", None) == "s1"
    # A token's sub may hold anything; the scoped id is still a plain one.
    for user in ("alice", "../../etc", "a" * 1000, "ü/ß\\x"):
        assert SESSION_ID_PATTERN.fullmatch(_scoped("s" * 100, user))


def test_each_user_works_in_a_folder_of_their_own(tmp_path: Path) -> None:
    alice, bob = _workspace(tmp_path, "alice"), _workspace(tmp_path, "../bob")
    assert alice.parent == tmp_path == bob.parent and alice != bob
    assert alice.is_dir() and bob.is_dir()
    assert _workspace(tmp_path, None) == tmp_path
