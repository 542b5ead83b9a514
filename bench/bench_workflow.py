"""Thought graphs: parsing the committed workflow.dot files, and a concurrent fan-out.

Parsing is timed in process for mindrian's parser and, for comparison, for
pydot (the reference parser the tests read rendered graphs back with). The
fan-out runs four branches whose handlers each wait 50 ms: concurrent branches
take about 50 ms, one after another would take 200.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable

from bench.common import ROOT, Row

__all__ = ["rows"]

RUNS = 20
PARSE_TARGET_MS = 5.0
BRANCHES = 4
BRANCH_WAIT_S = 0.05
FAN_OUT_TARGET_MS = 100.0


def _median_ms(action: Callable[[], object], runs: int = RUNS) -> float:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        action()
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def _parse_rows() -> list[Row]:
    import pydot

    from mindrian.workflow import parse, validate

    texts = [
        path.read_text(encoding="utf-8")
        for path in sorted((ROOT / "generated").glob("*/workflow.dot"))
        + sorted(
            (ROOT / "tests" / "mindrian" / "workflow" / "fixtures_dot" / "attractor").glob("*.dot")
        )
    ]
    if not texts:
        return []
    ours = _median_ms(lambda: [validate(parse(t)) for t in texts]) / len(texts)
    reference = _median_ms(lambda: [pydot.graph_from_dot_data(t) for t in texts], 5) / len(texts)
    note = f"{len(texts)} files; pydot parses one in {reference:.1f} ms ({reference / ours:.0f}x)"
    return [Row("workflow parse+validate, per file", ours, "ms", PARSE_TARGET_MS, note)]


def _fan_out_row() -> Row:
    from mindrian.workflow import arun, linear_workflow

    steps = tuple((f"p{i}", "a perspective") for i in range(BRANCHES))
    graph = linear_workflow("bench", steps, "collaborative")

    async def wait(step: object) -> None:
        await asyncio.sleep(BRANCH_WAIT_S)

    handlers = {**{node_id: wait for node_id, _ in steps}, "synthesis": lambda step: None}
    elapsed = _median_ms(lambda: asyncio.run(arun(graph, handlers)), 5)
    sequential = BRANCHES * BRANCH_WAIT_S * 1000
    note = (
        f"{BRANCHES} branches of {BRANCH_WAIT_S * 1000:.0f} ms; one after another: {sequential:.0f}"
    )
    return Row("workflow fan-out run", elapsed, "ms", FAN_OUT_TARGET_MS, note)


def rows() -> list[Row]:
    """Parse time per workflow file and the wall time of a concurrent fan-out."""
    return [*_parse_rows(), _fan_out_row()]
