"""Fixtures of the reliability tests: ``mindrian`` run in-process, its output captured."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from reliability_cli import Mindrian, Run


@pytest.fixture
def mindrian(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Mindrian:
    """Run ``mindrian ARGS`` in-process from a given folder (monkeypatches apply to it)."""
    from builder.cli.app import main

    def run(cwd: Path, args: Sequence[str]) -> Run:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run
