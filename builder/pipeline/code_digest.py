"""Per-phase code digests: the files whose edit can change a phase's output.

A phase's digest covers the module defining it and, transitively, every
``builder`` or ``mindrian`` module it imports (at the top or inside a
function, or by a quoted module name as ``importlib`` takes it), the parent
packages' ``__init__.py`` of each, and the ``schemas/*.json`` files a module
names. A phase that runs the runtime as a
whole (phase 6 runs the generated tests, phase 7 the end-to-end probe) lists
the packages it runs in ``code_packages``; every Python file of those counts.
So an edit of the Cypher linter reruns phase 5 and later, not phases 1-4, and
an edit of the runtime reruns phases 6 and 7 only (phase 3, which reads
``mindrian.handoff``, imports it and is covered too).

Imports are found with a regular expression over the source rather than by
parsing it: this runs on every command, and a false match (an import quoted in
a docstring) only adds a file to the digest, which costs a rebuild, never a
stale checkpoint.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "code_files", "files_digest", "phase_code_digest"]

#: The folder holding the ``builder`` and ``mindrian`` packages.
ROOT = Path(__file__).resolve().parents[2]
#: Top-level packages whose modules are followed.
_OWN = ("builder", "mindrian")

_FROM = re.compile(
    r"^[ \t]*from[ \t]+((?:builder|mindrian)(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)",
    re.MULTILINE,
)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+((?:builder|mindrian)(?:\.\w+)*)", re.MULTILINE)
_QUOTED = re.compile(r"[\"']((?:builder|mindrian)(?:\.\w+)+)[\"']")
_SCHEMA = re.compile(r"schemas/[\w.-]+\.json")


def _module_file(root: Path, name: str) -> Path | None:
    base = root.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(text: str) -> Iterable[str]:
    """Module names (own packages only) that ``text`` imports, possibly a few too many."""
    for match in _IMPORT.finditer(text):
        yield match.group(1)
    for match in _QUOTED.finditer(text):
        yield match.group(1)  # importlib.import_module("mindrian.handoff.context")
    for match in _FROM.finditer(text):
        module, names = match.group(1), match.group(2)
        yield module
        for part in names.strip("()").replace("\n", ",").split(","):
            word = part.split("#")[0].strip().split(" ")[0]
            if word.isidentifier():
                yield f"{module}.{word}"  # ``from builder.orchestration import runner``


def _parents(name: str) -> Iterable[str]:
    parts = name.split(".")
    for end in range(1, len(parts)):
        yield ".".join(parts[:end])


def code_files(
    root: Path, modules: Iterable[str], packages: Iterable[str] = ()
) -> tuple[Path, ...]:
    """The files of ``modules`` under ``root`` and all they import; every file of ``packages``.

    Each module is scanned once a process (code does not change under a running build).
    """
    seen: set[Path] = set()
    pending = list(modules)
    visited: set[str] = set()
    while pending:
        name = pending.pop()
        if name in visited or name.split(".")[0] not in _OWN:
            continue
        visited.add(name)
        found = _module(root, name)
        if found is None:
            continue
        path, imported, schemas = found
        seen.add(path)
        seen.update(schemas)
        pending.extend(imported)
        pending.extend(_parents(name))
    for package in packages:
        seen.update(p for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts)
    return tuple(sorted(seen))


@functools.lru_cache(maxsize=4096)
def _module(root: Path, name: str) -> tuple[Path, tuple[str, ...], tuple[Path, ...]] | None:
    """(file, modules it imports, schema files it names) of module ``name``; read once a process.

    The seven phases share most of their modules, so each file is read and
    scanned once however many phase digests include it.
    """
    path = _module_file(root, name)
    if path is None:
        return None
    text = path.read_text(encoding="utf-8")
    schemas = (root / "builder" / ref for ref in _SCHEMA.findall(text))
    return path, tuple(_imported(text)), tuple(p for p in schemas if p.is_file())


def files_digest(
    root: Path, files: Iterable[Path], read: Callable[[Path], bytes] = Path.read_bytes
) -> str:
    """SHA-256 hex over the names (relative to ``root``) and bytes of ``files``."""
    digest = hashlib.sha256()
    for path in sorted(files):
        name = path.relative_to(root).as_posix().encode("utf-8")
        data = read(path)
        digest.update(b"%d:%s\x00%d:" % (len(name), name, len(data)))
        digest.update(data)
    return digest.hexdigest()


@functools.cache
def _read_once(path: Path) -> bytes:
    # The seven phase digests share most files, and code does not change under a running build.
    return path.read_bytes()


@functools.cache
def _digest(module: str, packages: tuple[str, ...]) -> str:
    return files_digest(ROOT, code_files(ROOT, (module,), packages), _read_once)


def phase_code_digest(phase: Any) -> str:
    """The digest of the code that can change ``phase``'s output (cached per process)."""
    packages = tuple(getattr(phase, "code_packages", ()))
    # A phase key (builder.phases.keys) names the module of the phase it stands for.
    module = getattr(phase, "code_module", None) or type(phase).__module__
    return _digest(module, packages)
