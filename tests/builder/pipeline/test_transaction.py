"""PackageTransaction: a package is installed with its registration or not at all."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from builder.pipeline.transaction import (
    GroupEntry,
    PackageTransaction,
    RegistrationGroup,
    output_lock,
)
from mindrian.project import ProjectPaths


def tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def staged(txn: PackageTransaction, text: str) -> None:
    """Phase 6: a tested package in a workspace becomes the ready one."""
    workspace = txn.workspace()
    (workspace / txn.identifier).mkdir()
    (workspace / txn.identifier / "agent.py").write_text(text, encoding="utf-8")
    txn.stage(workspace / txn.identifier)
    workspace.rmdir()


@pytest.fixture
def txn(tmp_path: Path) -> PackageTransaction:
    return PackageTransaction(ProjectPaths(tmp_path), "pkg")


def installed_old(txn: PackageTransaction) -> None:
    staged(txn, "old")
    txn.install()
    txn.commit("old: yaml\n")


def staging_names(txn: PackageTransaction) -> list[str]:
    return sorted(p.name for p in txn.paths.staging.iterdir())


def test_staging_lives_in_the_output_state_folder(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    assert paths.staging == tmp_path / ".mindrian" / "staging"
    other = ProjectPaths(tmp_path, tmp_path / "elsewhere")
    assert other.staging == tmp_path / "elsewhere" / ".mindrian" / "staging"
    assert other.embedded_registry == tmp_path / "elsewhere" / ".mindrian" / "registry.lbug"
    assert other.checkpoints == paths.checkpoints  # checkpoints stay with the project
    assert ProjectPaths(tmp_path, Path("generated")).embedded_registry == paths.embedded_registry


def test_install_then_commit_replaces_the_package_and_leaves_nothing(
    txn: PackageTransaction,
) -> None:
    installed_old(txn)
    staged(txn, "new")
    assert tree(txn.final) == {"agent.py": "old"}  # staging does not touch the output
    txn.install()
    txn.commit("new: yaml\n")
    assert tree(txn.final) == {"agent.py": "new"}
    assert txn.paths.registry_yaml.read_text(encoding="utf-8") == "new: yaml\n"
    assert staging_names(txn) == []


def test_roll_back_puts_the_old_package_back(txn: PackageTransaction) -> None:
    installed_old(txn)
    staged(txn, "new")
    txn.install()
    txn.roll_back()
    assert tree(txn.final) == {"agent.py": "old"}
    assert staging_names(txn) == []


def test_roll_back_of_a_new_package_removes_it(txn: PackageTransaction) -> None:
    staged(txn, "new")
    txn.install()
    txn.roll_back()
    assert not txn.final.exists()
    assert staging_names(txn) == []


def test_recover_undoes_an_install_a_killed_build_left(txn: PackageTransaction) -> None:
    installed_old(txn)
    staged(txn, "new")
    txn.install()  # killed here: registry.yaml was never written
    PackageTransaction(txn.paths, txn.identifier).recover()
    assert tree(txn.final) == {"agent.py": "old"}
    assert staging_names(txn) == []


def test_recover_finishes_a_committed_install(txn: PackageTransaction) -> None:
    installed_old(txn)
    staged(txn, "new")
    txn.install()
    (txn.paths.staging / "pkg.previous" / "registry.yaml.new").write_text("new: yaml\n")
    os.rename(txn.paths.staging / "pkg.previous", txn.paths.staging / "pkg.committed")
    txn.recover()  # killed just after the commit point: both move forward
    assert tree(txn.final) == {"agent.py": "new"}
    assert txn.paths.registry_yaml.read_text(encoding="utf-8") == "new: yaml\n"
    assert staging_names(txn) == []


def test_recover_before_the_commit_point_keeps_the_old_yaml(txn: PackageTransaction) -> None:
    installed_old(txn)
    staged(txn, "new")
    txn.install()
    (txn.paths.staging / "pkg.previous" / "registry.yaml.new").write_text("new: yaml\n")
    txn.recover()  # killed after writing the new export aside, before the rename
    assert tree(txn.final) == {"agent.py": "old"}
    assert txn.paths.registry_yaml.read_text(encoding="utf-8") == "old: yaml\n"
    assert staging_names(txn) == []


def test_a_new_workspace_clears_dead_workspaces_of_the_same_package_only(
    txn: PackageTransaction,
) -> None:
    dead = txn.workspace()
    other = PackageTransaction(txn.paths, "other").workspace()
    fresh = txn.workspace()
    assert not dead.exists() and other.exists() and fresh.exists()


def test_a_failed_move_during_install_is_rolled_back(
    txn: PackageTransaction, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed_old(txn)
    staged(txn, "new")
    real_rename = os.rename

    def failing(src: Any, dst: Any) -> None:
        if Path(src) == txn.ready:
            raise OSError("disk full")
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", failing)
    with pytest.raises(OSError, match="disk full"):
        txn.install()
    monkeypatch.setattr(os, "rename", real_rename)
    txn.recover()
    assert tree(txn.final) == {"agent.py": "old"}


@pytest.mark.parametrize("moves_done", [0, 1])
def test_recover_of_an_install_killed_between_its_moves_keeps_the_old_package(
    txn: PackageTransaction, monkeypatch: pytest.MonkeyPatch, moves_done: int
) -> None:
    """Killed after the folder aside was made and before ``moves_done + 1``-th rename: the
    old package is still installed (0) or aside (1); either way it is what recovery leaves."""
    installed_old(txn)
    staged(txn, "new")
    real_rename, done = os.rename, []

    def killed(src: Any, dst: Any) -> None:
        if len(done) == moves_done:
            raise KeyboardInterrupt  # stands for SIGKILL: nothing after it runs
        done.append(src)
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", killed)
    with pytest.raises(KeyboardInterrupt):
        txn.install()
    monkeypatch.setattr(os, "rename", real_rename)
    PackageTransaction(txn.paths, txn.identifier).recover()
    assert tree(txn.final) == {"agent.py": "old"}


def test_matches_compare_the_exact_file_set(txn: PackageTransaction) -> None:
    import hashlib

    staged(txn, "new")
    files = {"agent.py": hashlib.sha256(b"new").hexdigest()}
    assert txn.ready_matches(files) and not txn.installed_matches(files)
    txn.install()
    (txn.final / "__pycache__").mkdir()
    (txn.final / "__pycache__" / "agent.cpython-311.pyc").write_bytes(b"\0")
    assert txn.installed_matches(files)  # caches are not part of the package
    (txn.final / "extra.py").write_text("", encoding="utf-8")
    assert not txn.installed_matches(files)


@pytest.mark.parametrize("half_deleted", [False, True])
def test_recover_after_a_committed_group_keeps_the_new_package(
    txn: PackageTransaction, monkeypatch: pytest.MonkeyPatch, half_deleted: bool
) -> None:
    """A build killed while finishing its committed group (new registry.yaml in place, the
    replaced package being deleted): the next build's recovery keeps the new package."""
    installed_old(txn)
    (txn.final / "tools.py").write_text("old tools", encoding="utf-8")
    staged(txn, "new")
    group = RegistrationGroup(txn.paths)
    group.begin([GroupEntry("fw", txn.identifier)])
    txn.install()

    def killed(path: Any, *args: Any, **kwargs: Any) -> None:
        if half_deleted:  # the kill came midway through deleting the replaced package
            (Path(path) / txn.identifier / "tools.py").unlink()
        raise KeyboardInterrupt  # stands for the SIGKILL: nothing after it runs

    with monkeypatch.context() as patched:
        patched.setattr("builder.pipeline.transaction.shutil.rmtree", killed)
        with pytest.raises(KeyboardInterrupt):
            group.commit("new: yaml\n")
    assert txn.paths.registry_yaml.read_text(encoding="utf-8") == "new: yaml\n"

    with output_lock(txn.paths, lambda _: None):  # what the next build does first
        txn.recover()
    assert tree(txn.final) == {"agent.py": "new"}
    assert staging_names(txn) == []


