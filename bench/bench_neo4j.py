"""The framework registry on a real Neo4j, beside :mod:`bench.bench_registry`'s embedded rows.

Runs on the throw-away server ``ci/neo4j-server start DIR`` started, named by
``MINDRIAN_TEST_NEO4J=DIR`` (its database is emptied: never point this at a server of value);
without one, a single row says the Neo4j rows were skipped. Measured, with the server held
alone (:func:`mindrian.testing.neo4j_server.exclusive`): registering 1,000 frameworks; the
``select`` p50 and p99 of trigger contexts and of sentences at 10,000 frameworks (the same
synthetic frameworks and contexts as the embedded rows); what every read's bracket costs
there, the revision node against the count of every framework it replaced; and a cold
``build --all`` of 100 skills synthesized from the shared corpus, registering into Neo4j.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.bench_registry import SELECTIONS, synthetic_frameworks
from bench.common import CORPUS, Row, mindrian_command
from bench.synth import synthesize
from mindrian.graph import DEFAULT_BATCH_SIZE, Neo4jRegistry, Registry
from mindrian.graph import queries as q
from mindrian.graph.neo4j_registry import READ_REVISION
from mindrian.testing.neo4j_server import (
    TEST_SERVER_ENV,
    Neo4jServer,
    configured_server,
    exclusive,
    wipe,
)

__all__ = ["rows"]

REGISTERED = 1_000
FRAMEWORKS = 10_000
BUILT_SKILLS = 100
_TRIGGERS = 50
_PROBLEM_TYPES = 5


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _timed_ms(call: Callable[[], object]) -> float:
    began = time.perf_counter()
    call()
    return (time.perf_counter() - began) * 1000


def _trigger_samples(registry: Registry) -> list[float]:
    """Milliseconds of trigger selections, after the untimed query and postings build."""
    registry.select(["warm-up"])
    registry.select(["warm-up"])
    return [
        _timed_ms(
            lambda i=i: registry.select(
                [f"trigger-{i % _TRIGGERS}"],
                [f"problem-{i % _PROBLEM_TYPES}"],
                [f"fw-{(i * 37) % FRAMEWORKS:05d}"],
            )
        )
        for i in range(SELECTIONS)
    ]


def _sentence_samples(registry: Registry) -> list[float]:
    """Milliseconds of sentence selections, after the untimed index build."""
    registry.select_text("warm up the index")
    return [
        _timed_ms(
            lambda i=i: registry.select_text(
                f"which framework handles trigger-{i % _TRIGGERS} for problem-{i % 5}?",
                previous=[f"fw-{(i * 37) % FRAMEWORKS:05d}"],
            )
        )
        for i in range(SELECTIONS)
    ]


def _statement_samples(server: Neo4jServer, text: str) -> list[float]:
    """Milliseconds of ``text`` alone in a read transaction, on a driver of its own."""
    import neo4j

    def read(tx: neo4j.ManagedTransaction) -> object:
        return tx.run(text).data()

    with (
        neo4j.GraphDatabase.driver(server.uri, auth=(server.user, server.password)) as driver,
        driver.session(default_access_mode=neo4j.READ_ACCESS) as session,
    ):
        session.execute_read(read)
        return [_timed_ms(lambda: session.execute_read(read)) for _ in range(SELECTIONS)]


def _registry(server: Neo4jServer) -> Neo4jRegistry:
    return Neo4jRegistry(server.uri, server.user, server.password)


def _registry_rows(server: Neo4jServer) -> list[Row]:
    records = synthetic_frameworks(FRAMEWORKS)
    wipe(server)
    with _registry(server) as registry:
        began = time.perf_counter()
        registry.register_many(records[:REGISTERED])
        register_s = time.perf_counter() - began
        registry.register_many(records[REGISTERED:])
        triggers = _trigger_samples(registry)
        sentences = _sentence_samples(registry)
    revision_node = _statement_samples(server, READ_REVISION.text)
    revision_scan = _statement_samples(server, q.ROUTING_REVISION.text)
    context = f"Neo4j, {FRAMEWORKS} frameworks, {2 * FRAMEWORKS} CHAINS_TO"
    return [
        Row(
            f"neo4j: register {REGISTERED} frameworks",
            register_s,
            "s",
            None,
            f"empty database, one batch of {min(REGISTERED, DEFAULT_BATCH_SIZE)}",
        ),
        Row("neo4j: select --trigger p50", statistics.median(triggers), "ms", None, context),
        Row(
            "neo4j: select --trigger p99",
            _percentile(triggers, 0.99),
            "ms",
            None,
            f"{SELECTIONS} contexts; every read checks the registry's revision twice",
        ),
        Row(
            "neo4j: read the registry's revision p50",
            statistics.median(revision_node),
            "ms",
            None,
            "its one RegistryRevision node, as each read does before and after itself",
        ),
        Row(
            "neo4j: count the frameworks' revision p50",
            statistics.median(revision_scan),
            "ms",
            None,
            f"what that node replaced: a scan of all {FRAMEWORKS} (now for databases without it)",
        ),
        Row("neo4j: select a sentence p50", statistics.median(sentences), "ms", None, context),
        Row(
            "neo4j: select a sentence p99",
            _percentile(sentences, 0.99),
            "ms",
            None,
            f"{SELECTIONS} sentences, after one index build",
        ),
    ]


def _build_row(server: Neo4jServer) -> Row:
    wipe(server)
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder) / "project"
        synthesize(project, BUILT_SKILLS)
        env = {**os.environ, **server.env()}
        jobs = str(os.cpu_count() or 1)
        began = time.perf_counter()
        done = subprocess.run(
            [*mindrian_command(), "build", "--all", "--quiet", "--jobs", jobs],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        wall = time.perf_counter() - began
    if done.returncode >= 2:
        raise RuntimeError(f"build --all into Neo4j exited {done.returncode}: {done.stderr!r}")
    with _registry(server) as registry:
        registered = registry.counts().frameworks
    return Row(
        f"neo4j: {BUILT_SKILLS} skills, cold `build --all`",
        wall,
        "s",
        None,
        f"{registered} registered into Neo4j (exit {done.returncode}; some corpus skills "
        "fail on purpose); compare `make bench-scale`'s embedded row",
    )


def rows() -> list[Row]:
    """The Neo4j rows, or one row saying why there are none."""
    server = configured_server()
    if server is None:
        return [
            Row(
                "neo4j: skipped",
                0.0,
                "",
                None,
                f"no test Neo4j: ci/neo4j-server start DIR, then {TEST_SERVER_ENV}=DIR make bench",
            )
        ]
    with exclusive(server):
        measured = _registry_rows(server)
        if CORPUS.is_dir():
            measured.append(_build_row(server))
        wipe(server)
    return measured


if __name__ == "__main__":
    for row in rows():
        print(row)
