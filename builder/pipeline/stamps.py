"""Build stamps: one file per skill saying that its last build went through every phase.

A stamp lives beside the checkpoints (``<checkpoints>/.stamps/<sha256 of the
skill's path>.json``, build state, never under the output folder) and records
what a no-op would otherwise find by reading seven checkpoint heads and hashing
the skill's folder and its installed package: each phase's input and output
digests, checks and warnings; the agent id and package identifier; and, for
every file the decision rests on (the skill's own files, its seven checkpoints,
its installed package), the size, ``mtime_ns``, ``ctime_ns`` and SHA-256.

**What is trusted.** A recorded file whose size, ``mtime_ns`` and ``ctime_ns``
are all unchanged, and whose ``mtime_ns`` is older than the stamp file's own, is
taken to hold the recorded bytes without being read. Any difference in those
makes its content be hashed and compared; equal content still counts as
unchanged (a touched file is no rebuild). An edit that keeps size, ``mtime_ns``
*and* ``ctime_ns`` is not seen: restoring ``mtime`` with ``touch -d``/``os.utime``
changes ``ctime``, so that takes a changed system clock or a file system without
those times (as ``make`` and git's index assume). A file written in the same
clock tick as the stamp, or later, is "racy" and always hashed, like git's
racily clean entries: a coarse clock cannot hide an edit made just after the stamp.

A stamp says nothing on its own: :func:`builder.orchestration.runner.stamped_report`
recomputes every phase's input digest (code, configuration, templates, …) and
compares it with the recorded one. A stamp that is missing, unreadable, of
another format or for another skill is no stamp; the build then decides from the
checkpoints as without stamps.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from stat import S_IXUSR
from typing import Any

from builder.pipeline.contract import CheckResult
from builder.pipeline.serial import from_plain, to_plain
from builder.pipeline.transaction import file_digest
from mindrian.atomic import atomic_write_text

__all__ = [
    "FileStamp",
    "PhaseStamp",
    "SavedPhase",
    "Stamp",
    "StampStore",
    "Verified",
    "Written",
    "observe",
    "stamp_files",
    "verify_files",
]

#: Format of the stamp files; a stamp of another format is ignored (rebuilt from checkpoints).
_FORMAT = 2
#: The stamp's fields that list files, each file written as a row of its :class:`FileStamp` fields.
_FILE_LISTS = ("sources", "checkpoints", "package")
#: Folder of the stamps inside the checkpoint folder (no agent id can start with a dot).
_FOLDER = ".stamps"


@dataclass(frozen=True)
class FileStamp:
    """What a stamp knows of one file."""

    name: str
    """POSIX path relative to the folder the stamp names it in."""
    size: int
    """``st_size`` when recorded."""
    mtime_ns: int
    """``st_mtime_ns`` when recorded."""
    ctime_ns: int
    """``st_ctime_ns`` when recorded (``os.utime`` cannot set it back)."""
    sha256: str
    """SHA-256 hex of the bytes recorded, marked when the file is executable
    (:func:`builder.pipeline.transaction.file_digest`: a changed mode is a changed file)."""


@dataclass(frozen=True)
class PhaseStamp:
    """One phase as its checkpoint head had it."""

    number: int
    """1-based phase number."""
    phase: str
    """Phase name."""
    input_digest: str
    """The checkpoint's input digest."""
    output_digest: str
    """The checkpoint's output digest."""
    checks: tuple[CheckResult, ...]
    """The checkpoint's checks (all passed)."""
    warnings: tuple[str, ...]
    """The checkpoint's warnings."""


@dataclass(frozen=True)
class Stamp:
    """A skill's complete, passing build, as recorded after it."""

    display: str
    """The skill's path as built (the stamp's key)."""
    agent_id: str
    """Its agent id (its checkpoint folder)."""
    identifier: str | None
    """Its package identifier, as phase 1's digest index records it."""
    source_digest: str
    """:attr:`SkillSource.digest` of the bytes built."""
    phases: tuple[PhaseStamp, ...]
    """Every phase, in order."""
    sources: tuple[FileStamp, ...]
    """SKILL.md (or CHAIN.md) and the folder files read, relative to the skill's folder."""
    checkpoints: tuple[FileStamp, ...]
    """The agent's checkpoint files, relative to its checkpoint folder."""
    package: tuple[FileStamp, ...]
    """The installed package's files, relative to the package folder."""


#: The members of a stamp file beside ``format``: the fields of a :class:`Stamp`.
_FIELDS = frozenset(f.name for f in fields(Stamp))


