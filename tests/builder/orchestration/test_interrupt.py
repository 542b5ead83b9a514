"""Ctrl-C during a parallel build (issue 38, 3): the workers print nothing of it, and the batch
stops at once instead of waiting for their phases (it took about 16 s, after 36 lines of
``Process SpawnProcess-1:`` / ``KeyboardInterrupt`` tracebacks)."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor

import pytest

from builder.orchestration import batch, runner
from builder.pipeline.children import BACKGROUND_NICE


def _spawned() -> ProcessPoolExecutor:
    """A batch's pool of two spawned workers (this test process has other threads: forked
    workers are tested in a fresh interpreter, ``test_pool_start``)."""
    return batch._pool(2, runner.DEFAULT.load, (), lambda: "spawn")


def test_the_workers_leave_ctrl_c_to_the_batch() -> None:
    pool = _spawned()
    with batch._closing(pool):
        assert pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN


def test_an_interrupted_batch_stops_its_workers_at_once() -> None:
    pool = _spawned()
    with pytest.raises(KeyboardInterrupt), batch._closing(pool):
        running = [pool.submit(time.sleep, 60) for _ in range(2)]
        while not all(f.running() for f in running):
            time.sleep(0.05)
        workers = list(pool._processes.values())
        interrupted = time.monotonic()
        raise KeyboardInterrupt
    # A bound on waiting out the tasks' 60 s, not a speed target: a loaded CI machine took
    # over 5 s to reap the terminated workers.
    # join() returns once a worker's sentinel pipe closes, which its exit does a moment before
    # the kernel reports it gone: is_alive() is polled up to the same bound.
    deadline = interrupted + 30
    for worker in workers:
        worker.join(timeout=max(0.0, deadline - time.monotonic()))
    while any(w.is_alive() for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert time.monotonic() - interrupted < 30
    assert not any(w.is_alive() for w in workers)


def test_the_workers_run_below_the_batch_in_sessions_of_their_own() -> None:
    pool = _spawned()
    with batch._closing(pool):
        assert pool.submit(os.nice, 0).result() == min(19, os.nice(0) + BACKGROUND_NICE)
        assert pool.submit(os.getsid, 0).result() != os.getsid(0)
