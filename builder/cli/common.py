"""What every command module of the ``mindrian`` command line shares: the global switches, the
project root, how lines, frames and annotations are printed, ``--format`` and ``--frames``.

Only light modules are imported here (the command modules import this one at start-up, so
``mindrian --help`` pays for it); anything heavier is imported by the command that needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from builder.pipeline.annotations import Annotation, github_line, warning_annotation
from builder.pipeline.errors import SourceLocation, UsageError
from builder.pipeline.paths import display
from builder.pipeline.terminal import terminal_line
from mindrian.project import find_project_root

if TYPE_CHECKING:
    from builder.pipeline.config import BuildConfig
    from builder.pipeline.results import Problem
    from mindrian.frames import Frame

__all__ = [
    "CliState",
    "annotate",
    "annotate_warning",
    "display",
    "err",
    "frame",
    "out",
    "project_config",
    "project_root",
    "report_format",
    "say",
    "use_frames",
    "workspace_folder",
]


@dataclass
class CliState:
    """Global switches, shared with ``main`` so it knows how to report a failure."""

    debug: bool = False
    """Show tracebacks of internal errors."""
    frames: str | None = None
    """Stage named by the closing DONE frame (``build``, ``register``, ``check``); None without
    ``--frames``."""
    json: bool = False
    """``--json`` is among the arguments: an error that stops the command before its report is
    also printed as a JSON object on stdout, so a script always gets one."""
    github: bool = False
    """``--format github``: every problem is also printed as a GitHub annotation on stdout."""


def report_format(ctx: typer.Context, value: str, allowed: tuple[str, ...]) -> str:
    """Check ``--format`` against what the command offers and note it for error reporting."""
    if value not in allowed:
        raise UsageError(
            f"--format {value!r}: this command prints {', '.join(allowed)}", code="U041"
        )
    state = ctx.ensure_object(CliState)
    state.github = value == "github"
    state.json = state.json or value == "json"
    return value


def use_frames(ctx: typer.Context, stage: str, frames: bool, json_out: bool = False) -> bool:
    """Switch ``--frames`` on for ``stage``; ``--json`` cannot share stdout with it."""
    if frames:
        ctx.ensure_object(CliState).frames = stage
        if json_out:
            raise UsageError(
                "give --json or --frames, not both: each needs stdout to itself", code="U014"
            )
    return frames


def annotate(problem: Problem, path: str | None = None) -> None:
    """Print ``problem`` as a GitHub annotation on stdout (at ``path`` when it has no place)."""
    where = problem.location or (SourceLocation(path) if path else None)
    typer.echo(github_line(Annotation(problem.code, problem.message, where)))


def annotate_warning(line: str) -> None:
    """Print a located, coded warning line as a GitHub ``::warning`` annotation on stdout."""
    found = warning_annotation(line)
    if found is not None:
        typer.echo(github_line(found))


def project_root(start: Path) -> Path:
    """The nearest folder from ``start`` upwards whose pyproject.toml has ``[tool.mindrian]``,
    else ``start``."""
    return find_project_root(start) or start


def project_config(root: Path, **switches: object) -> BuildConfig:
    """The project's ``[tool.mindrian]`` configuration with the command line's switches."""
    from builder.orchestration.project import load_config

    return load_config(root).with_switches(**switches)


def err(line: str) -> None:
    """Print one human line on stderr (control characters escaped: it may quote a skill)."""
    typer.echo(terminal_line(line), err=True)


def out(line: str) -> None:
    """Print one human line on stdout, escaped like :func:`err`."""
    typer.echo(terminal_line(line))


def _defused_err(line: str) -> None:
    from mindrian.frames import defuse  # json and re: only with --frames

    err(defuse(line))


def say(frames: bool) -> Callable[[str], None]:
    """How human lines are printed: defused when frames share the terminal."""
    return _defused_err if frames else err


def frame(event: Frame) -> None:
    """Print one control frame on stdout."""
    typer.echo(event.to_text())


def workspace_folder(path: Path | None) -> Path:
    """``--workspace`` resolved (default: the current folder); an X009 when it is no folder."""
    from builder.pipeline.errors import AgentCommandError

    chosen = (path or Path.cwd()).resolve()
    if not chosen.is_dir():
        raise AgentCommandError(f"--workspace {path}: not a folder", code="X009")
    return chosen