@dataclass(frozen=True)
class Verified:
    """The outcome of :func:`verify_files` when nothing changed."""

    files: tuple[FileStamp, ...]
    """The files as they are now (new times where content had to be hashed)."""
    rewrite: bool
    """Some file had to be hashed: writing the stamp again lets the next run trust its times."""


@dataclass(frozen=True)
class Written:
    """A file as a build wrote it: what a stamp records of it, known without reading it back."""

    file: FileStamp
    """Its stamp: the digest of the bytes written, the times of its stat right after the write."""
    inode: int
    """``st_ino`` of that stat: a file replaced since, even with equal times, is another one."""

    @classmethod
    def of(cls, name: str, data: bytes, after: os.stat_result) -> Written:
        """The record of ``data`` written as ``name``, stat'ed as ``after`` right after."""
        digest = file_digest(data, bool(after.st_mode & S_IXUSR))
        stamp = FileStamp(name, after.st_size, after.st_mtime_ns, after.st_ctime_ns, digest)
        return cls(stamp, after.st_ino)

    def holds(self, folder: Path) -> bool:
        """Whether the file under ``folder`` is still the one written: same inode, size and
        times (anything that wrote to it, replaced it or changed its mode since moved its
        ``ctime``); a file that does not hold is read again by whoever relied on it."""
        try:
            now = os.stat(folder / self.file.name)
        except OSError:
            return False
        recorded = (self.inode, self.file.size, self.file.mtime_ns, self.file.ctime_ns)
        return (now.st_ino, now.st_size, now.st_mtime_ns, now.st_ctime_ns) == recorded


@dataclass(frozen=True)
class SavedPhase:
    """A phase's passing checkpoint as this build wrote it (:class:`~builder.pipeline.checkpoints.
    CheckpointStore` ``.write``): a stamp made after the build takes it rather than reading and
    parsing the checkpoint again."""

    phase: PhaseStamp
    """What the checkpoint's head says."""
    file: Written
    """The checkpoint file, relative to the agent's checkpoint folder."""


def observe(folder: Path, names: Iterable[str]) -> dict[str, os.stat_result]:
    """``os.stat`` of each name under ``folder``, taken *before* the files are read.

    An edit between this and the read leaves newer times than recorded, so the
    next run hashes the file rather than trusting a stale record.
    """
    return {name: os.stat(folder / name) for name in names}


def stamp_files(
    seen: dict[str, os.stat_result], contents: Iterable[tuple[str, bytes]]
) -> tuple[FileStamp, ...] | None:
    """File stamps from stats taken by :func:`observe` and the bytes read after; None when the
    names differ (a file came or went in between)."""
    data = dict(contents)
    if sorted(data) != sorted(seen):
        return None
    return tuple(
        FileStamp(
            name,
            seen[name].st_size,
            seen[name].st_mtime_ns,
            seen[name].st_ctime_ns,
            file_digest(data[name], bool(seen[name].st_mode & S_IXUSR)),
        )
        for name in sorted(data)
    )


def verify_files(
    folder: Path, names: Sequence[str], recorded: Sequence[FileStamp], stamped_ns: int
) -> Verified | None:
    """Whether the files ``names`` under ``folder`` still hold what ``recorded`` says (see the
    module docstring for what is trusted); None when a file changed, came or went.

    ``stamped_ns`` is the stamp file's ``mtime_ns``.
    """
    if tuple(names) != tuple(r.name for r in recorded):
        return None
    now: list[FileStamp] = []
    rewrite = False
    base = os.fspath(folder)
    for record in recorded:
        path = f"{base}/{record.name}"  # str, not Path: a no-op stats thousands of files
        try:
            stat = os.stat(path)
        except OSError:
            return None
        times = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
        if times == (record.size, record.mtime_ns, record.ctime_ns) and (
            stat.st_mtime_ns < stamped_ns
        ):
            now.append(record)
            continue
        if stat.st_size != record.size or _digest(path, stat) != record.sha256:
            return None
        rewrite = True
        now.append(FileStamp(record.name, *times, record.sha256))
    return Verified(tuple(now), rewrite)


def _row(file: FileStamp) -> list[Any]:
    """The row a stamp file holds for ``file`` (its fields in order)."""
    return [file.name, file.size, file.mtime_ns, file.ctime_ns, file.sha256]


def _file(row: Any) -> FileStamp:
    """A :class:`FileStamp` from its row; ``ValueError`` when the row is not one."""
    name, size, mtime_ns, ctime_ns, sha256 = row
    # Exact types, spelled out: a no-op reads some twenty rows a skill.
    if type(name) is not str or type(sha256) is not str:
        raise ValueError(f"not a file row: {row!r}")
    if type(size) is not int or type(mtime_ns) is not int or type(ctime_ns) is not int:
        raise ValueError(f"not a file row: {row!r}")
    return FileStamp(name, size, mtime_ns, ctime_ns, sha256)


