"""Reading a skill from disk: SKILL.md plus the files of its folder that travel with it.

Those are ``references/**`` and ``scripts/**`` (phase 1 reads them), ``assets/**``,
``examples/**`` and ``templates/**``, and any other file or folder of the skill folder that
SKILL.md links to (a Markdown link or a path in backticks: ``[form](forms.md)``,
```examples/load-context.sh```). All of them are copied into the package under ``skill/``
(phase 6), scripts with their executable bit, which is part of the digest.

This is the only place phase 1's input touches the file system. A folder is
built from its SKILL.md, else from its CHAIN.md (a chain, :mod:`builder.skill.chain`),
whose numbered stage files are read beside it as part of the folder. Limits keep a
hostile folder from exhausting memory; hidden files and ``__pycache__`` are
not part of a skill (editors and interpreters drop them there), so they are
skipped and never change the digest.

Error codes: S100 cannot read, S112 a link that leads out of the skill folder (both of check
``valid_yaml``); S107 SKILL.md over :data:`MAX_SKILL_BYTES`, S108 folder over
:data:`MAX_FOLDER_FILES` files or :data:`MAX_FOLDER_BYTES` bytes (both of check
:data:`LIMITS_CHECK`; S113, a reference over :data:`MAX_REFERENCE_BYTES`, is phase 1's, which
knows which files are references). A file
outside ``references/`` and ``scripts/`` over :data:`MAX_COPIED_FILE_BYTES`, or beyond
:data:`MAX_COPIED_BYTES` or :data:`MAX_FOLDER_FILES` of them together, is not read and is
left out of the package (``SkillSource.left_out``; phase 1 warns W122 for each).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from builder.pipeline.contract import SkillSource
from builder.pipeline.errors import SkillError, SourceLocation
from builder.skill.chain_layout import is_chain, skill_file, stage_files

__all__ = [
    "COPIED_PARTS",
    "FOLDER_PARTS",
    "LIMITS_CHECK",
    "MAX_COPIED_BYTES",
    "MAX_COPIED_FILE_BYTES",
    "MAX_FOLDER_BYTES",
    "MAX_FOLDER_FILES",
    "MAX_REFERENCE_BYTES",
    "MAX_SKILL_BYTES",
    "SKILL_FOLDER",
    "FolderListing",
    "folder_listing",
    "folder_names",
    "load_source",
    "located_file",
    "source_digest",
]

#: Largest SKILL.md accepted (1 MiB).
MAX_SKILL_BYTES = 1 << 20
#: Most files read from the folder parts.
MAX_FOLDER_FILES = 500
#: Most bytes read from the folder parts together (16 MiB).
MAX_FOLDER_BYTES = 16 << 20
#: Largest ``references/*.md`` file accepted (1 MiB, as SKILL.md): its whole text goes into
#: the package's spec.yaml and is one ``read_reference`` answer to the model.
MAX_REFERENCE_BYTES = MAX_SKILL_BYTES
#: Sub-folders of a skill that phase 1 reads.
FOLDER_PARTS: tuple[str, ...] = ("references", "scripts")
#: Sub-folders of a skill that only travel with it (copied into the package).
COPIED_PARTS: tuple[str, ...] = ("assets", "examples", "templates")
#: Largest file outside :data:`FOLDER_PARTS` copied into the package (1 MiB).
MAX_COPIED_FILE_BYTES = 1 << 20
#: Most bytes of files outside :data:`FOLDER_PARTS` copied into one package (4 MiB).
MAX_COPIED_BYTES = 4 << 20

#: The package folder that holds a copy of the skill's files.
SKILL_FOLDER = "skill"

#: Phase 1's check that the skill's files are within the size limits (a file too large is not
#: a YAML error: issue 38, 6).
LIMITS_CHECK = "within_limits"
#: The codes of :data:`LIMITS_CHECK` raised here (S113 is phase 1's).
_LIMIT_CODES = frozenset({"S107", "S108"})

#: A Markdown link's target or a span in backticks: where SKILL.md names a file of its folder.
_LINKED = re.compile(r"\]\(\s*<?([^)\s>]+)|`([^`\s]+)`")


def _error(code: str, message: str, path: str) -> SkillError:
    check = LIMITS_CHECK if code in _LIMIT_CODES else "valid_yaml"
    return SkillError(f"{check}: {message}", location=SourceLocation(path), code=code)


def source_digest(
    skill: bytes,
    files: Iterable[tuple[str, bytes]],
    executables: Iterable[str] = (),
    left_out: Iterable[tuple[str, int]] = (),
) -> str:
    """SHA-256 over each file's name, length and bytes (length-prefixed, so no two inputs
    collide), then the names of the executable files and the names and sizes of the files left
    out, when there are any (both change the package)."""
    import hashlib  # OpenSSL's start: only a caller that needs the digest pays for it

    digest = hashlib.sha256()
    for name, data in (("SKILL.md", skill), *files):
        encoded = name.encode("utf-8")
        digest.update(b"%d:%s\x00%d:" % (len(encoded), encoded, len(data)))
        digest.update(data)
    for name in executables:
        encoded = name.encode("utf-8")
        digest.update(b"x%d:%s\x00" % (len(encoded), encoded))
    for name, size in left_out:
        encoded = name.encode("utf-8")
        digest.update(b"o%d:%s\x00%d:" % (len(encoded), encoded, size))
    return digest.hexdigest()


@dataclass(frozen=True)
class FolderListing:
    """The files a build of a skill reads beside its skill file, as found from that file's
    bytes and the folder (:func:`folder_listing`)."""

    names: tuple[str, ...]
    """Folder-relative POSIX names, sorted: what phase 1 reads and what travels with it."""
    left_out: tuple[tuple[str, int], ...]
    """(name, size) of the files that would travel but are over the copy limits."""


def load_source(
    path: Path,
    display: str | None = None,
    data: bytes | None = None,
    *,
    digest: bool = True,
    listing: FolderListing | None = None,
) -> SkillSource:
    """Read a skill from a SKILL.md or CHAIN.md path or from its folder.

    ``display`` is how the user named it (used in messages); a folder's display
    gets the file's name appended; ``data``, the skill file's bytes when the caller has read
    them already, and ``listing`` what :func:`folder_listing` found from them (a build that
    stamps its skills lists each folder before reading it); ``digest=False`` leaves
    ``SkillSource.digest`` empty, for a caller that keeps nothing (``mindrian validate``:
    checkpoints and stamps are what read it). Raises SkillError for a missing or unreadable
    file, a folder without SKILL.md or CHAIN.md, and the size limits above.
    """
    file, shown = located_file(Path(path), display)
    data = _read(file, shown, MAX_SKILL_BYTES, "S107") if data is None else _checked(data, shown)
    if listing is None:
        listing = folder_listing(file, shown, data)
    files = _folder_files(file.parent, shown, listing.names)
    executables = tuple(name for name, _ in files if _executable(file.parent / name))
    return SkillSource(
        path=shown,
        data=data,
        files=files,
        digest=source_digest(data, files, executables, listing.left_out) if digest else "",
        executables=executables,
        left_out=listing.left_out,
    )


def located_file(path: Path, display: str | None = None) -> tuple[Path, str]:
    """The file :func:`load_source` reads for ``path`` and how it is shown; S100 for a folder
    without one."""
    file = skill_file(path)  # one stat: a no-op locates every skill's file
    folder = file != path
    shown = (display if display is not None else path.as_posix()).replace("\\", "/")
    if folder and not shown.endswith(file.name):
        shown = f"{shown.rstrip('/')}/{file.name}"
    if folder and not file.is_file():
        where = f"the folder {path.as_posix()!r}"
        raise _error("S100", f"{where} has no SKILL.md (nor a chain's CHAIN.md)", shown)
    return file, shown


def folder_names(file: Path, shown: str, data: bytes | None = None) -> tuple[str, ...]:
    """Folder-relative POSIX names, sorted, of the files a build of ``file`` reads beside it
    (a build stamp compares them with the names it recorded); ``data`` is the skill file's
    bytes (read here when not given), whose links name some of them."""
    data = _read(file, shown, MAX_SKILL_BYTES, "S107") if data is None else data
    return folder_listing(file, shown, data).names


def folder_listing(file: Path, shown: str, data: bytes) -> FolderListing:
    """The files a build of ``file`` reads beside it, found from its bytes ``data`` (its links
    name some of them) and the folder; S107 when ``data`` is over the limit (a caller that
    read them finds the skill refused, and :func:`load_source` says why from the file)."""
    _checked(data, shown)
    entries = _entries(file.parent)
    kept, left_out = _travelling(file, shown, data, entries)
    return FolderListing(tuple(sorted({*_read_names(file, shown, entries), *kept})), left_out)


#: A name every file system compares as written but for the case of its letters (no dot at
#: either end, no ``~`` of a DOS short name, nothing Unicode may normalise): when no entry of
#: a folder's listing equals it in lower case, the folder has nothing of that name.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")


def _entries(folder: Path) -> frozenset[str] | None:
    """The names of the entries in ``folder``, in lower case, to know without a look-up that a
    plain name is not there (:func:`_absent`); None when it cannot be listed (every name is
    looked up then).

    A no-op checks every skill's folder names, and most names in backticks are no file (code,
    options, identifiers): one listing of the folder spares a failing look-up for each."""
    try:
        with os.scandir(folder) as entries:
            return frozenset(entry.name.lower() for entry in entries)
    except OSError:
        return None


def _absent(name: str, entries: frozenset[str] | None) -> bool:
    """Whether the folder whose ``entries`` (:func:`_entries`) these are surely holds nothing
    named ``name``."""
    return entries is not None and name.lower() not in entries and bool(_PLAIN_NAME.fullmatch(name))


def _read_names(file: Path, shown: str, entries: frozenset[str] | None) -> list[str]:
    """The files phase 1 reads: references/, scripts/ and a chain's stage files."""
    folder = file.parent
    parts = [part for part in FOLDER_PARTS if not _absent(part, entries)]
    names = [name for part in parts for name in _walk(folder / part, folder, shown)]
    if is_chain(shown):
        names += [stage.path for stage in stage_files(_top_files(folder, folder, shown))]
    return names


