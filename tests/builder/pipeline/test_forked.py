"""Work split with a forked copy: the serial result always, the copy's half done by a copy."""

from __future__ import annotations

import _thread
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from builder.pipeline.forked import can_fork, in_two

#: Runs ``in_two`` in a fresh interpreter (a test process has other threads: it would not
#: fork), with ``work`` as the test defines it; prints the halves as JSON, or the error.
_SCRIPT = """\
import json, os, sys
from builder.pipeline.forked import in_two
parent = os.getpid()
{work}
try:
    print(json.dumps(in_two(list(range(7)), work)))
except Exception as error:
    print(json.dumps({{"error": type(error).__name__, "message": str(error)}}))
"""
#: The checkout, whose ``builder`` the script imports.
_ROOT = Path(__file__).resolve().parents[3]


def _run(work: str) -> object:
    code = _SCRIPT.format(work=textwrap.dedent(work))
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")
def test_the_second_half_is_done_in_a_copy_and_comes_back_in_order() -> None:
    halves = _run(
        """
        def work(items):
            return [[x * x, os.getpid() == parent] for x in items]
        """
    )
    assert halves == [
        [[0, True], [1, True], [4, True]],
        [[9, False], [16, False], [25, False], [36, False]],
    ]


def test_a_copy_that_does_not_answer_leaves_its_half_to_this_process() -> None:
    halves = _run(
        """
        def work(items):
            if os.getpid() != parent:
                os._exit(3)  # as if killed
            return [x + 1 for x in items]
        """
    )
    assert halves == [[1, 2, 3], [4, 5, 6, 7]]


def test_an_error_of_the_work_is_raised_here_as_without_a_copy() -> None:
    """The copy fails on its half; this process does that half itself and meets the error."""
    outcome = _run(
        """
        def work(items):
            if 5 in items:
                where = "the copy" if os.getpid() != parent else "here"
                raise ValueError(f"item 5 seen in {where}")
            return list(items)
        """
    )
    assert outcome == {"error": "ValueError", "message": "item 5 seen in here"}


def test_a_process_with_another_thread_does_the_work_itself() -> None:
    """A fork copies only the forking thread; a lock another one holds would never be let go."""
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not can_fork()
        assert in_two([1, 2, 3], lambda items: [threading.get_ident() for _ in items]) == (
            [threading.get_ident()],
            [threading.get_ident()] * 2,
        )
    finally:
        release.set()
        other.join()


def test_a_thread_threading_does_not_know_of_keeps_this_process_from_forking() -> None:
    """``_thread.start_new_thread`` (pytest-xdist's worker runs one) and a native library
    start threads :func:`threading.active_count` does not count; the kernel counts them."""
    release = _thread.allocate_lock()
    release.acquire()
    done = _thread.allocate_lock()
    done.acquire()

    def wait() -> None:
        with release:
            done.release()

    known = threading.active_count()
    _thread.start_new_thread(wait, ())
    try:
        assert threading.active_count() == known  # threading was not told of it
        assert not can_fork()
    finally:
        release.release()
        done.acquire(timeout=30)