def _phase(plain: Any) -> PhaseStamp:
    """A :class:`PhaseStamp` from its plain form; ``ValueError``/``TypeError``/``KeyError`` when
    it is not one. By hand rather than from_plain: seven a skill, and a no-op reads every stamp."""
    number, name = plain["number"], plain["phase"]
    digests = (plain["input_digest"], plain["output_digest"])
    warnings = tuple(plain["warnings"])
    if type(number) is not int or not _strings((name, *digests, *warnings)):
        raise ValueError(f"not a phase: {plain!r}")
    checks = tuple(_check(c) for c in plain["checks"])
    return PhaseStamp(number, name, *digests, checks, warnings)


def _check(plain: Any) -> CheckResult:
    """A :class:`CheckResult` from its plain form (from_plain only for one with a location)."""
    if plain.get("location") is not None:
        located: CheckResult = from_plain(CheckResult, plain)
        return located
    name, passed, reason = plain["name"], plain["passed"], plain["reason"]
    if type(name) is not str or type(passed) is not bool or type(reason) is not str:
        raise ValueError(f"not a check: {plain!r}")
    return CheckResult(name, passed, reason)


def _strings(values: tuple[Any, ...]) -> bool:
    return all(type(v) is str for v in values)


def _optional_string(value: Any) -> str | None:
    if value is not None and type(value) is not str:
        raise ValueError(f"not a string: {value!r}")
    return value


def _digest(path: str, found: os.stat_result) -> str | None:
    """The file's digest as a package records it (its mode ``found`` by the caller's stat)."""
    try:
        with open(path, "rb") as handle:
            return file_digest(handle.read(), bool(found.st_mode & S_IXUSR))
    except OSError:
        return None


@dataclass(frozen=True)
class StampStore:
    """The stamps of a checkpoint folder."""

    checkpoints: Path
    """The checkpoint folder (stamps go in its ``.stamps`` sub-folder)."""

    def path(self, display: str) -> Path:
        """Where the stamp of the skill built as ``display`` lives."""
        key = hashlib.sha256(display.encode("utf-8")).hexdigest()
        return self.checkpoints / _FOLDER / f"{key}.json"

    def read(self, display: str) -> tuple[Stamp, int] | None:
        """The stamp and its file's ``mtime_ns``; None when there is none or it cannot be used."""
        try:
            with self.path(display).open("rb") as handle:
                text = handle.read()
                stamped_ns = os.fstat(handle.fileno()).st_mtime_ns
            plain = json.loads(text)
            if not isinstance(plain, dict) or plain.pop("format", None) != _FORMAT:
                return None
            # By hand rather than from_plain: a no-op reads a stamp of dozens of files per skill.
            shown, agent_id, digest = plain["display"], plain["agent_id"], plain["source_digest"]
            if plain.keys() != _FIELDS or not _strings((shown, agent_id, digest)):
                return None
            stamp = Stamp(
                display=shown,
                agent_id=agent_id,
                identifier=_optional_string(plain["identifier"]),
                source_digest=digest,
                phases=tuple(_phase(p) for p in plain["phases"]),
                sources=tuple(_file(row) for row in plain["sources"]),
                checkpoints=tuple(_file(row) for row in plain["checkpoints"]),
                package=tuple(_file(row) for row in plain["package"]),
            )
        except (OSError, ValueError, TypeError, KeyError):
            return None  # missing, damaged or of another shape: decided from the checkpoints
        return (stamp, stamped_ns) if stamp.display == display else None

    def write(self, stamp: Stamp) -> None:
        """Store ``stamp`` atomically (same stamp, same bytes)."""
        # The file lists as rows, by hand: a cold build writes a stamp of dozens of files a skill,
        # and astuple deep-copies each row.
        plain: dict[str, Any] = {
            "format": _FORMAT,
            **{
                f.name: to_plain(getattr(stamp, f.name))
                for f in fields(Stamp)
                if f.name not in _FILE_LISTS
            },
            **{key: [_row(f) for f in getattr(stamp, key)] for key in _FILE_LISTS},
        }
        text = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        # Not fsynced: a damaged or missing stamp is no stamp (read), only a full check.
        atomic_write_text(self.path(stamp.display), text + "\n", durable=False)

    def remove(self, display: str) -> None:
        """Forget the stamp of ``display`` (its build did not end complete)."""
        self.path(display).unlink(missing_ok=True)
