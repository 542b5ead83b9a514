"""The serial phases of a batch, each skill's in a thread of its own, reports in input order.

A batch's phase 7 used to run in its main thread, one skill after another, each
paying for the registry alone. Here each skill's serial phases run in a thread
of :class:`SerialStage`, only one at a time (the :class:`~builder.pipeline.turns.Turns`
baton: the runner, the checkpoints and the warm probes are used as from one
thread), so several skills can wait at phase 7's shared step at once and be
registered together. The batch keeps its order: work is submitted in input order,
tickets follow it, and :meth:`SerialStage.finished` hands the results back in it.
Without threads (nothing to register) the work runs in the caller's thread.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

from builder.pipeline.turns import Turns

__all__ = ["SerialStage"]

T = TypeVar("T")


class SerialStage(Generic[T]):
    """Work submitted in order, run one at a time in threads that may wait for each other at a
    shared step (:meth:`Turns.join`), results handed back in order."""

    def __init__(self, turns: Turns | None) -> None:
        """``turns`` None: every piece of work runs at once in the caller's thread."""
        self.turns = turns
        """The batch's turns (its baton and the groups of its shared step)."""
        self._threads = (
            None if turns is None else ThreadPoolExecutor(turns.group, thread_name_prefix="serial")
        )
        self._queue: collections.deque[tuple[int, Future[T]]] = collections.deque()

    def expect(self, count: int) -> None:
        """``count`` pieces of work will be submitted from now on: the shared step's groups wait
        for them a little (:meth:`Turns.expect`)."""
        if self.turns is not None:
            self.turns.expect(count)

    def submit(self, work: Callable[[], T]) -> None:
        """Run ``work`` after everything submitted before it has started."""
        if self.turns is None or self._threads is None:
            done: Future[T] = Future()
            try:
                done.set_result(work())
            except BaseException as error:
                done.set_exception(error)
                raise
            self._queue.append((-1, done))
            return
        ticket = self.turns.ticket()
        self._queue.append((ticket, self._threads.submit(self._run, self.turns, ticket, work)))

    @staticmethod
    def _run(turns: Turns, ticket: int, work: Callable[[], T]) -> T:
        with turns.holding(ticket):
            return work()

    def finished(self, wait: bool = False) -> Iterator[T]:
        """The results of the work done so far, in submission order, each once; with ``wait``,
        of all the work submitted."""
        while self._queue and (wait or self._queue[0][1].done()):
            yield self._queue.popleft()[1].result()

    def aside(self, work: Callable[[], None], wait: bool = False) -> None:
        """Run ``work`` (the batch's own serial work between skills: planning probes) holding the
        baton; unless ``wait``, only if no skill's serial phases are running, else not at all: it
        must be worth only a head start, and waiting for the baton would keep the next skill
        from being submitted meanwhile."""
        if self.turns is None:
            work()
        elif self.turns.baton.acquire(blocking=wait):
            try:
                work()
            finally:
                self.turns.baton.release()

    def close(self) -> None:
        """Wait for the work that started; work that has not is dropped (an interrupted batch)."""
        if self._threads is None or self.turns is None:
            return
        self.turns.expect(0)  # nothing more comes: a group gathering is served now
        for ticket, future in self._queue:
            if future.cancel():
                self.turns.drop(ticket)
        self._threads.shutdown(wait=True)

    def __enter__(self) -> SerialStage[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
