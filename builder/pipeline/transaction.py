"""One transaction per build: the package, registry.yaml and the registry change together.

Phase 6 renders and tests a package in a workspace under
``ProjectPaths.staging`` (inside the output's state folder, so on the output
folder's filesystem: every move below is a rename, never a copy across
devices) and leaves it *ready*. Phase 7 registers it and probes it, then
:meth:`PackageTransaction.install` swaps it in, keeping the replaced package
aside, and :meth:`~PackageTransaction.commit` drops that once
``registry.yaml`` is written, or :meth:`~PackageTransaction.roll_back` puts it
back. Names under ``staging/`` for package ``pkg``:

``pkg.build-XXXX/``   a phase 6 workspace (tests run there); removed when phase 6 ends
``pkg.ready/pkg/``    the tested package, waiting for phase 7 (or for :meth:`publish` when
                      the build stops after phase 6)
``pkg.previous/``     an install in progress: holds the replaced ``pkg/`` (a mark when new)
                      and, once written, the new ``registry.yaml``
``pkg.committed/``    the same, renamed: the commit point; the new ``registry.yaml`` is
                      moved into place and the folder deleted

A build killed at any point leaves one of these; :meth:`recover`, run when
phase 6 or 7 of the same package starts, finishes or undoes it, so the output
folder only ever holds the old package or the new one. That sweeping is why
one build writes to an output folder at a time (:func:`output_lock`): a second
build of the same package would take the first one's workspace and ready
package for a killed build's leftovers.

A batch registers several packages at once (:class:`RegistrationGroup`): each is
installed as above, and one journal folder, renamed at the commit point, holds
the new ``registry.yaml`` for all of them. Past that point each installed
package's ``pkg.previous/`` is waste, but :meth:`PackageTransaction.recover` would
put it back: so the folder is finished first, by whoever takes the output lock
next (:func:`output_lock`), before any package's recovery can run.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from builder.pipeline.output_folder import REGISTER_COMMITTED, REGISTER_PENDING
from mindrian.atomic import atomic_write_text
from mindrian.project import ProjectPaths

__all__ = [
    "EXECUTABLE_MARK",
    "LOCK_NAME",
    "SESSION_PREFIX",
    "GroupEntry",
    "PackageTransaction",
    "RegistrationGroup",
    "file_digest",
    "output_lock",
    "path_digest",
    "publish_ready",
    "sweep_sessions",
]

#: The file in the output's state folder that a writing build holds locked (``lockf``).
LOCK_NAME = "build.lock"
#: Name prefix of a shared test session's folder under the staging folder
#: (:mod:`builder.orchestration.shared_tests`; no package name has a ``-``).
SESSION_PREFIX = "tests-"

#: The new registry export's name inside the journal folder until it is moved into place.
_NEW_YAML = "registry.yaml.new"
#: In ``pkg.previous/`` when the install replaced no package (its roll back removes the new one).
_NOTHING_REPLACED = "nothing-replaced"
#: Folders that running a package's tests may leave; never part of what was generated.
_CACHE_PARTS = frozenset({"__pycache__", ".pytest_cache"})


@dataclass(frozen=True)
class PackageTransaction:
    """The staging files of one package in one output folder."""

    paths: ProjectPaths
    """The project layout for the build's output folder."""
    identifier: str
    """The package's name (its folder under the output folder)."""

    @property
    def final(self) -> Path:
        """Where the package is installed."""
        return self.paths.generated / self.identifier

    @property
    def ready(self) -> Path:
        """The tested package waiting for phase 7 (``staging/pkg.ready/pkg``)."""
        return self._staging(".ready") / self.identifier

    def workspace(self) -> Path:
        """A fresh phase 6 workspace; leftovers of killed builds of this package go first."""
        self.paths.staging.mkdir(parents=True, exist_ok=True)
        for old in self.paths.staging.glob(f"{self.identifier}.build-*"):
            shutil.rmtree(old, ignore_errors=True)
        return Path(tempfile.mkdtemp(prefix=f"{self.identifier}.build-", dir=self.paths.staging))

    def stage(self, package: Path) -> None:
        """Make ``package`` (a tested folder in a workspace) the ready one, replacing any older."""
        shutil.rmtree(self._staging(".ready"), ignore_errors=True)
        self._staging(".ready").mkdir(parents=True)
        os.rename(package, self.ready)

    def install(self) -> None:
        """Swap the ready package in, keeping the installed one aside until commit or roll back."""
        aside = self._staging(".previous")
        aside.mkdir(parents=True)
        if self.final.exists():
            os.rename(self.final, aside / self.identifier)
        else:
            (aside / _NOTHING_REPLACED).touch()
        self.final.parent.mkdir(parents=True, exist_ok=True)
        os.rename(self.ready, self.final)
        shutil.rmtree(self._staging(".ready"))

    def publish(self) -> None:
        """Install the ready package without registering it (``build --until code_generation``).

        No journal: there is no registry.yaml to keep in step, and the next phase 7
        registers what is installed. The replaced package is moved into a folder named
        like a workspace, so the next phase 6 of this package sweeps it if a kill leaves it.
        """
        self.paths.staging.mkdir(parents=True, exist_ok=True)
        replaced = Path(
            tempfile.mkdtemp(prefix=f"{self.identifier}.build-", dir=self.paths.staging)
        )
        if self.final.exists():
            os.rename(self.final, replaced / self.identifier)
        self.final.parent.mkdir(parents=True, exist_ok=True)
        os.rename(self.ready, self.final)
        shutil.rmtree(self._staging(".ready"))
        shutil.rmtree(replaced)

    def commit(self, registry_yaml: str) -> None:
        """Make the install permanent together with ``registry_yaml``, the new registry export.

        The text is written beside the replaced package first; renaming that
        folder is the one step that commits both, so a kill before it rolls
        both back and a kill after it rolls both forward (:meth:`recover`).
        """
        atomic_write_text(self._staging(".previous") / _NEW_YAML, registry_yaml)
        os.rename(self._staging(".previous"), self._staging(".committed"))
        self._roll_forward()

    def _roll_forward(self) -> None:
        done = self._staging(".committed")
        if (done / _NEW_YAML).exists():
            os.replace(done / _NEW_YAML, self.paths.registry_yaml)
        shutil.rmtree(done)

    def roll_back(self) -> None:
        """Undo :meth:`install`: the replaced package (or nothing) is installed again."""
        aside = self._staging(".previous")
        replaced = aside / self.identifier
        # Until the ready package is renamed into place, what is installed (if anything) is
        # the old package: a kill between making the folder aside and moving it there left
        # it in place, and it must stay. So it must once a roll back killed before dropping
        # the folder has moved the old one back: the installed one is the new one only while
        # the old one, or the mark that there was none, is still aside.
        new_installed = replaced.exists() or (aside / _NOTHING_REPLACED).exists()
        if not self.ready.exists() and self.final.exists() and new_installed:
            shutil.rmtree(self.final)
        if replaced.exists():
            os.rename(replaced, self.final)
        shutil.rmtree(aside)

    def recover(self) -> None:
        """Finish or undo what a killed build of this package left (see the module docstring).

        Only under the output lock (:func:`output_lock`), which first finishes a group a killed
        build committed. Not here: in a running build, another thread's group may be committed
        and still finishing, and its replaced packages are its own to delete.
        """
        if self._staging(".committed").exists():
            self._roll_forward()
        elif self._staging(".previous").exists():
            self.roll_back()

    def settled(self) -> bool:
        """No ready package waits and no install is in progress: the installed one is current."""
        # Strings rather than Paths: a no-op asks for every installed package.
        staging = os.path.join(os.fspath(self.paths.staging), self.identifier)
        return not any(os.path.exists(staging + s) for s in (".ready", ".previous", ".committed"))

    def installed_files(self) -> tuple[str, ...]:
        """Package-relative POSIX paths of the installed package's files (caches left out),
        sorted; empty when it is not installed."""
        # os.walk and strings, not rglob and Paths: a no-op lists every installed package.
        top = os.fspath(self.final)
        names = []
        for folder, subdirs, files in os.walk(top):
            subdirs[:] = [d for d in subdirs if d not in _CACHE_PARTS]
            prefix = folder[len(top) + 1 :].replace(os.sep, "/") + "/" if folder != top else ""
            names += [prefix + f for f in files if not f.endswith(".pyc")]
        return tuple(sorted(names))

    def ready_matches(self, files: dict[str, str]) -> bool:
        """Whether the ready package holds exactly ``files`` (relative path to digest)."""
        return _tree_digests(self.ready) == files

    def installed_matches(self, files: dict[str, str]) -> bool:
        """Whether the installed package holds exactly ``files`` (relative path to digest)."""
        return _tree_digests(self.final) == files

    def _staging(self, suffix: str) -> Path:
        return self.paths.staging / f"{self.identifier}{suffix}"