def _travelling(
    file: Path, shown: str, data: bytes, entries: frozenset[str] | None
) -> tuple[list[str], tuple[tuple[str, int], ...]]:
    """(names copied, (name, size) left out) of the files that only travel with the skill:
    :data:`COPIED_PARTS` and what SKILL.md links to, in name order, within the size limits
    (``entries``: :func:`_entries` of its folder)."""
    folder = file.parent
    base = os.fspath(folder)
    parts = [part for part in COPIED_PARTS if not _absent(part, entries)]
    found = {name for part in parts for name in _walk(folder / part, folder, shown)}
    found |= _linked(file, shown, data.decode("utf-8", errors="replace"), entries)
    kept: list[str] = []
    left_out: list[tuple[str, int]] = []
    total = 0
    for name in sorted(found):
        if name.split("/", 1)[0] in FOLDER_PARTS or name == file.name:
            continue
        size = os.stat(f"{base}/{name}").st_size
        over = size > MAX_COPIED_FILE_BYTES or total + size > MAX_COPIED_BYTES
        if over or len(kept) >= MAX_FOLDER_FILES:
            left_out.append((name, size))
            continue
        total += size
        kept.append(name)
    return kept, tuple(left_out)


def _linked(file: Path, shown: str, text: str, entries: frozenset[str] | None) -> set[str]:
    """Files of the skill folder that SKILL.md links to or names in backticks (a folder named
    gives all its files); hidden names, ``..`` and absolute paths are never followed. A name
    whose first part :func:`_absent` says is not in the folder (``entries``) is not looked up.
    """
    folder = file.parent
    base = os.fspath(folder)
    names: set[str] = set()
    tried: set[str] = set()
    # Each text once, in order (prose names the same file many times, code the same words).
    for span in dict.fromkeys(link or named for link, named in _LINKED.findall(text)):
        target = span.split("#", 1)[0].split("?", 1)[0]
        parts = [p for p in target.removeprefix("./").split("/") if p]
        if not parts or ":" in target or target.startswith(("/", "~", "\\")):
            continue
        if any(p.startswith(".") or p == "__pycache__" for p in parts):
            continue
        relative = "/".join(parts)
        if relative in tried:  # prose names the same file many times; one look each
            continue
        tried.add(relative)
        if _absent(parts[0], entries):
            continue
        kind = _kind(f"{base}/{relative}", folder)
        if kind is _FOLDER:
            names.update(_scan(f"{base}/{relative}", relative, folder, shown))
        elif kind is _FILE:
            names.add(relative)
    return names


