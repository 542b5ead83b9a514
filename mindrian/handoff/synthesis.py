"""Deterministic merge of several handoff results into one.

The merge depends only on its inputs and their order: lists keep first
occurrences in order, scores are averaged per name over the results that gave
that score, and failures are reported rather than dropped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

from mindrian.handoff._markdown import bullets, quote
from mindrian.handoff.context import HandoffContext, HandoffResult

__all__ = ["SYNTHESIS_AGENT_ID", "merge_results"]

#: ``from_agent`` of a result the manager merged itself, without a synthesizer agent.
SYNTHESIS_AGENT_ID = "handoff-manager"


def merge_results(results: Sequence[HandoffResult], context: HandoffContext) -> HandoffResult:
    """One result combining ``results``, returned to ``context.return_to``."""
    done = tuple(r for r in results if r.success)
    failed = tuple(r for r in results if not r.success)
    failures = tuple(
        f"{r.from_agent}: {r.error or 'failed without an error message'}" for r in failed
    )
    merged = HandoffResult(
        handoff_id=f"{context.handoff_id}:synthesis",
        from_agent=SYNTHESIS_AGENT_ID,
        to_agent=context.return_to,
        success=bool(done),
        key_findings=_unique(f for r in done for f in r.key_findings),
        recommendations=_unique(x for r in done for x in r.recommendations),
        confidence=_mean(r.confidence for r in done),
        scores=_mean_scores(done),
        suggested_next_agents=_unique(a for r in done for a in r.suggested_next_agents),
        open_questions=_unique(
            (
                *(q for r in done for q in r.open_questions),
                *(f"No result from {f}" for f in failures),
            )
        ),
        needs_human_input=any(r.needs_human_input for r in results),
        human_input_reason="; ".join(r.human_input_reason for r in results if r.human_input_reason),
        # Total agent time, so the figure does not depend on how the handoffs were scheduled.
        duration_seconds=math.fsum(r.duration_seconds for r in results),
        error="; ".join(failures) or None,
    )
    return replace(merged, output=_output(merged, done, failures))


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _mean(values: Iterable[float]) -> float:
    numbers = tuple(values)
    return math.fsum(numbers) / len(numbers) if numbers else 0.0


def _mean_scores(results: Sequence[HandoffResult]) -> dict[str, float]:
    names = _unique(name for r in results for name in r.scores)
    return {name: _mean(r.scores[name] for r in results if name in r.scores) for name in names}


def _output(merged: HandoffResult, done: Sequence[HandoffResult], failures: Sequence[str]) -> str:
    succeeded = len(done)
    total = succeeded + len(failures)
    scores = tuple(f"{name}: {value:g}" for name, value in merged.scores.items())
    sections = (
        f"# Synthesis of {total} handoff{'s' if total != 1 else ''} ({succeeded} succeeded, "
        f"{len(failures)} failed)",
        f"Confidence: {merged.confidence:.0%}" if succeeded else "",
        (f"## Key Findings\n{bullets(merged.key_findings)}" if merged.key_findings else ""),
        (
            f"## Recommendations\n{bullets(merged.recommendations)}"
            if merged.recommendations
            else ""
        ),
        f"## Scores\n{bullets(scores)}" if scores else "",
        *(f"## From {r.from_agent}\n{quote(r.output)}" for r in done if r.output),
        f"## Failed Handoffs\n{bullets(failures)}" if failures else "",
    )
    return "\n\n".join(s for s in sections if s) + "\n"
