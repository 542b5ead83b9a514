"""``mindrian diff``: what a change to the skills does to each agent's behaviour.

:func:`review` reads the generated packages at two revisions (:mod:`.revisions`), compares them
aspect by aspect (:mod:`.semantic`) and :mod:`.report` renders the result as Markdown or JSON.
"""

from __future__ import annotations

from pathlib import Path

from builder.review.report import markdown, to_json, verdict
from builder.review.revisions import (
    WORKING_TREE,
    ReviewError,
    default_base,
    git_root,
    read_snapshot,
)
from builder.review.semantic import AgentDiff, Change, ReviewDiff, compare

__all__ = [
    "WORKING_TREE",
    "AgentDiff",
    "Change",
    "ReviewDiff",
    "ReviewError",
    "markdown",
    "review",
    "to_json",
    "verdict",
]


def review(root: Path, base: str | None = None, head: str | None = None) -> ReviewDiff:
    """The semantic difference of the project at ``root`` from ``base`` (default: the merge base
    with the default branch) to ``head`` (default: the working tree)."""
    git_root(root)
    revision, label = (base, base) if base is not None else default_base(root)
    return compare(read_snapshot(root, revision, label), read_snapshot(root, head))
