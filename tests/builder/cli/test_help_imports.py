"""``mindrian --help`` prints its kept text without importing Typer; rendered by Typer (a
terminal narrower than 80 columns) it pays for Typer and the command modules only: what running
a command needs is imported by the command (issue 39: start-up within 3 × ``python -c pass``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

#: Top-level modules (and packages of this project) ``mindrian --help`` must not import: each
#: belongs to running some command, not to listing them.
_FORBIDDEN = (
    "agno",
    "builder.orchestration",
    "builder.phases",
    "builder.pipeline.contract",
    "importlib.metadata",
    "jinja2",
    "jsonschema",
    "ladybug",
    "logging",
    "mindrian.agents",
    "mindrian.graph",
    "mindrian.host",
    "neo4j",
    "pydantic",
    "rich",
    "ruamel",
    "tomllib",
    "yaml",
)

#: Runs the script's entry point as ``mindrian --help``, then prints the modules it imported
#: (a fresh interpreter, so nothing else imported them).
_PROBE = (
    "import json, sys\n"
    "from builder.entry import main\n"
    "try:\n"
    "    status = main(['--help'])\n"
    "except SystemExit as done:\n"
    "    status = done.code\n"
    "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    "raise SystemExit(status)\n"
)


def _imported_by(name: str, modules: set[str]) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def _imports_of_help(columns: str | None) -> set[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "PYTHONIOENCODING")}
    env.update({"COLUMNS": columns} if columns else {})
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "Usage:" in done.stdout
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("columns", [None, "80", "200"])
def test_help_on_a_wide_terminal_imports_no_command_line_library(columns: str | None) -> None:
    imported = _imports_of_help(columns)
    heavy = ("builder.cli", "builder.pipeline", "click", "mindrian", "typer", *_FORBIDDEN)
    assert [m for m in heavy if _imported_by(m, imported)] == []


def test_help_rendered_by_typer_imports_none_of_what_only_commands_need() -> None:
    imported = _imports_of_help("60")
    assert [m for m in _FORBIDDEN if _imported_by(m, imported)] == []
    assert "builder.cli.app" in imported
