"""``mindrian --help`` kept as text: what Typer prints for the top level, rendered from the
application and committed as ``builder/cli/help.txt``, so :mod:`builder.entry` can print it
without importing Typer and every command module (issue 39: ``--help`` within 3 × the
interpreter's start).

Click wraps help to the terminal: ``max(min(columns, 80) - 2, 50)`` characters, so every
terminal of at least 80 columns (and any output that is not a terminal, which counts as 80)
gets the same text, the one kept here. The entry point prints it only then
(:func:`builder.entry.kept_help`); narrower terminals get Typer's own rendering. ``make docs``
(``python -m builder.cli.help_text``) rewrites the file and a test fails while it differs from
what Typer prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

from builder.doc_sections import main, sync_file
from builder.entry import HELP_COLUMNS

__all__ = ["HELP_FILE", "render", "write"]

#: Where the text is, relative to the project root (shipped with the ``builder.cli`` package).
HELP_FILE = Path("builder/cli/help.txt")
#: Click's layout on such a terminal: its columns less a two-column margin.
_WIDTH = HELP_COLUMNS - 2


def render() -> str:
    """What ``mindrian --help`` prints on a terminal of 80 columns or more."""
    import typer

    from builder.cli.app import app

    command = typer.main.get_command(app)
    with command.make_context(
        "mindrian", [], resilient_parsing=True, terminal_width=_WIDTH
    ) as context:
        return context.get_help() + "\n"


def write(root: Path, *, check: bool = False) -> list[Path]:
    """Rewrite ``root``'s kept help text; with ``check``, only list it when stale."""
    path = root / HELP_FILE
    return [path] if sync_file(path, render(), check=check) else []


if __name__ == "__main__":
    sys.exit(main(write, sys.argv[1:]))
