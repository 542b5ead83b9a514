"""The kept ``mindrian --help`` (``builder/cli/help.txt``) is exactly what Typer prints, and the
entry point prints it only where Typer would print the same text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder import entry
from builder.cli import help_text

_ROOT = Path(__file__).resolve().parents[3]


def _help(argv: list[str], columns: str | None, encoding: str | None = None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "PYTHONIOENCODING")}
    env.update({"COLUMNS": columns} if columns else {})
    env.update({"PYTHONIOENCODING": encoding} if encoding else {})
    done = subprocess.run(
        [sys.executable, *argv], capture_output=True, timeout=120, env=env, cwd=_ROOT
    )
    return done.returncode, done.stdout.decode("utf-8")


def test_the_kept_text_is_current() -> None:
    assert help_text.write(_ROOT, check=True) == []
    assert (_ROOT / help_text.HELP_FILE).resolve() == entry.HELP_FILE.resolve()


@pytest.mark.parametrize("columns", [None, "80", "132"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_typer_prints_the_kept_text_on_a_wide_terminal(columns: str | None, flag: str) -> None:
    kept = entry.HELP_FILE.read_text(encoding="utf-8")
    assert _help(["-m", "builder", flag], columns) == (0, kept)
    assert _help(
        ["-c", "from builder.entry import main; raise SystemExit(main())", flag], columns
    ) == (0, kept)


@pytest.mark.parametrize(("columns", "encoding"), [("79", None), ("60", None), (None, "latin-1")])
def test_typer_renders_help_where_it_would_differ(
    columns: str | None, encoding: str | None
) -> None:
    via_entry = _help(
        ["-c", "from builder.entry import main; raise SystemExit(main())", "--help"],
        columns,
        encoding,
    )
    assert via_entry == _help(["-m", "builder", "--help"], columns, encoding)


def test_only_help_alone_is_answered_from_the_kept_text() -> None:
    for args in (
        ["build", "--help"],
        ["--help", "build"],
        ["--debug", "--help"],
        [],
        ["--version"],
    ):
        assert entry.kept_help(args) is None, args
