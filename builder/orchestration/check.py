"""``mindrian check``: regenerate every skill in a scratch folder and diff it against
``generated/``.

Everything is rebuilt from nothing with a fresh checkpoint folder inside a
temporary directory (never the project's own). By default the check verifies
generation, not behaviour: phases 1-6 render, format and compile every
package without running its generated tests (``make test`` runs those), and
``registry.yaml`` is written from phase 5's framework records, which is what
phase 7 exports after registering them. ``full=True`` (``mindrian check
--full``) runs phases 1-7 as a build does, generated tests and end-to-end
probes included, with a fresh embedded registry (never Neo4j, even when
``NEO4J_URI`` is set). The scratch
output is then compared file by file with the committed folder: a changed
byte, a file only one side has, all count as drift and are shown as a unified
diff with paths relative to the project root. Caches that Python or pytest may
leave in the committed folder (``__pycache__``, ``.pytest_cache``, ``*.pyc``) are
not part of the builder's output and are ignored, and so is what ``pip install
generated/<package>`` leaves in a package folder (setuptools builds in place: ``build/`` and
``*.egg-info/`` directly inside it).

Nothing is reused from a previous build: every byte compared comes from this
run, so a hand-edited file and any drift between a fresh build and the
committed folder are caught. What is cut is cost that does not decide bytes:
the scratch folder lives in memory when it can (:func:`_scratch_parent`: no
disk syncs or deletes); phases 1-6 keep no checkpoints, which nothing would
read (:func:`builder.orchestration.runner.scratch_build`: the same phases
write the same packages, without rendering every output as checkpoint YAML);
and each worker returns phase 5's framework record with its report, which
this process renders while the workers still build later skills
(:class:`_RecordCollector`).
"""

from __future__ import annotations

import difflib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from builder.orchestration.batch import BatchOptions, Listener, Target, build_many
from builder.orchestration.runner import PhaseLoader
from builder.orchestration.shard import Shard, owned_tree, spec_sources
from builder.pipeline.build_results import BuildReport, PhaseReport
from builder.pipeline.config import BuildConfig
from mindrian.project import ProjectPaths

if TYPE_CHECKING:
    from mindrian.graph import FrameworkRecord

__all__ = [
    "IGNORED_DIRS",
    "IGNORED_SUFFIXES",
    "CheckResult",
    "check",
    "diff_trees",
    "executables_in",
    "read_tree",
    "summary",
]

#: Folders under the output folder that are caches, not builder output.
IGNORED_DIRS = frozenset({"__pycache__", ".pytest_cache"})
#: File suffixes that are caches, not builder output.
IGNORED_SUFFIXES = (".pyc", ".pyo")
#: A memory-backed folder most Linux systems mount.
_MEMORY = "/dev/shm"
#: Scratch bytes to expect per skill, with room to spare (about 190 kB measured: package and
#: checkpoints).
_BYTES_PER_SKILL = 1 << 20
#: The unsplit run.
WHOLE = Shard(1, 1)


