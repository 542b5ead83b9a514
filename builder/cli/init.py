"""``mindrian init``: a thin wrapper over :mod:`builder.codegen.init`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register_init_command"]

_EXAMPLES = """\
Examples:

\b
  mindrian init
  mindrian init path/to/repository
"""

_NEXT = """\
Next:
  mindrian new my-skill --type operator     # scaffold skills/my-skill/SKILL.md
  mindrian build --all                      # compile every skill into generated/
  mindrian check                            # what CI runs: fails when generated/ drifts
"""


def register_init_command(app: typer.Typer) -> None:
    """Add ``init`` to the ``mindrian`` command."""
    app.command(name="init", epilog=_EXAMPLES)(init)


def init(
    folder: Annotated[
        Path,
        typer.Argument(
            metavar="[FOLDER]",
            help="The folder to make a project (default: the working directory).",
            show_default=False,
        ),
    ] = Path("."),
    nested: Annotated[
        bool,
        typer.Option(
            "--nested", help="Make a project even inside another one (it then owns its folder)."
        ),
    ] = False,
) -> None:
    """Make FOLDER a mindrian project: [tool.mindrian] in pyproject.toml, skills/, generated/
    and .gitignore entries.

    Only adds: pyproject.toml keeps every other byte, existing files are never replaced, and a
    second run changes nothing. Prints what it did and the commands to type next. A folder
    inside another project is refused (exit status 1), naming it, unless --nested.
    """
    from builder.codegen.init import init_project

    if not folder.is_dir():
        from builder.pipeline.errors import ScaffoldError, SourceLocation

        raise ScaffoldError(
            "no such folder", location=SourceLocation(folder.as_posix()), code="N002"
        )
    result = init_project(folder, nested=nested)
    for change in result.changed:
        typer.echo(change)
    if not result.changed:
        typer.echo(f"{folder.as_posix()} is already a mindrian project; nothing to change")
    typer.echo(_NEXT, nl=False)