#: The file in a group registration's journal folder naming its frameworks and packages.
_GROUP_ENTRY = "registering.json"


@dataclass(frozen=True)
class GroupEntry:
    """One framework of a group registration and the package it is installed as."""

    framework: str
    """The framework id."""
    identifier: str
    """The package's name."""


@dataclass(frozen=True)
class RegistrationGroup:
    """The journal of one group registration: its frameworks reach the registry database, their
    packages the output folder and ``registry.yaml`` its new text together, or none of them does.

    :meth:`begin` names the group in ``staging/`` (:data:`REGISTER_PENDING`) before
    the first database write. The caller then writes the database and installs the
    packages (:meth:`PackageTransaction.install`); :meth:`commit` puts the new
    ``registry.yaml`` beside them and renames the folder (:data:`REGISTER_COMMITTED`),
    the one step that commits the group, then moves the file into place and drops
    the replaced packages (:meth:`finish`). A group killed before that rename is
    undone: :meth:`pending` names what to put back (each package rolled back by its own
    recovery, each framework put back in the database as ``registry.yaml`` holds it,
    under the registry's writer lock); one killed after it is finished.
    """

    paths: ProjectPaths
    """The project layout of the build's output folder."""

    def begin(self, entries: Sequence[GroupEntry]) -> None:
        """Record that ``entries`` are about to be written (the folder must not exist)."""
        plain = [{"framework": e.framework, "identifier": e.identifier} for e in entries]
        self._pending.mkdir(parents=True)
        atomic_write_text(self._pending / _GROUP_ENTRY, json.dumps(plain, sort_keys=True))

    def commit(self, registry_yaml: str | None) -> None:
        """Commit the group with ``registry_yaml`` (None: the file is left as it is, nothing
        having changed in it), then :meth:`finish` it."""
        if registry_yaml is not None:
            atomic_write_text(self._pending / _NEW_YAML, registry_yaml)
        os.rename(self._pending, self._committed)
        self.finish()

    def finish(self) -> bool:
        """Roll a committed group forward: ``registry.yaml`` into place, every replaced package
        of the group deleted, then the folder; whether there was one. Idempotent."""
        done = self._committed
        if not done.is_dir():
            return False
        if (done / _NEW_YAML).exists():
            self.paths.registry_yaml.parent.mkdir(parents=True, exist_ok=True)
            os.replace(done / _NEW_YAML, self.paths.registry_yaml)
        for entry in self._entries(done):
            aside = self.paths.staging / f"{entry.identifier}.previous"
            if aside.exists():
                shutil.rmtree(aside)
        shutil.rmtree(done)
        return True

    def pending(self) -> tuple[GroupEntry, ...] | None:
        """What a group killed before its commit point wrote, to be undone; None when no such
        group is left."""
        if not self._pending.is_dir():
            return None
        return self._entries(self._pending)

    def discard(self) -> None:
        """Forget a pending group, once it is undone (or nothing of it was written)."""
        shutil.rmtree(self._pending, ignore_errors=True)

    @property
    def _pending(self) -> Path:
        return self.paths.staging / REGISTER_PENDING

    @property
    def _committed(self) -> Path:
        return self.paths.staging / REGISTER_COMMITTED

    def _entries(self, folder: Path) -> tuple[GroupEntry, ...]:
        """The group's entries; none when its file is not whole (killed while written, which
        is before any database write)."""
        try:
            plain = json.loads((folder / _GROUP_ENTRY).read_text(encoding="utf-8"))
            return tuple(GroupEntry(str(e["framework"]), str(e["identifier"])) for e in plain)
        except (OSError, ValueError, KeyError, TypeError):
            return ()


