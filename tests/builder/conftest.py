"""Fixtures of the builder tests; the factories they use live in build_factories.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from build_factories import CliResult


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., CliResult]:
    """Run ``mindrian ARGS`` in-process from a given folder."""
    from builder.cli.app import main

    def invoke(args: Sequence[str], cwd: Path) -> CliResult:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return invoke
