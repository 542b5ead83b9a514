"""The ``mindrian`` script's entry point: ``mindrian --help`` printed from its kept text,
``validate`` of named skills and a one-shot ``select "a sentence"`` answered from the quick
index, everything else by the command line application (:mod:`builder.cli.app`), which
Typer and every command module make several times the interpreter's own start.

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

``mindrian validate PATH... [--quiet|-q] [--format human|github]`` runs the command's own
function (:func:`builder.orchestration.validation.validation_outputs`) and prints its lines
as Typer would. Anything unusual goes to the application, which reports it: another option,
a path the command refuses (an exception), a Python warning (the application prints some as
located lines), an escape character in a line (Click strips those), stdout or stderr not
taking UTF-8. Validation writes nothing, so running it again there is harmless.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "HELP_COLUMNS",
    "HELP_FILE",
    "defer_import",
    "kept_help",
    "main",
    "quick_select",
    "quick_validate",
]

#: The kept top-level help, beside this module.
HELP_FILE = Path(__file__).with_name("cli") / "help.txt"
#: The narrowest terminal that gets the kept help: Click's widest layout.
HELP_COLUMNS = 80
_HELP_ARGS = (["--help"], ["-h"])
_OPTIONS = ("--registry", "--limit")
_QUIET = ("--quiet", "-q")
_FORMATS = ("human", "github")
_YAML_SUFFIXES = (".yaml", ".yml")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mindrian`` script; returns the exit status. After the answer, quick
    or the application's, every object of the process is frozen out of the cyclic collector
    (:func:`gc.freeze`): the process is about to end."""
    args = list(sys.argv[1:] if argv is None else argv)
    text = kept_help(args)
    if text is not None:
        sys.stdout.write(text)
        return 0
    # What a quick path allocates is nearly all modules, classes and functions kept until the
    # process ends: the cyclic collector's passes over them, during the run and the last one as
    # the interpreter exits, would find nothing to free (together about 7 % of validate).
    gc.disable()
    try:
        status = _quick(args)
    finally:
        gc.enable()
    if status is not None:
        gc.freeze()
        return status
    from builder.cli.app import main as application

    status = application(args)
    # The interpreter's last collection would walk every object the command made only to free
    # what the process's end frees anyway: after a cold batch of 100, some 0.1 s of one core
    # with the other idle. Each file was closed where it was written.
    gc.freeze()
    return status


def _quick(args: list[str]) -> int | None:
    """Answer ``validate`` or a one-shot ``select`` without the application, returning the
    exit status; None when the application must run."""
    validated = quick_validate(args, Path.cwd())
    if validated is not None:
        lines, status = validated
        for line, to_err in lines:
            stream = sys.stderr if to_err else sys.stdout
            stream.write(line + "\n")
            stream.flush()  # as Click echoes: stdout and stderr lines keep their order
        return status
    printed = quick_select(args, Path.cwd(), os.environ)
    if printed is None:
        return None
    out, error = printed
    sys.stdout.write(out)
    sys.stderr.write(error)
    return 0


def kept_help(args: Sequence[str]) -> str | None:
    """The kept top-level help when ``args`` ask for it and Typer would print exactly it; None
    when the application must render it."""
    if list(args) not in _HELP_ARGS or not _utf8(sys.stdout):
        return None
    import shutil

    if shutil.get_terminal_size().columns < HELP_COLUMNS:
        return None
    try:
        return HELP_FILE.read_text(encoding="utf-8")
    except OSError:
        return None


def quick_validate(args: Sequence[str], cwd: Path) -> tuple[list[tuple[str, bool]], int] | None:
    """What ``mindrian validate`` prints for ``args`` (each line, and whether on stderr) and its
    exit status, when it runs without the application; None when the application must run."""
    parsed = _validate_args(args)
    if parsed is None or not _utf8(sys.stdout) or not _utf8(sys.stderr):
        return None
    paths, quiet, github = parsed
    defer_import("inspect")
    from builder.cli.extra import require_build_extra
    from mindrian.project_root import find_project_root

    root = find_project_root(cwd) or cwd
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            require_build_extra("validate")
            from builder.orchestration.project import load_config
            from builder.orchestration.validation import validation_outputs

            config = load_config(root).with_switches()
            outputs = list(validation_outputs(paths, root, config, quiet=quiet, github=github))
    except Exception:  # the application runs it again and reports the failure its own way
        return None
    lines = [(line.text, line.err) for output in outputs for line in output.lines]
    if caught or any("\x1b" in text for text, _ in lines):
        return None
    return lines, max((output.exit_code for output in outputs), default=0)


