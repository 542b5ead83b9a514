"""Phase 2's type agrees with a person's reading of real skills (issue 33: at least 95 %).

The labels (``tests/data/shape_labels.yaml``: path, type, deciding line, why) were made by
reading each skill of ``../shared/corpus`` and ``../shared/routing`` against its author's
intent; ``make shape-bench`` prints the confusion table and every disagreement.
"""

from __future__ import annotations

import pytest

from bench.shape import SHARED, TARGET, classify, confusion_table, load_labels

LABELS = load_labels()
PRESENT = [label for label in LABELS if (SHARED / label.path).is_file()]


def test_the_labelled_set_is_large_enough_and_names_each_line() -> None:
    assert len(LABELS) >= 60
    assert len({label.path for label in LABELS}) == len(LABELS)
    assert all(label.line >= 1 and label.why for label in LABELS)


@pytest.mark.skipif(not PRESENT, reason=f"shared skills not found at {SHARED}")
def test_phase_two_types_the_labelled_skills_at_the_target_accuracy() -> None:
    outcomes = [classify(label) for label in PRESENT]
    right = sum(o.right for o in outcomes)
    wrong = [
        f"{o.label.path}: {o.label.label} != {o.chosen} ({o.rule})" for o in outcomes if not o.right
    ]
    assert right / len(outcomes) >= TARGET, confusion_table(outcomes) + "\n" + "\n".join(wrong)