#: Appended to a file's sha256 when its executable bit is set: a package's digests cover modes.
EXECUTABLE_MARK = "+x"


def file_digest(data: bytes, executable: bool) -> str:
    """A package file's digest: sha256 hex of ``data``, with :data:`EXECUTABLE_MARK` when
    ``executable`` (the skill's scripts keep their mode)."""
    return hashlib.sha256(data).hexdigest() + (EXECUTABLE_MARK if executable else "")


def path_digest(path: Path) -> str:
    """:func:`file_digest` of a file on disk (owner's executable bit)."""
    return file_digest(path.read_bytes(), bool(path.stat().st_mode & stat.S_IXUSR))


def _tree_digests(root: Path) -> dict[str, str] | None:
    """:func:`path_digest` of every file under ``root`` by relative POSIX path; None when it is
    no folder."""
    if not root.is_dir():
        return None
    return {
        p.relative_to(root).as_posix(): path_digest(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and not _CACHE_PARTS.intersection(p.parts) and p.suffix != ".pyc"
    }


def publish_ready(paths: ProjectPaths, agent_ids: Collection[str]) -> tuple[str, ...]:
    """Install, unregistered, the ready package of every agent in ``agent_ids``; their names.

    A build stopped after phase 6 (``--until code_generation``) gives the user the tested
    package in the output folder. Only the agents of this build's passing skills are
    published: a ready package left by an earlier build of a skill that now fails stays.
    """
    published = []
    for spec in sorted(paths.staging.glob("*.ready/*/spec.yaml")):
        data = yaml.safe_load(spec.read_text(encoding="utf-8"))
        if data.get("id") in agent_ids:
            PackageTransaction(paths, spec.parent.name).publish()
            published.append(spec.parent.name)
    return tuple(published)


@contextlib.contextmanager
def output_lock(paths: ProjectPaths, on_wait: Callable[[str], None]) -> Iterator[None]:
    """Hold the output folder for one build, waiting (and saying so once) while another has it.

    The lock is the kernel's, a POSIX record lock: it goes with the process that held it, so a
    killed build never leaves the folder locked, and the next build finds its leftovers as
    :meth:`recover` expects. Being the process's, it keeps other processes out, not another
    thread of this one: one build holds it per process (the CLI's). A process the build
    forked (a pool's worker) does not hold it, as it would hold a ``flock`` (that lock belongs
    to the open file, which a fork shares), keeping the folder locked after the build is
    killed, until the worker notices.
    The shared test sessions a killed build left belong to no package's recovery: whoever
    holds the lock next removes them, since no other build can be using them. A group
    registration a killed build committed is finished then too, before any package's
    recovery could put one of its replaced packages back (:class:`RegistrationGroup`).
    """
    paths.output_state.mkdir(parents=True, exist_ok=True)
    handle = os.open(paths.output_state / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (BlockingIOError, PermissionError):  # EAGAIN or EACCES: another process has it
            on_wait(f"waiting for another build writing to {paths.generated} to finish")
            fcntl.lockf(handle, fcntl.LOCK_EX)
        sweep_sessions(paths)
        RegistrationGroup(paths).finish()
        yield
    finally:
        os.close(handle)  # closing a descriptor of the file releases the lock


def sweep_sessions(paths: ProjectPaths) -> None:
    """Remove the shared test session folders killed builds left under the staging folder."""
    for old in paths.staging.glob(f"{SESSION_PREFIX}*"):
        shutil.rmtree(old, ignore_errors=True)
