"""Child processes end with the build: none outlives a killed ``mindrian``.

A SIGKILL gives the builder no chance to stop the pytest run or the probe it
started, so every child asks the kernel (Linux ``prctl(PR_SET_PDEATHSIG)``) to
be killed when its parent dies, and starts a process group of its own so a
timeout can end it together with whatever it started; a process pool's worker,
which the pool may start from any thread, watches its parent instead. A helper
whose work the build's own process does not wait for next runs below it
(:func:`background`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "BACKGROUND_NICE",
    "background",
    "child_options",
    "die_with_parent",
    "exit_when_orphaned",
    "offline_env",
    "run_captured",
    "runtime_root",
]

#: ``PR_SET_PDEATHSIG`` from <linux/prctl.h>.
_PR_SET_PDEATHSIG = 1
#: Niceness steps a build's helper processes run below the build itself (:func:`background`).
BACKGROUND_NICE = 10


def die_with_parent(parent: int | None = None) -> None:
    """Ask for SIGKILL when the parent dies (Linux; elsewhere nothing happens).

    Runs in the child between fork and exec, or first thing in a forked child.
    ``parent`` is the parent's pid as the parent saw it before forking: if it
    is no longer the parent by then, it already died and the child ends at once.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os._exit(1)


#: Seconds between an orphan watch's looks at its parent.
_ORPHAN_WATCH_SECONDS = 0.5


def exit_when_orphaned(parent: int, every: float = _ORPHAN_WATCH_SECONDS) -> None:
    """End this process within ``every`` seconds of ``parent`` (its parent) dying, whichever
    way it dies.

    For a child another library starts from whichever thread asks for it (a process
    pool's worker): :func:`die_with_parent` fires when the *thread* that started the child
    ends, which would kill a worker under a running build. A daemon thread watches instead.
    """
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_watch, args=(parent, every), name="orphan-watch", daemon=True).start()


def _watch(parent: int, every: float) -> None:
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)  # no cleanup: the work this process held is its dead parent's


def background(parent: int, steps: int = BACKGROUND_NICE) -> None:
    """Run this process (and what it forks) ``steps`` of niceness below ``parent`` (the build, or
    a warm worker at the build's priority).

    A batch's serial stage (phase 7, in the build's own process) is the one step
    no other process can take: when the build's helpers (pool workers, warm
    workers and the sessions and probes they fork) keep both cores busy, it must
    still get its core, or every skill's registration waits for theirs. Linux
    schedules sessions as groups when autogroups are on (each helper started in
    a session of its own counts as much as the build): this lowers the group's
    weight too (``/proc/self/autogroup``), relative to ``parent``'s group, when
    this process leads a session. Called in the helper, first thing; a system
    that refuses leaves it as it was.
    """
    if not hasattr(os, "nice"):
        return  # not POSIX: no niceness, no sessions
    with contextlib.suppress(OSError):
        os.nice(steps)
    if os.getsid(0) != os.getpid():
        return  # the build's own session: its group is the build's
    try:
        with open(f"/proc/{parent}/autogroup", encoding="ascii") as handle:
            base = int(handle.read().split()[-1])
        with open("/proc/self/autogroup", "w", encoding="ascii") as handle:
            handle.write(str(min(19, base + steps)))
    except (OSError, ValueError, IndexError):
        pass  # no autogroups here, or not allowed: plain niceness still applies


def child_options() -> dict[str, Any]:
    """Keyword arguments for :mod:`subprocess`: the child dies with us, in a group of its own."""
    parent = os.getpid()
    return {"preexec_fn": functools.partial(die_with_parent, parent), "start_new_session": True}


def run_captured(
    command: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run a builder child (generated tests, a probe) to the end, its output captured as text.

    Raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds, like ``subprocess.run``,
    having killed the child's whole process group: a grandchild holding the output pipes
    open would otherwise keep the builder waiting for ever.
    """
    with subprocess.Popen(
        command,
        cwd=cwd,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        stdin=subprocess.DEVNULL,
        **child_options(),
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process.pid)
            process.wait()  # not communicate(): a grandchild outside the group may hold the pipes
            raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _kill_group(leader: int) -> None:
    # The child started the group (``start_new_session``), so its pid names the group.
    try:
        os.killpg(leader, signal.SIGKILL)
    except ProcessLookupError:
        pass


def runtime_root() -> Path:
    """The folder holding the ``mindrian`` runtime package (and the builder), for a child's path."""
    import mindrian

    return Path(mindrian.__path__[0]).resolve().parent


def offline_env(folder: Path) -> dict[str, str]:
    """The environment of a child that runs generated code (tests, probes): no API keys, no
    bytecode or cache files, no telemetry, no pytest plugin but those its command names;
    ``folder`` and the runtime on the path."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(
        PYTHONPATH=os.pathsep.join((str(folder), str(runtime_root()))),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONHASHSEED="0",
        PYTHONIOENCODING="utf-8",
        AGNO_TELEMETRY="false",
        MINDRIAN_OFFLINE="1",
        NO_COLOR="1",
        # Entry-point plugins (hypothesis, anyio …) cost every test run their loading and
        # assert-rewrite marking, and one a warm worker imported already (anyio comes with a
        # provider's SDK) would make pytest warn; generated tests need none of them.
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    return env