def test_a_package_s_recovery_leaves_another_group_s_commit_to_it(
    txn: PackageTransaction, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a running batch, phase 6 recovers a package while another thread's group is committed
    and deleting the packages it replaced: the recovery must not finish that group too (both
    deleting the same folders failed skills with ENOENT)."""
    installed_old(txn)
    staged(txn, "new")
    group = RegistrationGroup(txn.paths)
    group.begin([GroupEntry("fw", txn.identifier)])
    txn.install()

    def paused(path: Any, *args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt  # the committing thread, paused before its first delete

    with monkeypatch.context() as patched:
        patched.setattr("builder.pipeline.transaction.shutil.rmtree", paused)
        with pytest.raises(KeyboardInterrupt):
            group.commit("new: yaml\n")
    left = staging_names(txn)
    PackageTransaction(txn.paths, "another_pkg").recover()
    assert staging_names(txn) == left


@pytest.mark.parametrize("old", [True, False])
def test_a_roll_back_killed_before_dropping_its_folder_is_done_again_safely(
    txn: PackageTransaction, monkeypatch: pytest.MonkeyPatch, old: bool
) -> None:
    """A build's recovery killed after moving the old package back (or removing a new one) and
    before dropping ``pkg.previous/``: the next recovery keeps what the first one left."""
    if old:
        installed_old(txn)
    staged(txn, "new")
    txn.install()  # then killed: the new package is installed, uncommitted
    real_rmtree = shutil.rmtree

    def killed(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path) == txn.paths.staging / "pkg.previous":
            raise KeyboardInterrupt  # stands for SIGKILL: nothing after it runs
        real_rmtree(path, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr("builder.pipeline.transaction.shutil.rmtree", killed)
        with pytest.raises(KeyboardInterrupt):
            txn.recover()
    txn.recover()
    assert (tree(txn.final) if txn.final.exists() else None) == (
        {"agent.py": "old"} if old else None
    )
    assert staging_names(txn) == []


#: A build (a fresh interpreter) holding the output lock of ``sys.argv[1]`` forks a child, as a
#: batch forks its pool's workers, prints the child's pid and dies without letting go.
_FORKING_BUILD = """\
import os, sys, time
from pathlib import Path
from builder.pipeline.transaction import output_lock
from mindrian.project import ProjectPaths
with output_lock(ProjectPaths(Path(sys.argv[1])), lambda _: None):
    child = os.fork()
    if child == 0:
        os.closerange(1, 3)  # the test reads the build's output to its end
        time.sleep(120)
        os._exit(0)
    print(child, flush=True)
    os._exit(0)  # killed: nothing is let go on the way out
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_process_the_build_forked_does_not_hold_its_output_folder(tmp_path: Path) -> None:
    """The lock goes with the build: a killed build's pool worker, which lives on until it sees
    its parent gone, does not keep the next build waiting."""
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", _FORKING_BUILD, str(tmp_path)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    child = int(done.stdout)
    try:
        os.kill(child, 0)  # still alive, holding whatever it was given

        def waited(line: str) -> None:
            raise AssertionError(line)

        with output_lock(ProjectPaths(tmp_path), waited):
            pass
    finally:
        os.kill(child, signal.SIGKILL)