class _Deferred(ModuleType):
    """Stands for a module not run yet (:func:`defer_import`): its first missing attribute
    runs the real module, which replaces it in ``sys.modules`` and lends it its names."""

    def __getattr__(self, attribute: str) -> Any:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = importlib.import_module(self.__name__)
        vars(self).update({k: v for k, v in vars(real).items() if k != "__class__"})
        return getattr(real, attribute)


def defer_import(name: str) -> None:
    """Let ``import name`` give a stand-in whose first use runs the module (unless it runs
    already): a quick path that imports a module for what it never reads then never pays
    for it.

    :mod:`dataclasses` imports :mod:`inspect` for one use, the signature it writes as the
    docstring of a class without one (this project's classes all have one); inspect and what
    it imports (ast, dis, tokenize) cost about a quarter of the interpreter's own start.
    (:class:`importlib.util.LazyLoader` cannot stand in on Python 3.11: ``import`` reads the
    module's ``__spec__``, which runs it.)"""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None:
        return
    stand_in = _Deferred(name)
    stand_in.__spec__ = spec
    sys.modules[name] = stand_in


def _validate_args(args: Sequence[str]) -> tuple[list[Path], bool, bool] | None:
    """(paths, --quiet, --format github) of ``validate PATH... [options]``; None for any other
    command line."""
    if not args or args[0] != "validate":
        return None
    paths: list[Path] = []
    quiet = False
    formats: list[str] = []
    rest = list(args[1:])
    while rest:
        arg = rest.pop(0)
        name, equals, value = arg.partition("=")
        if arg in _QUIET:
            quiet = True
        elif name == "--format":
            if not equals:
                if not rest:
                    return None
                value = rest.pop(0)
            formats.append(value)
        elif arg.startswith("-") or not arg:
            return None
        else:
            paths.append(Path(arg))
    if not paths or len(formats) > 1 or not set(formats) <= set(_FORMATS):
        return None
    return paths, quiet, formats == ["github"]


def _utf8(stream: object) -> bool:
    return str(getattr(stream, "encoding", "")).lower() == "utf-8"


def quick_select(
    args: Sequence[str], cwd: Path, environ: Mapping[str, str]
) -> tuple[str, str] | None:
    """What ``mindrian select`` prints for ``args`` on stdout and stderr, when the quick index
    can answer; None when the application must run."""
    parsed = _parse(args)
    if parsed is None:
        return None
    sentence, registry, limit, json_out = parsed
    defer_import("inspect")
    from mindrian.routing.semantic import configured_encoder

    if configured_encoder(environ) is not None:
        return None  # the quick index holds no vectors: the registry ranks with the encoder
    root: Path | None = None
    if registry is None:
        if environ.get("NEO4J_URI"):
            return None
        from mindrian.project import ProjectPaths

        root = _project_root(cwd)
        registry = ProjectPaths(root).embedded_registry
    elif not registry.is_absolute():
        registry = cwd / registry
    if registry.suffix in _YAML_SUFFIXES or not registry.is_file():
        return None
    chosen = registry

    def where() -> str:
        # The project (a TOML parse) only names the registry in a message or --json.
        return _display(chosen, root or _project_root(cwd))

    return _ranked(sentence, registry, limit, json_out, where)


def _project_root(cwd: Path) -> Path:
    from mindrian.project_root import find_project_root

    return find_project_root(cwd) or cwd


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
    sentence: str, registry: Path, limit: int, json_out: bool, where: Callable[[], str]
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
        return select_json(ranked, where(), (), (), (), limit, text=sentence) + "\n", ""
    if not ranked:
        from builder.pipeline.terminal import terminal_line

        return "", terminal_line(f"no registered framework matches (registry {where()})") + "\n"
    return select_table(ranked), ""
