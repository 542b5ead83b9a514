"""HTTP run latency of ``mindrian serve``: a scripted operator, on SQLite and PostgreSQL.

200 non-streaming runs of pws-validation (examples/pws.yaml, which repeats),
16 in flight at a time, against a server on 127.0.0.1; each run goes through
AgentOS, the wrapper's schema check and the session store. Reported: p50 and
p99 latency per run and requests per second, for SQLite sessions and for
PostgreSQL sessions in a throw-away cluster (skipped with a note when the
PostgreSQL binaries are missing).

First, in the same run, the same scripted agent served as plain Agno (its
Agno ``Agent`` on AgentOS, ``bench/plain_agentos.py``) and through
``mindrian serve``, both on SQLite: p50 and requests/s of each, and the ratio
of mindrian's p50 to plain AgentOS's (target: within 1.5x), plus mindrian's
throughput against its target of 50 requests/s.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench.common import ROOT, Row
from mindrian.testing.postgres import PostgresUnavailableError, throwaway_cluster
from mindrian.testing.served import SERVE_PROGRAM, server_process

__all__ = ["rows"]

REQUESTS = 200
CONCURRENCY = 16
_AGENT = "pws-validation"
_SCRIPT = ROOT / "examples" / "pws.yaml"
#: Most mindrian's p50 may be, as a multiple of plain AgentOS's.
RATIO_TARGET = 1.5
#: Fewest requests per second mindrian should serve a scripted operator with (SQLite).
THROUGHPUT_TARGET = 50.0
_PLAIN_PROGRAM = ("-m", "bench.plain_agentos")


def rows() -> list[Row]:
    """Plain AgentOS against mindrian; then p50, p99 and requests/s on SQLite and PostgreSQL."""
    with tempfile.TemporaryDirectory(prefix="mindrian-bench-serve-") as scratch:
        folder = Path(scratch)
        measured = _compare(folder)
        measured += _measure("sqlite", f"sqlite:///{folder / 'sessions.db'}", folder)
        try:
            with throwaway_cluster() as url:
                measured += _measure("postgresql", url, folder)
        except PostgresUnavailableError as error:
            measured.append(Row("serve postgresql: skipped", 0.0, "", None, str(error)))
    return measured


def _compare(folder: Path) -> list[Row]:
    """The same agent as plain Agno on AgentOS and through mindrian, one after the other."""
    runs: dict[str, tuple[list[float], float]] = {}
    for name, program in (("plain", _PLAIN_PROGRAM), ("mindrian", SERVE_PROGRAM)):
        args = ["--db", f"sqlite:///{folder / f'{name}.db'}", "--model", f"scripted:{_SCRIPT}"]
        with _server(args, folder / f"{name}.log", program) as url:
            runs[name] = asyncio.run(_load(url))
    plain, mindrian = (statistics.median(runs[n][0]) for n in ("plain", "mindrian"))
    rate = {name: REQUESTS / elapsed for name, (_, elapsed) in runs.items()}
    note = f"{REQUESTS} runs, {CONCURRENCY} concurrent, sqlite, same scripted agent"
    return [
        Row("serve plain AgentOS: run p50", plain * 1000, "ms", None, note),
        Row("serve plain AgentOS: throughput", rate["plain"], "req/s", None, note),
        Row("serve mindrian: run p50", mindrian * 1000, "ms", None, note),
        Row(
            "serve mindrian: throughput",
            rate["mindrian"],
            "req/s",
            None,
            f"target >= {THROUGHPUT_TARGET:g} req/s; {rate['mindrian'] / rate['plain']:.2f}x plain",
        ),
        Row(
            "serve mindrian / plain AgentOS: p50 ratio",
            mindrian / plain,
            "x",
            RATIO_TARGET,
            note,
        ),
    ]


def _measure(store: str, db_url: str, folder: Path) -> list[Row]:
    args = ["--db", db_url, "--model", f"scripted:{_SCRIPT}"]
    with _server(args, folder / f"{store}.log") as url:
        latencies, elapsed = asyncio.run(_load(url))
    quantiles = statistics.quantiles(latencies, n=100)
    note = f"{REQUESTS} runs, {CONCURRENCY} concurrent, {store} sessions"
    return [
        Row(f"serve {store}: run p50", statistics.median(latencies) * 1000, "ms", None, note),
        Row(f"serve {store}: run p99", quantiles[98] * 1000, "ms", None, note),
        Row(f"serve {store}: throughput", REQUESTS / elapsed, "req/s", None, note),
    ]


@contextmanager
def _server(args: list[str], log: Path, program: tuple[str, ...] = SERVE_PROGRAM) -> Iterator[str]:
    env = {"MINDRIAN_STATE_DIR": str(log.parent)}
    with server_process(args, cwd=ROOT, log=log, env=env, program=program) as (url, _process):
        yield url


async def _load(url: str) -> tuple[list[float], float]:
    """Latency of each of ``REQUESTS`` runs, and the wall-clock seconds of all of them."""
    gate = asyncio.Semaphore(CONCURRENCY)
    limits = httpx.Limits(max_connections=CONCURRENCY)
    async with httpx.AsyncClient(base_url=url, timeout=120.0, limits=limits) as client:
        await _one_run(client, gate, -1)  # warm-up: first-run imports and table creation
        began = time.perf_counter()
        latencies = await asyncio.gather(*(_one_run(client, gate, i) for i in range(REQUESTS)))
        return list(latencies), time.perf_counter() - began


async def _one_run(client: httpx.AsyncClient, gate: asyncio.Semaphore, index: int) -> float:
    async with gate:
        began = time.perf_counter()
        response = await client.post(
            f"/agents/{_AGENT}/runs",
            data={
                "message": f"Validate idea {index}",
                "stream": "false",
                "session_id": f"b{index}",
            },
        )
        elapsed = time.perf_counter() - began
    body = response.json()
    if response.status_code != 200 or body.get("status") != "COMPLETED":
        raise RuntimeError(f"run {index} failed: {response.status_code} {response.text[:300]}")
    return elapsed
