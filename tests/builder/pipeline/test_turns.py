"""Turns: skills of a batch served together at a serial phase's shared step, in ticket order."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

import pytest

from builder.orchestration.serial_stage import SerialStage
from builder.pipeline.turns import Turns


class Server:
    """A shared step that records each group it serves and answers each request doubled."""

    def __init__(self) -> None:
        self.groups: list[list[int]] = []
        self.threads: set[str] = set()

    def __call__(self, requests: Sequence[int]) -> list[int]:
        self.groups.append(list(requests))
        self.threads.add(threading.current_thread().name)
        return [2 * r for r in requests]


def skill(turns: Turns, server: Server, request: int | None) -> Callable[[], int | None]:
    """One skill's serial phases: joins the shared step with ``request`` (None: never does)."""

    def work() -> int | None:
        assert turns.baton.locked()
        return None if request is None else turns.join(request, server)

    return work


def run_stage(group: int, requests: Sequence[int | None]) -> tuple[list[int | None], Server]:
    """Every skill submitted before any runs (the batch's parallel phases all done)."""
    turns, server = Turns(group), Server()
    with SerialStage[int | None](turns) as stage:
        with turns.baton:
            for request in requests:
                stage.submit(skill(turns, server, request))
        return list(stage.finished(wait=True)), server


def test_requests_are_served_in_order_in_groups_and_answered_each() -> None:
    results, server = run_stage(4, list(range(10)))
    assert results == [2 * r for r in range(10)]
    assert server.groups == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_a_group_never_passes_its_bound() -> None:
    results, server = run_stage(1, list(range(5)))
    assert results == [0, 2, 4, 6, 8] and server.groups == [[r] for r in range(5)]


def test_a_skill_that_never_joins_does_not_hold_up_the_others() -> None:
    results, server = run_stage(8, [0, None, 2, None, 4])
    assert results == [0, None, 4, None, 8]
    assert server.groups == [[0, 2, 4]]


def test_a_later_skill_waits_for_every_earlier_one_that_has_started() -> None:
    """Served in ticket order even when the later skill reaches the step first."""
    turns, server = Turns(8), Server()
    second_submitted = threading.Event()

    def slow() -> int:
        # Holds the baton until the second skill is submitted (it has its ticket): the second
        # has started, so it is served only with the first, after it. (A bound on a hang only.)
        assert second_submitted.wait(60)
        return turns.join(1, server)

    def fast() -> int:
        return turns.join(2, server)

    with SerialStage[int](turns) as stage:
        stage.submit(slow)
        stage.submit(fast)
        second_submitted.set()
        assert list(stage.finished(wait=True)) == [2, 4]
    assert server.groups == [[1, 2]]


def test_an_error_while_serving_reaches_every_skill_of_the_group() -> None:
    turns = Turns(8)

    def broken(requests: Sequence[int]) -> list[int]:
        raise OSError("disk full")

    outcomes: list[str] = []

    def work(request: int) -> Callable[[], None]:
        def run() -> None:
            try:
                turns.join(request, broken)
            except OSError as error:
                outcomes.append(f"{request}: {error}")

        return run

    with SerialStage[None](turns) as stage:
        for request in range(3):
            stage.submit(work(request))
        list(stage.finished(wait=True))
    assert sorted(outcomes) == ["0: disk full", "1: disk full", "2: disk full"]


def test_outside_a_batch_a_request_is_served_alone_in_the_callers_thread() -> None:
    turns, server = Turns(8), Server()
    assert turns.join(21, server) == 42
    assert server.groups == [[21]] and server.threads == {threading.current_thread().name}


def test_a_stage_without_turns_runs_each_piece_of_work_at_once() -> None:
    stage = SerialStage[int](None)
    ran: list[int] = []
    for k in range(3):
        stage.submit(lambda k=k: ran.append(k) or k)  # type: ignore[func-returns-value]
        assert ran == list(range(k + 1))
    assert list(stage.finished()) == [0, 1, 2]


def test_a_group_must_hold_a_request() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Turns(0)


def joining(
    turns: Turns, server: Server, request: int, started: threading.Event
) -> Callable[[], int]:
    """A skill that says it started, then joins the shared step with ``request``."""

    def work() -> int:
        started.set()
        return turns.join(request, server)

    return work


def test_a_group_waits_for_the_skills_the_batch_said_would_come() -> None:
    """Each skill reaches the step before the next is submitted; served as they came, they would
    make four groups (a registry open each), but the batch said four would come."""
    turns, server = Turns(8, gather=60), Server()  # the bound is only against a hang
    with SerialStage[int](turns) as stage:
        stage.expect(4)
        for request in range(4):
            started = threading.Event()
            stage.submit(joining(turns, server, request, started))
            assert started.wait(60)
            time.sleep(0.05)  # let it reach the step: served alone it would be now
        assert list(stage.finished(wait=True)) == [0, 2, 4, 6]
    assert server.groups == [[0, 1, 2, 3]]


def test_a_group_waits_for_skills_still_to_come_no_longer_than_the_gathering_time() -> None:
    gather = 0.2
    turns, server = Turns(8, gather=gather), Server()
    with SerialStage[int](turns) as stage:
        stage.expect(3)
        began = time.monotonic()
        stage.submit(joining(turns, server, 1, threading.Event()))
        assert list(stage.finished(wait=True)) == [2]
        assert time.monotonic() - began >= gather
    assert server.groups == [[1]]


def test_a_closed_stage_serves_a_gathering_group_at_once() -> None:
    """An interrupted batch submits no more: the group waiting for them is served as it stands
    (else closing would wait for the gathering time, here a minute)."""
    turns, server = Turns(8, gather=60), Server()
    started = threading.Event()
    with SerialStage[int](turns) as stage:
        stage.expect(5)
        stage.submit(joining(turns, server, 7, started))
        assert started.wait(60)
    assert server.groups == [[7]]
