"""The ``mindrian`` script's entry point: ``mindrian --help`` printed from its kept text and a
one-shot ``select "a sentence"`` answered from the quick index, everything else by the command
line application (:mod:`builder.cli.app`). Outside :mod:`builder.cli`, whose package imports
the application.

``mindrian --help`` (or ``-h``) alone prints ``builder/cli/help.txt``, Typer's own rendering
kept by :mod:`builder.cli.help_text`, when stdout takes UTF-8 and the terminal has at least
:data:`HELP_COLUMNS` columns (Click lays help out for at most 80, so every such terminal gets
that text); otherwise the application renders it.

A hook or a CI step that routes one sentence starts a process for it, and the full command
line (Typer, the registry, the database engine) costs several times the interpreter's own
start before it reads anything. When the arguments are a sentence and nothing but
``--registry PATH``, ``--limit N`` and ``--json``, and the registry file (the given one, or
the project's ``.mindrian/registry.lbug`` when no Neo4j URI is set) has a quick index of its
current state (:mod:`mindrian.routing.quick`), this module ranks from it and prints what the
command would, byte for byte; in every other case, and whenever the quick index cannot
answer, it hands the arguments to the application unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["HELP_COLUMNS", "HELP_FILE", "kept_help", "main", "quick_select"]

#: The kept top-level help, beside this module.
HELP_FILE = Path(__file__).with_name("cli") / "help.txt"
#: The narrowest terminal that gets the kept help: Click's widest layout.
HELP_COLUMNS = 80
_HELP_ARGS = (["--help"], ["-h"])
_OPTIONS = ("--registry", "--limit")
_YAML_SUFFIXES = (".yaml", ".yml")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mindrian`` script; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    text = kept_help(args)
    if text is not None:
        sys.stdout.write(text)
        return 0
    printed = quick_select(args, Path.cwd(), os.environ)
    if printed is not None:
        out, error = printed
        sys.stdout.write(out)
        sys.stderr.write(error)
        return 0
    from builder.cli.app import main as application

    return application(args)


def kept_help(args: Sequence[str]) -> str | None:
    """The kept top-level help when ``args`` ask for it and Typer would print exactly it; None
    when the application must render it."""
    if list(args) not in _HELP_ARGS or (sys.stdout.encoding or "").lower() != "utf-8":
        return None
    import shutil

    if shutil.get_terminal_size().columns < HELP_COLUMNS:
        return None
    try:
        return HELP_FILE.read_text(encoding="utf-8")
    except OSError:
        return None


def quick_select(
    args: Sequence[str], cwd: Path, environ: Mapping[str, str]
) -> tuple[str, str] | None:
    """What ``mindrian select`` prints for ``args`` on stdout and stderr, when the quick index
    can answer; None when the application must run."""
    parsed = _parse(args)
    if parsed is None:
        return None
    sentence, registry, limit, json_out = parsed
    from mindrian.project import ProjectPaths, find_project_root

    root = find_project_root(cwd) or cwd
    if registry is None:
        if environ.get("NEO4J_URI"):
            return None
        registry = ProjectPaths(root).embedded_registry
    elif not registry.is_absolute():
        registry = cwd / registry
    if registry.suffix in _YAML_SUFFIXES or not registry.is_file():
        return None
    return _ranked(sentence, registry, limit, json_out, _display(registry, root))


def _parse(args: Sequence[str]) -> tuple[str, Path | None, int, bool] | None:
    """(sentence, --registry, --limit, --json) of ``select SENTENCE [options]``; None for any
    other command line."""
    if not args or args[0] != "select":
        return None
    sentence: str | None = None
    values: dict[str, str] = {}
    json_out = False
    rest = list(args[1:])
    while rest:
        arg = rest.pop(0)
        name, equals, value = arg.partition("=")
        if arg == "--json":
            json_out = True
        elif name in _OPTIONS and name not in values:
            if not equals:
                if not rest:
                    return None
                value = rest.pop(0)
            values[name] = value
        elif arg.startswith("-") or sentence is not None or not arg.strip():
            return None
        else:
            sentence = arg
    limit = values.get("--limit", "5")
    if sentence is None or not limit.isdigit() or int(limit) < 1:
        return None
    registry = values.get("--registry")
    return sentence, (Path(registry) if registry else None), int(limit), json_out


def _display(path: Path, root: Path) -> str:
    """As :func:`builder.cli.common.display` shows a path."""
    try:
        return path.absolute().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _ranked(
    sentence: str, registry: Path, limit: int, json_out: bool, where: str
) -> tuple[str, str] | None:
    from mindrian.routing import quick

    file = quick.quick_file(registry)
    found = None if file is None else quick.signature(registry)
    if file is None or found is None:
        return None
    index = quick.load_quick(file, quick.stamp(registry, found), sentence)
    if index is None:
        return None
    from mindrian.routing.score import rank_sentence

    ranked = rank_sentence(index.snapshot, sentence, (), (), index.usage, limit)
    from builder.graph.select_output import select_json, select_table

    if json_out:
        return select_json(ranked, where, (), (), (), limit, text=sentence) + "\n", ""
    if not ranked:
        from builder.pipeline.terminal import terminal_line

        return "", terminal_line(f"no registered framework matches (registry {where})") + "\n"
    return select_table(ranked), ""
