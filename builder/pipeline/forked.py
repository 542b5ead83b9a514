"""Work over many items split between this process and a forked copy of it.

A no-op ``build --all`` checks each skill's stamp, and each check only stats
and reads files and computes digests: about a millisecond of one core a skill,
independent of every other. A fork starts in milliseconds with everything
imported and every cache filled (a spawned process would import for a quarter
of a second), so the copy takes the second half of the items while this
process does the first, and its result comes back pickled through a pipe.

Forking is safe only on Linux (macOS's system libraries may not survive a fork
without an exec) and in a process with no other thread, native ones included
(the copy has only the forking thread; a lock another thread held stays held
there forever): :func:`can_fork`, which a batch's process pool asks too. Anywhere
else, and whenever the copy does not answer in full (it raised, was killed, the
pipe broke), this process does the copy's half itself: the result is always the
serial one, and an exception of the work is raised here as it would be without
the copy.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["can_fork", "in_two"]

_T = TypeVar("_T")
_R = TypeVar("_R")

#: Exit status of a copy that answered in full.
_ANSWERED = 0


def can_fork() -> bool:
    """Whether this process may fork a copy of itself (see the module): on Linux, when the
    kernel counts one thread in it. :func:`threading.active_count` would miss the threads
    ``_thread.start_new_thread`` starts (pytest-xdist's worker runs one) and those of native
    libraries (a database's)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:  # no /proc: the threads cannot be counted
        return False


def in_two(items: Sequence[_T], work: Callable[[Sequence[_T]], _R]) -> tuple[_R, _R]:
    """``work`` of the first half of ``items`` and ``work`` of the second half, the second done
    in a forked copy of this process when :func:`can_fork`. ``work`` must leave nothing behind
    but its result (a copy's side effects in memory are lost) and its result must pickle."""
    half = len(items) // 2
    first, second = items[:half], items[half:]
    if not can_fork():
        return work(first), work(second)
    readable, writable = os.pipe()
    sys.stdout.flush()  # the copy must not print what this process has buffered
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _answer(readable, writable, work, second)
    os.close(writable)
    reaped = False
    try:
        with os.fdopen(readable, "rb") as answer:
            mine = work(first)
            data = answer.read()
        _, status = os.waitpid(pid, 0)
        reaped = True
    finally:
        if not reaped:  # this process's half raised (or was interrupted): the copy goes too
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != _ANSWERED:
        return mine, work(second)
    theirs: _R = pickle.loads(data)
    return mine, theirs


def _answer(
    readable: int, writable: int, work: Callable[[Sequence[_T]], _R], items: Sequence[_T]
) -> None:
    """In the copy: ``work(items)`` pickled into ``writable``, then exit at once (no cleanup:
    what the copy holds is this process's, and its buffers are not its own to flush)."""
    status = 1
    try:
        os.close(readable)
        data = pickle.dumps(work(items), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(writable, "wb") as answer:
            answer.write(data)
        status = _ANSWERED
    except BaseException:  # the caller does this half itself, and meets the error there
        pass
    finally:
        os._exit(status)
