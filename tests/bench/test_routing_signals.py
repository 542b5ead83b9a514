"""The signal bench's pieces: what a framework is encoded as, and the ranker it fits."""

from __future__ import annotations

import numpy as np

from bench.routing_signals import fit_ranker, segments
from mindrian.graph import FrameworkRecord


def test_segments_sort_the_body_lines_by_kind_without_markup_or_repeats() -> None:
    record = FrameworkRecord(
        id="x",
        name="x",
        type="operator",
        description="Reads logs. Finds the failing step! Short.",
        body="# When to use it\n- **Reading** a long CI log\n1. Open the log\nIt is. It "
        "reports the first failure.\n- **Reading** a long CI log",
    )
    assert segments(record) == {
        "description sentences": ["Reads logs.", "Finds the failing step!"],
        "body headings": ["When to use it"],
        "body list items": ["Reading a long CI log", "Open the log"],
        "body sentences": ["It reports the first failure."],
    }


def test_the_ranker_learns_the_feature_that_marks_the_right_framework() -> None:
    rng = np.random.default_rng(7)
    features = rng.normal(size=(60, 5, 2))
    right = rng.integers(0, 5, size=60)
    features[np.arange(60), right, 1] += 2.0  # feature 1 points at the right one, 0 is noise
    weights, mean, scale = fit_ranker(features, right)
    assert weights[1] > 1.0 > abs(weights[0])
    chosen = (((features - mean) / scale) @ weights).argmax(axis=1)
    assert (chosen == right).mean() >= 0.75
    again = fit_ranker(features, right)
    assert all(np.array_equal(a, b) for a, b in zip((weights, mean, scale), again, strict=True))
