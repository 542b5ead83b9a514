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

The digests are kept across processes in the user's cache folder
(:func:`builder.pipeline.cache.cache_dir`), trusted while no file of the two
packages was added, removed or changed in size or times (:func:`_known`).

Imports are found with a regular expression over the source rather than by
parsing it: this runs on every command, and a false match (an import quoted in
a docstring) only adds a file to the digest, which costs a rebuild, never a
stale checkpoint.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.pipeline.cache import cache_dir, read_json, write_json

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
        top = root / package
        files = top.rglob("*.py")
        seen.update(p for p in files if _SKIPPED.isdisjoint(p.relative_to(top).parts))
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
    known = _known(ROOT)
    key = f"{module} {' '.join(packages)}"
    digest = known.digests.get(key)
    if digest is None:
        digest = files_digest(ROOT, code_files(ROOT, (module,), packages), _read_once)
        known.keep(key, digest)
    return digest


#: Folders never looked in: bytecode caches, and the Node packages of the Cypher linter (no
#: module of ours is ever in one).
_SKIPPED = frozenset({"__pycache__", "node_modules"})


@dataclass
class _Known:
    """The code digests kept across processes for one code folder (see :func:`_known`)."""

    path: Path | None
    """The cache file; None when caching is off."""
    files: list[list[Any]]
    """Every file of the own packages as [name, size, mtime_ns, ctime_ns], taken before any was
    read for a digest."""
    digests: dict[str, str]
    """Digests still valid, by module and packages."""

    def keep(self, key: str, digest: str) -> None:
        """Remember a digest computed in this process, for the next ones."""
        self.digests[key] = digest
        write_json(self.path, {"files": self.files, "digests": self.digests})


@functools.cache
def _known(root: Path) -> _Known:
    """The digests an earlier process computed for ``root``'s code, when none of its files
    changed since (once a process).

    Every command computes the seven phases' digests, and reading and scanning
    every module costs more than the rest of a no-op; listing the files and
    comparing their sizes and times does not. A file is trusted when its size,
    ``mtime_ns`` and ``ctime_ns`` are those recorded and it is older than the
    cache file (a file written in the same clock tick is always read again, as
    :mod:`builder.pipeline.stamps` does); a file added or removed anywhere in
    the packages also discards the cache.
    """
    folder = cache_dir("code-digests")
    key = hashlib.sha256(os.fsencode(root)).hexdigest()
    path = None if folder is None else folder / f"{key}.json"
    files = _listing(root)
    if files is None:  # a linked folder: its files' times say nothing of where they live
        return _Known(None, [], {})
    known = _Known(path, files, {})
    try:
        cached_ns = path.stat().st_mtime_ns if path is not None else -1
    except OSError:
        return known
    data = read_json(path)
    if data is None or data.get("files") != files or not isinstance(data.get("digests"), dict):
        return known
    if any(mtime_ns >= cached_ns for _, _, mtime_ns, _ in files):
        return known
    known.digests.update((str(k), str(v)) for k, v in data["digests"].items())
    return known


def _listing(root: Path) -> list[list[Any]] | None:
    """[name, size, mtime_ns, ctime_ns] of every file of the own packages, sorted by name; None
    when a folder in them is a link."""
    found: list[list[Any]] = []
    pending = [os.path.join(root, package) for package in _OWN]
    base = len(os.fspath(root)) + 1
    while pending:
        try:
            with os.scandir(pending.pop()) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir():
                if entry.is_symlink():
                    return None
                if entry.name not in _SKIPPED:
                    pending.append(entry.path)
                continue
            with contextlib.suppress(OSError):
                stat = entry.stat()
                name = entry.path[base:].replace(os.sep, "/")
                found.append([name, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns])
    return sorted(found)


def phase_code_digest(phase: Any) -> str:
    """The digest of the code that can change ``phase``'s output (cached per process)."""
    packages = tuple(getattr(phase, "code_packages", ()))
    # A phase key (builder.phases.keys) names the module of the phase it stands for.
    module = getattr(phase, "code_module", None) or type(phase).__module__
    return _digest(module, packages)
