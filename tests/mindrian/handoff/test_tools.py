"""The orchestration tools on their own: clarity per turn, the gate, summaries, saved sessions."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from mindrian.graph import EmbeddedRegistry, FrameworkRecord
from mindrian.handoff import HandoffContext, HandoffResult, ProblemClarity
from mindrian.handoff.tools import (
    ClarityTracker,
    Orchestration,
    assess_clarity,
    bound,
    delegate,
    select_frameworks,
    summarise_result,
)

CLEAR = {
    "what": "Churn in the first 90 days",
    "who": "B2B SaaS under $1M ARR",
    "success": "Churn from 15% to 8%",
    "what_clarity": 0.9,
    "who_clarity": 0.8,
    "success_clarity": 0.7,
}


def scorecard(context: HandoffContext) -> HandoffResult:
    return HandoffResult(
        handoff_id=context.handoff_id,
        from_agent=context.to_agent,
        to_agent=context.return_to,
        success=True,
        output=f"Scored: {context.problem_clarity.what}",
        key_findings=("Real pain",),
        scores={"problem": 22.0},
        confidence=0.75,
    )


@pytest.fixture
def registry() -> Any:
    with EmbeddedRegistry(None) as reg:
        reg.register_many(
            [
                FrameworkRecord("pws", "PWS", "operator", triggers=("validate", "idea check")),
                FrameworkRecord("larry", "Larry", "role", triggers=("idea",)),
                FrameworkRecord("lean", "Lean", "guided", triggers=("idea", "canvas")),
            ]
        )
        yield reg


def orchestration(registry: Any, **kwargs: Any) -> Orchestration:
    agents = {"pws": scorecard}
    return Orchestration(
        agent_id="larry",
        registry=registry,
        agents=agents.get,
        can_delegate_to=("pws", "jtbd"),
        min_clarity={"pws": 0.7},
        **kwargs,
    )


def test_the_tracker_merges_updates_and_snapshots_each_turn() -> None:
    tracker = ClarityTracker()
    tracker.update(what="Churn", what_clarity=0.5)
    tracker.end_turn()
    tracker.update(who="Founders", who_clarity=0.6, what=None)
    tracker.end_turn()
    assert [c.what for c in tracker.turns] == ["Churn", "Churn"]
    assert tracker.turns[1].who_clarity == 0.6 and tracker.turns[0].who is None
    assert tracker.current == tracker.turns[-1]


def test_tools_outside_a_conversation_say_so() -> None:
    for answer in (assess_clarity("", "", "", 0, 0, 0), select_frameworks("x"), delegate("a", "b")):
        assert answer.startswith("Unavailable: this tool only works inside")


def test_the_gate_then_the_delegation_and_its_summary(registry: Any) -> None:
    orch = orchestration(registry)
    with bound(orch, "s1"):
        assert delegate("lean", "Canvas it").startswith(
            "Not delegated: larry may not delegate to 'lean' (pws, jtbd)."
        )
        early = assess_clarity(CLEAR["what"], "", "", 0.9, 0.2, 0.1)
        assert early == (
            "Clarity 0.40 (what 0.90, who 0.20, success 0.10): "
            "not ready: clarify what success looks like."
        )
        assert delegate("pws", "Validate") == (
            "Not delegated: overall clarity 0.40 is below the 0.70 pws needs. "
            "Clarify first: what success looks like."
        )
        assert assess_clarity("", "", "", 2.0, 0, 0).startswith(
            "Not recorded: what_clarity must be"
        )
        assert assess_clarity(**CLEAR).endswith(": ready to delegate.")
        listed = select_frameworks("is my idea worth it").splitlines()
        # Ranked by text relevance (README "Selection"): only the delegable pws is listed.
        assert listed[0] == (
            "Frameworks, best first (what each is for, and what its author says it is not for):"
        )
        assert [line.split(": score")[0] for line in listed[1:]] == ["1. pws (PWS)"], (
            "larry itself and lean (not delegable) are left out"
        )
        answer = delegate("pws", "Validate")
        assert delegate("jtbd", "Jobs") == "Not delegated: no agent package provides 'jtbd'."
    assert answer == (
        "pws answered (confidence 75%):\n\nScored: Churn in the first 90 days"
        "\n\nKey findings:\n- Real pain\n\nScores:\n- problem: 22"
    )
    state = orch.session("s1")
    assert [r.from_agent for r in state.results] == ["pws"]
    assert state.clarity.turns == (ProblemClarity(**CLEAR),)


def test_a_failed_delegation_reads_as_a_failure(registry: Any) -> None:
    def broken(context: HandoffContext) -> str:
        raise RuntimeError("model exploded")

    orch = Orchestration(agent_id="larry", registry=registry, agents={"pws": broken}.get)
    with bound(orch, "s"):
        assess_clarity(**CLEAR)
        assert delegate("pws", "Validate") == (
            "pws failed: agent 'pws' raised RuntimeError: model exploded."
        )


def test_delegate_refuses_to_block_its_own_event_loop(registry: Any) -> None:
    orch = orchestration(registry)

    async def on_the_loop() -> None:
        with bound(orch, "s"):
            orch.session("s").clarity.update(**CLEAR)
            with pytest.raises(RuntimeError, match="worker thread"):
                delegate("pws", "Validate")

    asyncio.run(on_the_loop())


def test_sessions_survive_a_new_process(registry: Any, tmp_path: Path) -> None:
    with bound(orchestration(registry, state_dir=tmp_path), "../../etc/passwd"):
        assess_clarity(**CLEAR)
        delegate("pws", "Validate")
    (saved,) = (tmp_path / "orchestration" / "larry").glob("*.json")
    assert saved.parent == tmp_path / "orchestration" / "larry", "the session id is no path"
    again = orchestration(registry, state_dir=tmp_path).session("../../etc/passwd")
    assert again.clarity.current == ProblemClarity(**CLEAR)
    assert [r.output for r in again.results] == ["Scored: Churn in the first 90 days"]
    assert again.consulted == ("pws",)


def test_summaries_list_only_what_the_result_has() -> None:
    result = HandoffResult(
        handoff_id="h", from_agent="devil", to_agent="larry", success=True, output="Objection."
    )
    assert summarise_result(result) == "devil answered (confidence 0%):\n\nObjection."