#: What :func:`_kind` finds at a name SKILL.md gives.
_FILE, _FOLDER = "file", "folder"
#: The errors of a look-up that mean "nothing there": those :meth:`Path.is_file` takes so, and a
#: name too long for the file system (prose may hold a long token in backticks, base64 say).
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP, errno.ENAMETOOLONG})


def _kind(path: str, skill: Path) -> str | None:
    """:data:`_FOLDER` for a folder (not a link to one), :data:`_FILE` for a regular file or a
    link to one inside ``skill``, else None: what ``Path.is_symlink``, ``is_dir`` and
    ``is_file`` would say, from one ``lstat`` (a no-op looks up every name in backticks of
    every skill, most of them no file at all). Errors other than :data:`_ABSENT` are raised."""
    try:
        mode = _mode(path, os.lstat)
        linked = mode is not None and stat.S_ISLNK(mode)
        if linked:
            if not _inside(Path(path), skill):
                return None  # prose may name such a link; it is never followed out of the folder
            mode = _mode(path, os.stat)
    except ValueError:  # a NUL in the name: no such file
        return None
    if mode is None or (linked and stat.S_ISDIR(mode)):
        return None
    return _FOLDER if stat.S_ISDIR(mode) else _FILE if stat.S_ISREG(mode) else None


