"""How a batch's pool workers start: forked from the batch where it may fork (Linux, no thread
but its own), so they import nothing; spawned where another thread runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

#: A batch's pool of two workers started in a fresh interpreter (a test process has other
#: threads: it would not fork), with the other thread ``sys.argv[1]`` names and a pipe of
#: another child's (``foreign``); prints, as JSON, the modules of the phases the workers run,
#: the pipe's inode and what each worker answers of itself.
#: A file, not ``-c``: a spawned worker imports it to find :func:`probe`.
_SCRIPT = """\
import _thread, json, os, signal, sys, threading, time
from builder.orchestration import batch, runner
from builder.phases import PHASE_NAMES

AT_FORK = None  # in a forked worker, the modules it had when it was forked
FOREIGN = ()  # the pipe handed to the pool as another child's
START_ON_IMPORT = False  # the batch's loader starts a thread the first time it imports a phase

def load(name):
    global START_ON_IMPORT
    if START_ON_IMPORT:
        START_ON_IMPORT = False
        _thread.start_new_thread(time.sleep, (600,))
    return runner.DEFAULT.load(name)

def forked():
    global AT_FORK
    AT_FORK = sorted(sys.modules)

def inode(descriptor):
    try:
        return os.fstat(descriptor).st_ino
    except OSError:
        return None

def probe():
    return {
        "foreign": [inode(d) for d in FOREIGN],
        "at_fork": AT_FORK,
        "ignores_sigint": signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
        "sid": os.getsid(0),
        "nice": os.nice(0),
    }

if __name__ == "__main__":
    os.register_at_fork(after_in_child=forked)
    if sys.argv[1] == "threading":
        threading.Thread(target=threading.Event().wait, daemon=True).start()
    elif sys.argv[1] == "_thread":  # as pytest-xdist's worker starts one; threading is not told
        _thread.start_new_thread(time.sleep, (600,))
    START_ON_IMPORT = sys.argv[1] == "importing"
    names = PHASE_NAMES[:6]
    FOREIGN = os.pipe()
    pool = batch._pool(2, load, names, foreign=FOREIGN)
    with batch._closing(pool):
        answers = [f.result() for f in [pool.submit(probe) for _ in range(2)]]
    phases = sorted({type(runner.DEFAULT.load(name)).__module__ for name in names})
    mine = {"sid": os.getsid(0), "nice": os.nice(0)}
    pipe = os.fstat(FOREIGN[0]).st_ino
    print(json.dumps({"phases": phases, "workers": answers, "pipe": pipe, **mine}))
"""
#: The checkout, whose ``builder`` the script imports.
_ROOT = Path(__file__).resolve().parents[3]


def _batch_pool(tmp_path: Path, other_thread: str) -> dict[str, Any]:
    script = tmp_path / "pool.py"
    script.write_text(_SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), other_thread],
        cwd=_ROOT,
        env={**os.environ, "PYTHONPATH": str(_ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")
def test_a_lone_thread_forks_the_workers_after_importing_their_phases(tmp_path: Path) -> None:
    """Each worker is a copy of the batch made once it had imported every phase the worker
    runs: the worker imports none of them. It still leaves Ctrl-C to the batch and runs below
    it, in a session of its own, as a spawned one does, and it holds no end of the pipes the
    batch has to its other children (its warm worker's, started first)."""
    pool = _batch_pool(tmp_path, "none")
    for worker in pool["workers"]:
        assert worker["at_fork"] is not None, "the worker was spawned"
        assert set(pool["phases"]) <= set(worker["at_fork"])
        assert worker["ignores_sigint"]
        assert worker["sid"] not in (pool["sid"], None)
        assert worker["nice"] == min(19, pool["nice"] + 10)
        assert len(worker["foreign"]) == 2
        assert pool["pipe"] not in worker["foreign"]


@pytest.mark.parametrize("other_thread", ["threading", "_thread", "importing"])
def test_with_another_thread_alive_the_workers_are_spawned(
    tmp_path: Path, other_thread: str
) -> None:
    """A fork copies only the forking thread: a lock the other one held would never be let go
    in the copy. The thread may be one ``threading`` is not told of, or one that importing the
    workers' phases started."""
    pool = _batch_pool(tmp_path, other_thread)
    assert [w["at_fork"] for w in pool["workers"]] == [None, None]
    assert all(w["ignores_sigint"] for w in pool["workers"])
