"""A batch's use of build stamps (:mod:`builder.pipeline.stamps`): the no-op in O(changed).

Before anything is read, each skill's stamp is checked: its files by size and
times (hashed only when those differ), then every phase's input digest by
:func:`~builder.orchestration.runner.stamped_report`. A hit is that skill's
report, without reading its folder's files, its checkpoints or its package.
Every other skill goes the usual way (checkpoint heads, then the phases that
must run); when its build ends complete, a new stamp is written from what it
read, the checkpoints as the run wrote them (read back only when it did not, or
when a file is no longer the one written) and what the package then holds, and
a build that ends otherwise drops the stamp.

Only a build of all seven phases without ``--force``, ``--from`` or
``register`` uses stamps: those decide from the checkpoints on purpose.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from pathlib import Path

from builder.orchestration import runner
from builder.orchestration.runner import KeyLoader
from builder.phases import PHASE_NAMES
from builder.phases.keys import output_paths
from builder.pipeline.build_results import BuildReport
from builder.pipeline.checkpoints import CheckpointStore, parse_checkpoint
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import SkillSource
from builder.pipeline.errors import CompilerError
from builder.pipeline.serial import to_plain
from builder.pipeline.stamps import (
    FileStamp,
    PhaseStamp,
    Stamp,
    StampStore,
    Verified,
    observe,
    stamp_files,
    verify_files,
)
from builder.pipeline.transaction import PackageTransaction
from builder.skill.source import FolderListing, folder_listing, folder_names, located_file

__all__ = ["Hit", "Seen", "check_stamp", "make_stamp", "observe_source"]

_CODEGEN = PHASE_NAMES.index("code_generation")


@dataclass(frozen=True)
class Seen:
    """A skill's files as stat'ed just before they were read."""

    file: str
    """The name of SKILL.md (or CHAIN.md) in its folder."""
    stats: dict[str, os.stat_result]
    """Each file's stat, by folder-relative name (the skill file included)."""
    data: bytes = b""
    """The skill file's bytes, read right after its stat (its links name the other files):
    :func:`~builder.skill.source.load_source` takes them rather than reading it again."""
    listing: FolderListing | None = None
    """The other files, as found from those bytes and stat'ed here: load_source reads these
    rather than list the folder again."""


@dataclass(frozen=True)
class Hit:
    """A skill found current from its stamp: what the batch needs of it, and no more (a batch
    of many skills checks half of them in a forked copy, which sends its hits back pickled)."""

    report: BuildReport
    """Its report: every phase cached."""
    agent_id: str
    """Its agent id, as the stamp records it."""
    identifier: str | None
    """Its package identifier, as the stamp records it."""
    rewrite: Stamp | None
    """The stamp with the files' times as they are now, when some file had to be hashed: it
    is written again so the next run need not; None when the stamp stands as it is."""


def observe_source(path: Path, display: str) -> Seen | None:
    """Stat a skill's files before :func:`~builder.skill.source.load_source` reads them (the
    skill file is read here, after its stat, for the files it links to); None when they cannot
    be listed (the load reports why)."""
    try:
        file, shown = located_file(path, display)
        first = observe(file.parent, (file.name,))
        data = file.read_bytes()
        listing = folder_listing(file, shown, data)
        rest = observe(file.parent, listing.names)
        return Seen(file.name, {**first, **rest}, data, listing)
    except (CompilerError, OSError):
        return None


def check_stamp(
    path: Path, display: str, config: BuildConfig, checkpoints: Path, keys: KeyLoader
) -> Hit | None:
    """The skill's report from its stamp when the stamp still holds, else None (a full check)."""
    found = StampStore(checkpoints).read(display)
    if found is None:
        return None
    stamp, stamped_ns = found
    try:
        file, shown = located_file(path, display)
        data = file.read_bytes()
        names = (file.name, *folder_names(file, shown, data))
    except (CompilerError, OSError):
        return None
    sources = verify_files(file.parent, names, stamp.sources, stamped_ns)
    recorded = {s.name: s.sha256 for s in stamp.sources}
    if sources is None or _digest(data) != recorded.get(file.name) or shown != display:
        return None
    checked = _checked(stamp, config, checkpoints, stamped_ns)
    if checked is None:
        return None
    source = SkillSource(path=shown, data=data, digest=stamp.source_digest)
    report = runner.stamped_report(source, config, stamp, checkpoints_dir=checkpoints, keys=keys)
    if report is None:
        return None
    stored, package = checked
    if not any(v.rewrite for v in (sources, stored, package)):
        return Hit(report, stamp.agent_id, stamp.identifier, None)
    now = replace(stamp, sources=sources.files, checkpoints=stored.files, package=package.files)
    return Hit(report, stamp.agent_id, stamp.identifier, now)


