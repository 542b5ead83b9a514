"""A project with no skill yet is valid (``build --all`` and ``check`` pass with a note); a
folder that is no project is named as such (issue 38, 2 and 5)."""

from __future__ import annotations

import os
from pathlib import Path


def test_a_fresh_project_builds_and_checks_with_a_note(cli, tmp_path: Path) -> None:
    """Repro: right after ``init``, ``build --all`` and ``check`` exited 2 (U007), so CI on a
    new project failed."""
    assert cli(["init"], tmp_path).code == 0
    note = (
        f"note: no skills/**/SKILL.md under {tmp_path.as_posix()} yet, nothing to build "
        "(mindrian new NAME makes one)\n"
    )
    built = cli(["build", "--all"], tmp_path)
    assert (built.code, built.err) == (0, note)
    checked = cli(["check"], tmp_path)
    assert checked.code == 0 and checked.err.startswith(note)


def test_build_all_outside_a_project_says_so(cli, tmp_path: Path) -> None:
    """Repro: outside a project ``build --all`` said ``no skills/**/SKILL.md under /tmp``."""
    message = (
        f"error[U045]: {tmp_path.as_posix()} is not a mindrian project (no pyproject.toml with "
        "[tool.mindrian] in it or above it); run mindrian init to make one\n"
    )
    for command in (["build", "--all"], ["check"]):
        result = cli(command, tmp_path)
        assert (result.code, result.err) == (2, message)


def test_serve_with_nothing_to_serve_writes_nothing(cli, tmp_path: Path) -> None:
    """Repro: ``serve`` wrote ``.mindrian/sessions.db`` before refusing (X001)."""
    assert cli(["init"], tmp_path).code == 0
    environment = dict(os.environ)
    refused = cli(["serve", "--model", "openai:gpt-4o"], tmp_path)
    assert refused.code == 1 and refused.err.startswith("error[X001]: ")
    assert not (tmp_path / ".mindrian").exists()
    # Nor is the process changed: its state folder would leak into the tests after this one.
    assert dict(os.environ) == environment
