"""Framework registry on the embedded backend: bulk registration and selection latency."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from bench.common import Row, median_seconds, mindrian_command
from mindrian.graph import DEFAULT_BATCH_SIZE, EmbeddedRegistry, FrameworkRecord
from mindrian.routing.quick import SETTLED_SECONDS

__all__ = ["rows"]

FRAMEWORKS = 10_000
SELECTIONS = 200
REGISTER_TARGET_S = 5.0
#: Issue 23: p50 of `select` at 10,000 frameworks, explicit triggers (`select -t`) and a
#: sentence alike.
SELECT_P50_TARGET_MS = 10.0
SELECT_TEXT_P50_TARGET_MS = 10.0
#: Issue 39: phase 7 selects a framework's own triggers after registering it; that selection
#: must not cost a scan of the registry (it was one SELECT_QUERY each, ~25 ms at 10,000).
CHECK_P50_TARGET_MS = 1.0
#: Registrations timed for that row.
CHECKS = 50
#: Runs of each one-shot `select` (a new process each).
ONE_SHOT_RUNS = 20
#: Runs of the one-shot `select` that builds the text index each time (seconds each).
COLD_RUNS = 5
#: Issue 36: a one-shot `select` of a sentence (a new process, the kept index) at 10,000
#: frameworks, English or Chinese, within this many `python -c pass` (the yardstick's start).
ONE_SHOT_STARTS = 4.0
#: The one-shot sentences: English, and Chinese (which reads the dictionary's glosses).
ONE_SHOT_SENTENCES = (
    ("", "which framework handles trigger-7 for problem-2?"),
    (", Chinese", "帮我准备明天的面试"),
)
_TRIGGERS = 50
_PROBLEM_TYPES = 5


def synthetic_frameworks(count: int = FRAMEWORKS) -> list[FrameworkRecord]:
    """``count`` frameworks, each chaining to its next two neighbours (deterministic)."""
    return [
        FrameworkRecord(
            id=f"fw-{i:05d}",
            name=f"Framework {i}",
            type="operator",
            description=f"Synthetic framework number {i}.",
            triggers=(f"trigger-{i % _TRIGGERS}", f"theme-{i % 7}"),
            problem_types=(f"problem-{i % _PROBLEM_TYPES}",),
            version="1.0.0",
            source_digest=f"sha256:{i:064x}",
            chains_to=(
                (f"fw-{(i + 1) % count:05d}", 0.5),
                (f"fw-{(i + 2) % count:05d}", 0.25),
            ),
            good_for=((f"problem-{i % _PROBLEM_TYPES}", 0.8),),
        )
        for i in range(count)
    ]


def _check_samples(registry: EmbeddedRegistry) -> list[float]:
    """Milliseconds of phase 7's check: a framework's own triggers selected right after it was
    registered through the same handle (the registration not timed)."""
    samples = []
    for i in range(CHECKS):
        record = FrameworkRecord(
            id=f"new-{i:03d}",
            name=f"New framework {i}",
            type="operator",
            triggers=(f"new-trigger-{i}", f"trigger-{i % _TRIGGERS}"),
            problem_types=(f"problem-{i % _PROBLEM_TYPES}",),
            chains_to=((f"fw-{i:05d}", 0.5),),
        )
        registry.register(record)
        began = time.perf_counter()
        chosen = registry.select(record.triggers)
        samples.append((time.perf_counter() - began) * 1000)
        if chosen[0].id != record.id:
            raise AssertionError(f"{record.id}'s own triggers chose {chosen[0].id}")
    return samples


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _sentence_samples(registry: EmbeddedRegistry) -> list[float]:
    """Milliseconds of free-text selections (the first builds the index and is not counted)."""
    registry.select_text("warm up the index")
    samples = []
    for i in range(SELECTIONS):
        sentence = f"which framework handles trigger-{i % _TRIGGERS} for problem-{i % 5}?"
        began = time.perf_counter()
        registry.select_text(sentence, previous=[f"fw-{(i * 37) % FRAMEWORKS:05d}"])
        samples.append((time.perf_counter() - began) * 1000)
    return samples


def rows() -> list[Row]:
    """Time one batched registration into a fresh file, then many selections over it."""
    records = synthetic_frameworks()
    with tempfile.TemporaryDirectory() as folder:
        database = Path(folder) / "registry.lbug"
        with EmbeddedRegistry(database) as registry:
            began = time.perf_counter()
            registry.register_many(records)
            register_s = time.perf_counter() - began
        # Selected through a handle that has not written yet, as a command opens one.
        with EmbeddedRegistry(database) as registry:
            # A handle's first selection at a revision is the Cypher query, the second builds
            # the postings every later one uses: timed apart, not among the samples.
            began = time.perf_counter()
            registry.select(["trigger-1"], ["problem-1"], ["fw-00001"])
            first_ms = (time.perf_counter() - began) * 1000
            registry.select(["warm-up"])
            samples = []
            for i in range(SELECTIONS):
                began = time.perf_counter()
                registry.select(
                    [f"trigger-{i % _TRIGGERS}"],
                    [f"problem-{i % _PROBLEM_TYPES}"],
                    [f"fw-{(i * 37) % FRAMEWORKS:05d}"],
                )
                samples.append((time.perf_counter() - began) * 1000)
            text_samples = _sentence_samples(registry)
            check_samples = _check_samples(registry)
        one_shot = _one_shot_rows(Path(folder))
    context = f"{FRAMEWORKS} frameworks, {2 * FRAMEWORKS} CHAINS_TO"
    return [
        Row(
            f"register {FRAMEWORKS} frameworks (UNWIND batches)",
            register_s,
            "s",
            REGISTER_TARGET_S,
            f"fresh embedded file, batches of {DEFAULT_BATCH_SIZE}",
        ),
        Row(
            "select --trigger p50",
            statistics.median(samples),
            "ms",
            SELECT_P50_TARGET_MS,
            f"{context}; trigger postings cached per registry revision",
        ),
        Row(
            "select --trigger, first at a revision",
            first_ms,
            "ms",
            None,
            "one SELECT_QUERY run by the engine (what a one-shot command pays)",
        ),
        Row(
            "register one, then select its triggers p50",
            statistics.median(check_samples),
            "ms",
            CHECK_P50_TARGET_MS,
            f"phase 7's check: the selection alone, {CHECKS} registrations through one handle "
            "(its postings carried along its writes)",
        ),
        Row(
            "select --trigger p99",
            _percentile(samples, 0.99),
            "ms",
            None,
            f"{SELECTIONS} contexts (trigger, problem type, previous), after one index build",
        ),
        Row(
            "select a sentence p50",
            statistics.median(text_samples),
            "ms",
            SELECT_TEXT_P50_TARGET_MS,
            f"{context}; ranked text index cached per registry revision",
        ),
        Row(
            "select a sentence p99",
            _percentile(text_samples, 0.99),
            "ms",
            None,
            f"{SELECTIONS} sentences, after one index build",
        ),
        *one_shot,
    ]


def _settled(database: Path) -> None:
    """Wait until the registry file was last written SETTLED_SECONDS ago: before, no quick
    index can be trusted (mindrian.routing.quick), and the untimed first run would not keep
    one."""
    newest = max(p.stat().st_mtime for p in database.parent.glob(database.name + "*"))
    time.sleep(max(0.0, newest + SETTLED_SECONDS + 0.1 - time.time()))


def _one_shot_rows(folder: Path) -> list[Row]:
    """``mindrian select "a sentence"`` in a new process each time, over the registry file in
    ``folder``: with the index cache (the untimed first run builds and keeps it, the timed ones
    read it), in English and in Chinese, and without it (every run builds the index)."""
    registry = ["--registry", str(folder / "registry.lbug")]
    kept_env = {"MINDRIAN_CACHE_DIR": str(folder / "cache")}
    _settled(folder / "registry.lbug")
    rows = []
    for label, sentence in ONE_SHOT_SENTENCES:
        argv = [*mindrian_command(), "select", sentence, *registry]
        kept = median_seconds(argv, ONE_SHOT_RUNS, env=kept_env)
        rows.append(
            Row(
                f"one-shot select a sentence{label} (new process)",
                kept * 1000,
                "ms",
                ONE_SHOT_STARTS,
                f"median of {ONE_SHOT_RUNS}; the sentence's terms read from the quick index",
                per="start",
            )
        )
    argv = [*mindrian_command(), "select", ONE_SHOT_SENTENCES[0][1], *registry]
    cold = median_seconds(argv, COLD_RUNS, env={"MINDRIAN_CACHE_DIR": ""})
    return [
        *rows,
        Row(
            "one-shot select a sentence, no index cache",
            cold * 1000,
            "ms",
            None,
            f"median of {COLD_RUNS}; MINDRIAN_CACHE_DIR= (each run builds the text index)",
        ),
    ]


if __name__ == "__main__":
    for row in rows():
        print(row)