def _checked(
    stamp: Stamp, config: BuildConfig, checkpoints: Path, stamped_ns: int
) -> tuple[Verified, Verified] | None:
    """The checkpoint files and the installed package, verified against the stamp."""
    folder = checkpoints / stamp.agent_id
    names = [f"{p.number}-{p.phase}.yaml" for p in stamp.phases]
    stored = verify_files(folder, sorted(names), stamp.checkpoints, stamped_ns)
    if stored is None or stamp.identifier is None:
        return None
    txn = PackageTransaction(output_paths(config.root, config.out_dir), stamp.identifier)
    if not txn.settled():
        return None
    package = verify_files(txn.final, txn.installed_files(), stamp.package, stamped_ns)
    return None if package is None else (stored, package)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_stamp(
    run: runner.Run, seen: Seen, report: BuildReport, config: BuildConfig, checkpoints: Path
) -> Stamp | None:
    """The stamp of a build that ended complete (every phase passed or cached); None otherwise,
    or when something changed under the build (it is then decided from the checkpoints again).

    The checkpoints the run wrote are taken as it wrote them while each file still holds
    (:meth:`~builder.pipeline.stamps.Written.holds`); else all seven are read back.
    """
    if report.problem is not None or report.agent_id is None:
        return None
    if len(report.phases) != len(PHASE_NAMES):
        return None
    source = run.source
    sources = stamp_files(seen.stats, ((seen.file, source.data), *source.files))
    read = _saved(run, checkpoints / report.agent_id) or _checkpoints(checkpoints, report.agent_id)
    if sources is None or read is None:
        return None
    phases, stored, (identifier, package), identity = read
    if identity is None or identity != (report.agent_id, identifier):
        return None
    installed = _package(config, identifier, package)
    if installed is None:
        return None
    return Stamp(
        display=source.path,
        agent_id=report.agent_id,
        identifier=identifier,
        source_digest=source.digest,
        phases=phases,
        sources=sources,
        checkpoints=stored,
        package=installed,
    )


#: What a stamp takes from an agent's checkpoints: every phase's head, the checkpoint files,
#: phase 6's (identifier, files) and the (agent id, identifier) phase 1's index gives.
_Read = tuple[
    tuple[PhaseStamp, ...],
    tuple[FileStamp, ...],
    tuple[str, dict[str, str]],
    tuple[str, str | None] | None,
]


def _saved(run: runner.Run, folder: Path) -> _Read | None:
    """What the run's own checkpoint writes tell, when it wrote all seven and each file is still
    the one written; None otherwise (then they are read back)."""
    saved = [run.saved.get(name) for name in PHASE_NAMES]
    if any(s is None or not s.file.holds(folder) for s in saved):
        return None
    kept = [s for s in saved if s is not None]
    output = to_plain(run.done[PHASE_NAMES[_CODEGEN]].output())
    identifier, package = output.get("identifier"), output.get("files")
    if not isinstance(identifier, str) or not isinstance(package, list):
        return None
    files = tuple(sorted((s.file.file for s in kept), key=lambda f: f.name))
    return (
        tuple(s.phase for s in kept),
        files,
        (identifier, {str(k): str(v) for k, v in package}),
        run.identity,
    )


def _checkpoints(checkpoints: Path, agent_id: str) -> _Read | None:
    """The agent's checkpoints read back: their heads, file stamps, phase 6's (identifier,
    files) and what phase 1's index says of the skill."""
    folder = checkpoints / agent_id
    names = [f"{n}-{name}.yaml" for n, name in enumerate(PHASE_NAMES, 1)]
    try:
        seen = observe(folder, names)
        contents = [(name, (folder / name).read_bytes()) for name in names]
        heads = [
            parse_checkpoint(data.decode("utf-8"), name, head=i != _CODEGEN)
            for i, (name, data) in enumerate(contents)
        ]
    except (OSError, UnicodeDecodeError, CompilerError):
        return None
    output = heads[_CODEGEN].output
    if not all(h.passed for h in heads) or not isinstance(output, dict):
        return None
    files = stamp_files(seen, contents)
    identifier, package = output.get("identifier"), output.get("files")
    if files is None or not isinstance(identifier, str) or not isinstance(package, list):
        return None
    phases = tuple(
        PhaseStamp(h.number, h.phase, h.input_digest, h.output_digest, h.checks, h.warnings)
        for h in heads
    )
    found = CheckpointStore(checkpoints).identity(phases[0].input_digest)
    identity = None if found is None else (found.agent_id, found.identifier)
    return phases, files, (identifier, {str(k): str(v) for k, v in package}), identity


def _package(
    config: BuildConfig, identifier: str, expected: dict[str, str]
) -> tuple[FileStamp, ...] | None:
    """The installed package's file stamps when it holds what phase 6 recorded, else None."""
    txn = PackageTransaction(output_paths(config.root, config.out_dir), identifier)
    if not txn.settled():
        return None
    try:
        names = txn.installed_files()
        seen = observe(txn.final, names)
        files = stamp_files(seen, ((n, (txn.final / n).read_bytes()) for n in names))
    except OSError:
        return None
    if files is None or {f.name: f.sha256 for f in files} != expected:
        return None
    return files
