"""Ctrl-C during ``build --all --jobs 2`` on the process pool, end to end (issue 38, 3).

A terminal sends SIGINT to the whole foreground process group: the build, its pool's workers,
its warm worker and their children. The build must then exit 130 with its one line, print no
traceback of any process, stop within a bound (a hang's, not a speed target: it took about 16 s
after 36 lines of ``Process SpawnProcess-1:`` / ``KeyboardInterrupt``), leave no process of its
group running, and leave nothing half-written: every package it left in ``generated/`` is the
one a full build makes, and the next ``build --all`` and ``check`` pass.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from build_factories import make_project, skill_text, tree

from builder.orchestration import batch

pytestmark = pytest.mark.slow  # whole builds of 18 skills in subprocesses

#: Enough skills that a batch with shared package tests starts its process pool with two
#: workers (the pool gives each render-only worker at least this many).
SKILLS = 2 * batch._RENDER_ONLY_SKILLS_PER_WORKER + 2
#: Seconds the interrupted build may take to exit, and its processes to be gone: a bound on a
#: hang (a quarter of the session's wait, :data:`LONG_SESSION`), not a speed target.
STOP_BOUND = 30.0
#: Seconds the build may take to get its workers going before the test gives up.
START_BOUND = 300.0
#: What a process that did not leave Ctrl-C to the build would print.
NOISE = ("Traceback", "KeyboardInterrupt", "SpawnProcess", "ForkProcess", "Exception ignored")
INTERRUPTED = "error[E001]: interrupted; the next build finishes or undoes what was in progress"
#: A hook that makes the shared test session last (``long_session/sitecustomize.py``).
LONG_SESSION = Path(__file__).resolve().parent / "long_session"
NAMES = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()


def _mindrian(
    root: Path, *args: str, env: dict[str, str] | None = None, **options: object
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "builder", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        **options,  # type: ignore[call-overload]
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    process = _mindrian(root, *args)
    out, err = process.communicate(timeout=START_BOUND)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _rendering(root: Path) -> bool:
    """Whether a pool worker has written a checkpoint of phase 2 or later: phase 1 runs in the
    build's own process (its survey), the later parallel phases in the pool's workers."""
    checkpoints = root / ".mindrian" / "checkpoints"
    return any(checkpoints.glob("*/2-*.yaml"))


def _processes() -> list[tuple[int, str]]:
    """(pid, arguments) of every process but zombies."""
    listing = subprocess.run(
        ["ps", "-eo", "pid=,stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    rows = [line.split(None, 2) for line in listing.splitlines()]
    return [(int(r[0]), r[2]) for r in rows if len(r) == 3 and "Z" not in r[1]]


def _left(build: subprocess.Popen[str], root: Path) -> list[str]:
    """The processes of the build still running: in its group, or naming its project (its warm
    workers are in groups of their own)."""
    group = subprocess.run(
        ["ps", "-o", "stat=,args=", "-g", str(build.pid)], capture_output=True, text=True
    ).stdout.splitlines()
    running = [line for line in group if line.strip() and "Z" not in line.split()[0]]
    return running + [args for _, args in _processes() if str(root) in args]


def _testing(root: Path) -> bool:
    """Whether the batch's shared test session has started (:data:`LONG_SESSION`'s mark)."""
    return (root.parent / "started").exists()


@pytest.mark.parametrize("moment", [_rendering, _testing], ids=["rendering", "testing"])
def test_ctrl_c_on_the_pool_stops_quietly_and_leaves_nothing_half_written(
    tmp_path: Path, moment: Callable[[Path], bool]
) -> None:
    """Ctrl-C while the pool's workers render (phases 2-6), and while a shared session tests
    the packages they staged: the session is made to last two minutes (:data:`LONG_SESSION`), and
    before, the build waited for it to end (its thread was a ``ThreadPoolExecutor``'s, which
    Python joins at exit)."""
    names = [f"check-{word}" for word in NAMES[:SKILLS]]
    (tmp_path / "project").mkdir()
    root = make_project(
        tmp_path / "project", {n: skill_text(n, f"Checks the {n} case.") for n in names}
    )
    hook = {"LONG_SESSION": str(tmp_path), "PYTHONPATH": str(LONG_SESSION)}
    # A group of its own, as a terminal's foreground job, with Ctrl-C's default disposition (a
    # test runner may ignore SIGINT, and a child inherits that).
    build = _mindrian(
        root,
        "build",
        "--all",
        "--jobs",
        "2",
        env=hook if moment is _testing else {},
        start_new_session=True,
        preexec_fn=_default_sigint,
    )
    deadline = time.monotonic() + START_BOUND
    while not moment(root):
        assert build.poll() is None, build.communicate()
        assert time.monotonic() < deadline, f"never {moment.__name__}"
        time.sleep(0.05)
    os.killpg(build.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
    interrupted = time.monotonic()
    try:
        _, err = build.communicate(timeout=STOP_BOUND)
    except subprocess.TimeoutExpired:
        os.killpg(build.pid, signal.SIGKILL)
        raise AssertionError(f"still running {STOP_BOUND} s after Ctrl-C") from None
    stopped = time.monotonic() - interrupted
    # The last children get their signal a moment after the build exits: on a loaded machine
    # that moment may be seconds.
    left = _left(build, root)
    while left and time.monotonic() - interrupted < STOP_BOUND:
        time.sleep(0.1)
        left = _left(build, root)
    if left:
        os.killpg(build.pid, signal.SIGKILL)
    assert build.returncode == 130, err
    assert err.splitlines()[-1] == INTERRUPTED, err
    assert not [line for line in err.splitlines() if any(word in line for word in NOISE)], err
    assert stopped < STOP_BOUND
    assert left == [], left
    interrupted_tree = tree(root / "generated") if (root / "generated").exists() else {}

    rebuilt = _run(root, "build", "--all", "--jobs", "2")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert rebuilt.stderr.splitlines()[-1] == f"{SKILLS} built, 0 failed"
    final = tree(root / "generated")
    # A package the interrupted build left is whole: the one the full build makes, file for file.
    packages = {path.split("/")[0] for path in interrupted_tree if "/" in path}
    for package in packages:
        left_files = {p: d for p, d in interrupted_tree.items() if p.startswith(f"{package}/")}
        assert left_files == {p: d for p, d in final.items() if p.startswith(f"{package}/")}
    checked = _run(root, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