def _mode(path: str, look: Callable[[str], os.stat_result]) -> int | None:
    """``look(path).st_mode``; None when there is nothing there (:data:`_ABSENT`)."""
    try:
        return look(path).st_mode
    except OSError as error:
        if error.errno in _ABSENT:
            return None
        raise


def _executable(path: Path) -> bool:
    """Whether the owner may execute the file (what git records as mode 100755)."""
    return bool(os.stat(path).st_mode & stat.S_IXUSR)


def _checked(data: bytes, shown: str) -> bytes:
    """The skill file's ``data`` as read by a caller, held to :data:`MAX_SKILL_BYTES`."""
    if len(data) > MAX_SKILL_BYTES:
        name = PurePosixPath(shown).name
        raise _error("S107", f"{name} is over the limit of {MAX_SKILL_BYTES} bytes", shown)
    return data


def _read(file: Path, shown: str, limit: int, code: str) -> bytes:
    try:
        size = file.stat().st_size
        if size > limit:
            raise _error(code, f"{file.name} is {size} bytes; the limit is {limit} bytes", shown)
        with file.open("rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise _error("S100", f"cannot read {file.as_posix()!r}: no such file", shown) from None
    except IsADirectoryError:
        raise _error("S100", f"cannot read {file.as_posix()!r}: it is a folder", shown) from None
    except OSError as exc:
        raise _error(
            "S100", f"cannot read {file.as_posix()!r}: {exc.strerror or exc}", shown
        ) from None
    if len(data) > limit:  # the file grew after stat
        raise _error(code, f"{file.name} is over the limit of {limit} bytes", shown)
    return data


def _folder_files(
    folder: Path, shown: str, names: tuple[str, ...]
) -> tuple[tuple[str, bytes], ...]:
    if len(names) > MAX_FOLDER_FILES:
        raise _error(
            "S108",
            f"the skill folder has {len(names)} files under references/ and scripts/; the limit is "
            f"{MAX_FOLDER_FILES}",
            shown,
        )
    files, total = [], 0
    for name in names:
        data = _read(folder / name, shown, MAX_FOLDER_BYTES - total, "S108")
        total += len(data)
        files.append((name, data))
    return tuple(files)


def _top_files(folder: Path, skill: Path, shown: str) -> Iterable[str]:
    """Names of the regular files directly in ``folder`` (a chain's stage files are there)."""
    for file in sorted(folder.iterdir()):
        if file.name.startswith("."):
            continue
        if file.is_symlink() and not _inside(file, skill):
            raise _error("S112", f"{file.as_posix()!r} links outside the skill folder", shown)
        if file.is_file():
            yield file.name


def _inside(link: Path, skill: Path) -> bool:
    # The skill folder is resolved only here, for a link: a no-op lists every skill's folder,
    # and resolving stats each component of its path.
    return link.resolve().is_relative_to(skill.resolve())


def _walk(top: Path, skill: Path, shown: str) -> Iterable[str]:
    """Folder-relative POSIX names of the regular files under ``top``, as :func:`os.walk` finds
    them (a folder that cannot be listed is left out).

    Hidden entries are skipped; links to folders are not followed; a link to a
    file is read only when it stays inside the skill folder. Directory entries
    rather than paths: a no-op lists every skill's folder, and an entry knows
    whether it is a link or a folder without asking the file system again.
    """
    yield from _scan(os.fspath(top), top.name, skill, shown)


def _scan(directory: str, prefix: str, skill: Path, shown: str) -> Iterable[str]:
    try:
        with os.scandir(directory) as listing:
            entries = [e for e in listing if not e.name.startswith(".")]
    except OSError:
        return
    folders = []
    for entry in entries:  # this folder's files first, then its sub-folders, as os.walk
        if _is_dir(entry):
            if entry.name != "__pycache__" and not entry.is_symlink():
                folders.append(entry)
            continue
        if entry.is_symlink():  # a Path only for a link: a no-op scans every skill's folder
            file = Path(entry.path)
            if not _inside(file, skill):
                raise _error("S112", f"{file.as_posix()!r} links outside the skill folder", shown)
        if entry.is_file():
            yield f"{prefix}/{entry.name}"
    for entry in folders:
        yield from _scan(entry.path, f"{prefix}/{entry.name}", skill, shown)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