@dataclass(frozen=True)
class CheckResult:
    """The outcome of ``mindrian check``."""

    builds: tuple[BuildReport, ...]
    """One report per skill, in build order."""
    drift: tuple[str, ...]
    """Paths (relative to the project root) that differ, sorted; empty when clean."""
    diff: str
    """The unified diff of every drifted file (committed → regenerated)."""
    files: int
    """Files compared."""

    @property
    def clean(self) -> bool:
        """Every skill built and nothing drifted."""
        return not self.drift and all(r.problem is None for r in self.builds)


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative POSIX path, sorted (caches and pip's leftovers left
    out); empty when ``root`` is missing.

    Files are what a recursive glob finds and ``is_file`` accepts (symbolic links to
    files included, folders they link to not entered); one ``scandir`` per folder,
    which a glob of ten thousand files took three times as long to do.
    """
    files: dict[str, bytes] = {}
    folders = [("", str(root))] if root.is_dir() else []
    while folders:
        prefix, folder = folders.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                relative = prefix + entry.name
                if entry.name in IGNORED_DIRS:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if not _pip_leftover(prefix, entry.name):
                        folders.append((relative + "/", entry.path))
                elif entry.is_file() and os.path.splitext(entry.name)[1] not in IGNORED_SUFFIXES:
                    with open(entry.path, "rb") as handle:
                        files[relative] = handle.read()
    return dict(sorted(files.items()))


def executables_in(root: Path) -> frozenset[str]:
    """The relative POSIX paths under ``root`` whose owner's executable bit is set (a package's
    copied scripts keep their mode, and the check compares it as git does)."""
    found = set()
    for folder, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if d not in IGNORED_DIRS]
        for name in files:
            path = os.path.join(folder, name)
            if os.stat(path).st_mode & stat.S_IXUSR:
                found.add(Path(path).relative_to(root).as_posix())
    return frozenset(found)


def _pip_leftover(prefix: str, name: str) -> bool:
    """``<package>/build`` or ``<package>/<name>.egg-info``: a folder of an in-place pip build."""
    return prefix.count("/") == 1 and (name == "build" or name.endswith(".egg-info"))


def _lines(data: bytes) -> list[str] | None:
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def _file_diff(name: str, old: bytes | None, new: bytes | None) -> str:
    """The unified diff of one file; ``None`` for the side that does not have it."""
    before = "/dev/null" if old is None else f"a/{name}"
    after = "/dev/null" if new is None else f"b/{name}"
    old_lines, new_lines = _lines(old or b""), _lines(new or b"")
    if old_lines is None or new_lines is None:
        return f"Binary files {before} and {after} differ\n"
    text = "".join(difflib.unified_diff(old_lines, new_lines, before, after))
    if text and not text.endswith("\n"):
        text += "\n\\ No newline at end of file\n"
    return (
        text or f"--- {before}\n+++ {after}\n(no line differs; the bytes do, e.g. line endings)\n"
    )


def diff_trees(
    committed: Mapping[str, bytes],
    fresh: Mapping[str, bytes],
    prefix: str,
    executables: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset()),
) -> tuple[tuple[str, ...], str]:
    """Paths that differ (``prefix/…``) in bytes or in mode (``executables``: the executable
    files committed and regenerated) and their unified diff, committed → regenerated."""
    drift = []
    parts = []
    for name in sorted(set(committed) | set(fresh)):
        old, new = committed.get(name), fresh.get(name)
        modes = tuple(_MODES[name in side] for side in executables)
        moved = old is not None and new is not None and modes[0] != modes[1]
        if old == new and not moved:
            continue
        shown = f"{prefix}/{name}" if prefix else name
        drift.append(shown)
        if moved:
            parts.append(f"diff a/{shown} b/{shown}\nold mode {modes[0]}\nnew mode {modes[1]}\n")
        if old != new:
            parts.append(_file_diff(shown, old, new))
    return tuple(drift), "".join(parts)


#: A file's mode as git shows it, by whether it is executable.
_MODES = {False: "100644", True: "100755"}


def check(
    root: Path,
    skills: Sequence[Target],
    config: BuildConfig,
    committed_dir: Path,
    *,
    jobs: int = 1,
    listener: Listener | None = None,
    full: bool = False,
    shard: Shard = WHOLE,
    phases: PhaseLoader | None = None,
) -> CheckResult:
    """Regenerate ``skills`` in a scratch folder and compare with ``committed_dir``.

    ``full`` runs the generated tests and phase 7 (probes, a scratch registry);
    ``shard`` builds only its part of ``skills`` and compares only the output
    it owns (see :mod:`builder.orchestration.shard`); ``phases`` replaces the phase
    loader (tests).
    """
    from builder.phases.registration import REGISTRY_YAML, RegistrationPhase
    from mindrian.graph.registry_yaml import write_registry_yaml

    selected = shard.select(skills, "display")
    with tempfile.TemporaryDirectory(
        prefix="mindrian-check-", dir=_scratch_parent(len(selected))
    ) as scratch:
        work = Path(scratch)
        out_dir = work / "generated"
        # the scratch output folder phases 6 and 7 write to
        out_dir.mkdir()
        options = BatchOptions(
            checkpoints_dir=work / "checkpoints",
            out_dir=out_dir,
            jobs=jobs,
            until_phase=None if full else "code_generation",
            run_tests=full,
            identities=ProjectPaths(root).checkpoints,
            scratch=not full,
        )
        fresh_config = config.with_switches(out_dir=str(out_dir), neo4j_uri=None)
        # An empty environment: a NEO4J_URI of the caller must not send the check to a server.
        registration = RegistrationPhase(work / "registry.lbug", env={}) if full else None
        collector = None if full else _RecordCollector(listener)
        builds = build_many(
            selected,
            fresh_config,
            options,
            listener=collector or listener,
            registration=registration,
            phases=phases,
        )
        paths = ProjectPaths(root, out_dir)
        if collector is not None:
            _install_ready(paths)
            records = tuple(collector.records)
            if records:
                write_registry_yaml(records, out_dir / REGISTRY_YAML)
        # The output's own state (staging, its registry index) is not generated output.
        shutil.rmtree(paths.output_state, ignore_errors=True)
        fresh = read_tree(out_dir)
        modes = (executables_in(committed_dir), executables_in(out_dir))
    committed = read_tree(committed_dir)
    if not shard.whole:
        owners = spec_sources(fresh) | spec_sources(committed)
        committed, fresh = owned_tree(committed, shard, owners), owned_tree(fresh, shard, owners)
    drift, diff = diff_trees(committed, fresh, _relative(committed_dir, root), modes)
    return CheckResult(
        builds=builds, drift=drift, diff=diff, files=len(set(committed) | set(fresh))
    )


def _scratch_parent(count: int) -> str | None:
    """Where the scratch folder goes: in memory (``/dev/shm``) when it has room for ``count``
    skills, else the system's temporary folder (None).

    Nothing in the scratch folder outlives the check, so the disk's durability buys
    nothing: every checkpoint and package file is written through
    :func:`mindrian.atomic.atomic_write_bytes` (an fsync each) and all of it is deleted
    at the end, which on a disk costs more than rendering. The bytes compared are the
    same wherever they were written; a folder that fills up fails the check, never
    passes it.
    """
    if not os.path.isdir(_MEMORY) or not os.access(_MEMORY, os.W_OK | os.X_OK):
        return None
    return _MEMORY if shutil.disk_usage(_MEMORY).free >= count * _BYTES_PER_SKILL else None


def _install_ready(paths: ProjectPaths) -> None:
    """Move every package phase 6 left ready into place, as phase 7 would after its checks.

    The scratch staging folder holds only this check's packages, each staged by
    a phase 6 whose checks passed, so each ready one is moved in as it is: no
    checkpoint is read for its name, and no journal is kept (the folder is
    thrown away whatever happens).
    """
    for ready in sorted(paths.staging.glob("*.ready")) if paths.staging.is_dir() else ():
        identifier = ready.name.removesuffix(".ready")
        os.rename(ready / identifier, paths.generated / identifier)


class _RecordCollector(Listener):
    """Passes a batch's news on, and keeps the framework record of every skill that built, as
    phase 7 would register it, from its report.

    The batch tells this process about each skill while the workers still build the
    later ones, so rendering each record's registry.yaml entry overlaps the build
    instead of following it.
    """

    def __init__(self, listener: Listener | None) -> None:
        self._listener = listener or Listener()
        self.records: list[FrameworkRecord] = []
        """The records read so far, in build order."""

    def started(self, target: Target) -> None:
        self._listener.started(target)

    def phase(self, report: PhaseReport) -> None:
        self._listener.phase(report)

    def finished(self, report: BuildReport) -> None:
        self._listener.finished(report)
        if report.problem is None and report.framework is not None:
            from mindrian.graph.registry_yaml import dump_registry_yaml

            # dump_registry_yaml keeps every entry's text: rendered now, while the workers
            # build, it leaves only joining for after the build.
            dump_registry_yaml((report.framework,))
            self.records.append(report.framework)


def _relative(folder: Path, root: Path) -> str:
    try:
        return folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return folder.as_posix()


def summary(result: CheckResult, shown: str) -> Iterable[str]:
    """The closing lines of ``mindrian check``."""
    failed = [r for r in result.builds if r.problem is not None]
    skills = len(result.builds)
    if failed:
        yield (
            f"check: {len(failed)} of {skills} skill(s) failed to build; {shown} cannot be "
            "confirmed"
        )
    if result.drift:
        yield (
            f"check: {len(result.drift)} of {result.files} file(s) in {shown} differ from a fresh "
            f"build of {skills} skill(s) (run `mindrian build --all` and commit)"
        )
    if result.clean:
        yield (
            f"check: {shown} matches a fresh build of {len(result.builds)} skill(s) "
            f"({result.files} files)"
        )
