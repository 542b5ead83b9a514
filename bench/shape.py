"""``make shape-bench``: phase 2's agent type against types labelled by hand on real skills.

``tests/data/shape_labels.yaml`` lists skills of ``../shared/corpus`` and ``../shared/routing``,
each with the type a person gave it by reading the skill against its author's intent, the line
that decided it and a few words of why (never the skill's text). Each labelled skill that exists
goes through phases 1 and 2 in this process; the table is the confusion matrix (rows: label,
columns: the type phase 2 chose), then the accuracy and every disagreement with the rule that
fired and its reason, so a figure can be traced to the line it came from.

``tests/builder/phases/test_shape_labels.py`` runs the same measurement and holds the accuracy
to :data:`TARGET`.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench.common import ROOT
from builder.phases.architecture import PHASE as ARCHITECTURE
from builder.phases.outputs import Outputs
from builder.phases.skill_analysis import PHASE as SKILL_ANALYSIS
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import PhaseInput
from builder.pipeline.errors import MindrianError
from builder.skill.model import AGENT_TYPES
from builder.skill.source import load_source

__all__ = [
    "LABELS",
    "SHARED",
    "TARGET",
    "Label",
    "Outcome",
    "classify",
    "confusion_table",
    "load_labels",
    "main",
]

#: The labelled set, kept with the tests.
LABELS = ROOT / "tests" / "data" / "shape_labels.yaml"
#: Where the shared skills are looked for: beside the project, or beside its worktrees' folder.
_SHARED_CANDIDATES = (ROOT.parent / "shared", ROOT.parent.parent / "shared")
#: The shared folder the labels' paths are relative to (the first candidate that exists).
SHARED = next((c for c in _SHARED_CANDIDATES if c.is_dir()), _SHARED_CANDIDATES[0])
#: The accuracy phase 2 must reach on the labelled set (issue 33: at least 95 %).
TARGET = 0.95


@dataclass(frozen=True)
class Label:
    """One skill's type as a person read it."""

    path: str
    """The SKILL.md, relative to the shared folder."""
    label: str
    """The agent type the author wrote."""
    line: int
    """The SKILL.md line that decides it."""
    why: str
    """A few words of why."""


@dataclass(frozen=True)
class Outcome:
    """What phase 2 made of a labelled skill."""

    label: Label
    """The person's reading."""
    chosen: str
    """The type phase 2 chose (``error`` when phase 1 or 2 refused the skill)."""
    rule: str
    """The rule that fired (or the error code)."""
    reason: str
    """The rule's reason (or the error's message)."""

    @property
    def right(self) -> bool:
        """Whether phase 2 agrees with the label."""
        return self.chosen == self.label.label


def load_labels(path: Path = LABELS) -> tuple[Label, ...]:
    """The labelled skills, in file order."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return tuple(Label(**entry) for entry in data["skills"])


def classify(label: Label, shared: Path = SHARED) -> Outcome:
    """Phases 1 and 2 on one labelled skill, as the build runs them."""
    path = shared / label.path
    try:
        source = load_source(path, display=label.path)
        first = SKILL_ANALYSIS.run(
            PhaseInput(source=source, config=BuildConfig(root=str(shared)), previous=Outputs())
        )
        previous = Outputs().after(SKILL_ANALYSIS.name, lambda: first.output)
        spec = ARCHITECTURE.run(
            PhaseInput(source=source, config=BuildConfig(root=str(shared)), previous=previous)
        ).output
    except MindrianError as exc:
        return Outcome(label, "error", exc.code, exc.message)
    return Outcome(label, spec.type, spec.type_rule, spec.type_reason)


def confusion_table(outcomes: Sequence[Outcome]) -> str:
    """Rows: the labels; columns: the types chosen; then the accuracy."""
    chosen = [*AGENT_TYPES, *sorted({o.chosen for o in outcomes} - set(AGENT_TYPES))]
    counts = Counter((o.label.label, o.chosen) for o in outcomes)
    width = max(len(t) for t in chosen) + 1
    lines = ["label \\ chosen".ljust(16) + "".join(t.rjust(width) for t in chosen) + "   n"]
    for label in AGENT_TYPES:
        row = [counts[(label, t)] for t in chosen]
        lines.append(label.ljust(16) + "".join(str(c).rjust(width) for c in row) + f"{sum(row):4}")
    right = sum(o.right for o in outcomes)
    lines.append(f"accuracy {right}/{len(outcomes)} = {right / max(len(outcomes), 1):.1%}")
    return "\n".join(lines)


def main(argv: Sequence[str] = ()) -> int:
    """Print the confusion table and the disagreements; exit 1 under :data:`TARGET`."""
    labels = [label for label in load_labels() if (SHARED / label.path).is_file()]
    if not labels:
        print(f"no labelled skill found under {SHARED}", file=sys.stderr)
        return 2
    outcomes = [classify(label) for label in labels]
    print(confusion_table(outcomes))
    for o in outcomes:
        if not o.right:
            print(
                f"  {o.label.path}:{o.label.line}: labelled {o.label.label} ({o.label.why}); "
                f"chose {o.chosen} by {o.rule}: {o.reason}"
            )
    right = sum(o.right for o in outcomes)
    return 0 if right / len(outcomes) >= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
