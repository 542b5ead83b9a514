"""Skills of a batch taking turns at a serial phase, several at a time: group commit in input order.

Phase 7 has one writer, the registry's, and a batch used to register its skills
one after another, each opening the registry, keeping a journal, writing
``registry.yaml`` and closing it again. :class:`Turns` lets the batch run the
serial phases of several skills in threads of their own while only one of them
runs at a time (the *baton*): a phase that reaches the shared step hands its
request over (:meth:`Turns.join`) and lets the baton go, so the next skill's
serial phases run up to the same point, and once every skill of the batch that
has started is waiting there (or :attr:`Turns.group` of them are), one of them
serves them all at once, holding the baton again, with the function the first
request came with.

A batch that says how many skills it will still submit (:meth:`Turns.expect`)
has a group that is not full wait for them, up to :attr:`Turns.gather` seconds
from its first request: each group costs the shared step a registry open, a
journal and a registry.yaml write, and skills finishing their parallel phases one
by one would otherwise be registered a few at a time.

Requests are served in the order of their tickets (the batch's input order),
a group being a run of consecutive tickets, so a phase that serves them one
after the other inside its group sees exactly what it would have seen one
skill at a time, whatever the grouping: the output does not depend on how many
skills were ready together, nor on ``--jobs``. A phase run outside a batch
(no ticket) is served alone, at once, in its caller's thread.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["ALONE", "Served", "Turns"]

R = TypeVar("R")
O = TypeVar("O")  # noqa: E741 - the outcome's type


@dataclass(frozen=True)
class Served(Generic[O]):
    """What serving a group gave one of its requests: an outcome, or why there is none."""

    outcome: O | None
    """The request's outcome; None with :attr:`error`."""
    error: BaseException | None = None
    """Raised while serving the group (its whole group gets it); None with an outcome."""

    def result(self) -> O:
        """The outcome, or the error raised."""
        if self.error is not None:
            raise self.error
        assert self.outcome is not None
        return self.outcome


#: Serves a group of requests, in ticket order: one outcome per request, in that order.
Serve = Callable[[Sequence[R]], Sequence[O]]


class Turns:
    """The serial phases of a batch's skills, one thread each, one running at a time."""

    def __init__(self, group: int, gather: float = 0.0) -> None:
        """``group``: the most requests served together (the batch runs that many threads);
        ``gather``: how long a group that is not full may wait for the skills still to come."""
        if group < 1:
            raise ValueError("a group holds at least one request")
        self.group = group
        """The most requests one serving takes."""
        self.gather = gather
        """Seconds a group that is not full waits, from its first request, for skills the
        batch said it will still submit (:meth:`expect`); 0: served as soon as every skill
        that has started waits."""
        self.baton = threading.Lock()
        """Held by whoever runs the batch's serial work: one skill's thread, a group's server,
        or the batch itself between them (planning probes)."""
        self._state = threading.Condition()
        self._issued = 0
        self._open: set[int] = set()
        self._pending: dict[int, tuple[object, Serve[object, object]]] = {}
        #: When each pending request arrived (time.monotonic).
        self._arrived: dict[int, float] = {}
        #: Tickets the batch will still ask for (:meth:`expect`).
        self._coming = 0
        self._served: dict[int, Served[object]] = {}
        self._serving = False
        self._local = threading.local()

    def ticket(self) -> int:
        """The next skill's place in the order (the batch asks, in input order)."""
        with self._state:
            ticket, self._issued = self._issued, self._issued + 1
            self._open.add(ticket)
            self._coming = max(0, self._coming - 1)
            return ticket

    def expect(self, count: int) -> None:
        """``count`` more skills will ask for a ticket (0: none will, the batch is submitted or
        interrupted): a group that is not full waits for them, up to :attr:`gather` seconds."""
        with self._state:
            self._coming = count
            self._state.notify_all()

    @contextlib.contextmanager
    def holding(self, ticket: int) -> Iterator[None]:
        """Run one skill's serial phases in this thread with ``ticket``, holding the baton."""
        self._local.ticket = ticket
        try:
            with self.baton:
                yield
        finally:
            self._local.ticket = None
            with self._state:
                # Done without a request (a phase cached, or failed before it), or served.
                self._open.discard(ticket)
                self._state.notify_all()

    def drop(self, ticket: int) -> None:
        """``ticket``'s skill will not run (its batch was interrupted before it started)."""
        with self._state:
            self._open.discard(ticket)
            self._state.notify_all()

    def join(self, request: R, serve: Serve[R, O]) -> O:
        """``request``'s outcome: served with the others of its group, or alone outside a batch.

        Called holding the baton (from :meth:`holding`'s thread); lets it go while waiting.
        """
        ticket: int | None = getattr(self._local, "ticket", None)
        with self._state:
            # A ticket joins once (served, it is no longer open): a second request goes alone.
            if ticket is None or ticket not in self._open:
                ticket = None
            else:
                self._pending[ticket] = (request, serve)  # type: ignore[assignment]
                self._arrived[ticket] = time.monotonic()
                self._state.notify_all()
        if ticket is None:
            return serve((request,))[0]
        self.baton.release()
        try:
            served = self._wait(ticket)
        finally:
            self.baton.acquire()
        return served.result()  # type: ignore[return-value]

    def _wait(self, ticket: int) -> Served[object]:
        """Wait until ``ticket`` is served, serving a group (this one's or an earlier one) when
        this thread finds one ready."""
        while True:
            with self._state:
                while True:
                    if ticket in self._served:
                        return self._served.pop(ticket)
                    group, wake = self._ready()
                    if group is not None:
                        break
                    self._state.wait(wake)
                self._serving = True
            self._serve(group)

    def _ready(self) -> tuple[list[int] | None, float | None]:
        """The group to serve now, in ticket order; None while one is served, while nothing is
        pending, while a skill that has started may still join, or while the group gathers the
        skills still to come (:attr:`gather`): then also the seconds until it stops waiting
        for them (None: until told)."""
        if self._serving or not self._pending:
            return None, None
        group: list[int] = []
        for ticket in sorted(self._open):
            if ticket not in self._pending or len(group) == self.group:
                break
            group.append(ticket)
        full = len(group) == self.group
        everyone = len(group) == len(self._open)
        if not group or not (full or everyone):
            return None, None
        if full or not self._coming:
            return group, None
        left = min(self._arrived[t] for t in group) + self.gather - time.monotonic()
        return (group, None) if left <= 0 else (None, left)

    def _serve(self, group: list[int]) -> None:
        """Serve ``group`` holding the baton; every ticket of it gets its outcome."""
        with self._state:
            requests = [self._pending.pop(t) for t in group]
            for ticket in group:
                del self._arrived[ticket]
        served: list[Served[object]]
        try:
            with self.baton:
                outcomes = requests[0][1]([r for r, _ in requests])
            served = [Served(o) for o in outcomes]
            if len(served) != len(group):
                raise RuntimeError(f"{len(group)} requests served with {len(served)} outcomes")
        except BaseException as error:  # every skill of the group reports it
            served = [Served(None, error) for _ in group]
        with self._state:
            for ticket, one in zip(group, served, strict=True):
                self._served[ticket] = one
                self._open.discard(ticket)
            self._serving = False
            self._state.notify_all()


#: Outside a batch: every request is served alone, at once.
ALONE = Turns(1)
