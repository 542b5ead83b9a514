"""HandoffManager: every handoff type and mode, every failure path, history, and the seed
examples."""

import asyncio
import itertools
import json
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pydantic
import pytest
from golden_files import Golden

from mindrian.handoff import (
    HUMAN_AGENT_ID,
    SYNTHESIS_AGENT_ID,
    HandoffContext,
    HandoffManager,
    HandoffMode,
    HandoffRecord,
    HandoffResult,
    HandoffType,
    PreviousAnalysis,
    ProblemClarity,
)

GOLDEN = Path(__file__).parent / "golden"
FIXED_TIME = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)


def run(coro):
    return asyncio.run(coro)


def make_manager(**kwargs) -> HandoffManager:
    """A manager whose clock ticks one second per reading and whose ids count up."""
    ticks = itertools.count()
    ids = itertools.count(1)
    return HandoffManager(
        clock=lambda: float(next(ticks)),
        now=lambda: FIXED_TIME,
        id_factory=lambda: f"h{next(ids)}",
        **kwargs,
    )


class FakeAgent:
    """Answers every handoff with a fixed result and remembers what it was given."""

    def __init__(self, agent_id: str, **fields):
        self.agent_id = agent_id
        self.fields = {"output": f"{agent_id} output", "confidence": 0.5, **fields}
        self.received: list[HandoffContext] = []

    async def process_handoff(self, context: HandoffContext) -> HandoffResult:
        self.received.append(context)
        return HandoffResult(
            handoff_id=context.handoff_id,
            from_agent=self.agent_id,
            to_agent=context.return_to,
            success=True,
            **self.fields,
        )


async def raising_agent(context):
    raise RuntimeError("model exploded")


async def sleeping_agent(context):
    await asyncio.sleep(30)
    return "too late"


async def own_timeout_agent(context):
    raise TimeoutError("upstream API timed out")


def delegate(manager, to_agent="pws", **kwargs):
    return manager.create_delegation(
        from_agent="larry", to_agent=to_agent, task=f"Task for {to_agent}", **kwargs
    )


def manager_with(**agents) -> HandoffManager:
    manager = make_manager()
    for agent_id, agent in agents.items():
        manager.register_agent(agent_id.replace("_", "-"), agent)
    return manager


# --- create_delegation --------------------------------------------------------------


def test_create_delegation_uses_the_manager_identity_sources_and_defaults():
    manager = make_manager(default_timeout_seconds=42.0)
    context = delegate(
        manager,
        problem_clarity={"what": "Churn", "what_clarity": 0.9},
        focus_areas=["a"],
    )
    assert (context.handoff_id, context.timestamp) == ("h1", FIXED_TIME)
    assert context.problem_clarity == ProblemClarity(what="Churn", what_clarity=0.9)
    assert context.handoff_type is HandoffType.DELEGATE
    assert (context.timeout_seconds, context.return_to, context.focus_areas) == (
        42.0,
        "larry",
        ("a",),
    )
    assert delegate(manager, handoff_id="fixed").handoff_id == "fixed"
    assert delegate(manager).handoff_id == "h2"


# --- execute: success and adaptation of agent kinds -----------------------------------


def test_execute_runs_a_process_handoff_agent_and_records_it():
    pws = FakeAgent("pws", key_findings=["Strong problem"])
    manager = manager_with(pws=pws)
    context = delegate(manager)
    result = run(manager.execute(context))
    assert pws.received == [context]
    assert (result.success, result.output, result.key_findings) == (
        True,
        "pws output",
        ("Strong problem",),
    )
    assert (result.handoff_id, result.from_agent, result.to_agent) == (
        "h1",
        "pws",
        "larry",
    )
    assert result.duration_seconds == 1.0
    assert manager.history == (HandoffRecord(context=context, result=result),)


class Verdict(pydantic.BaseModel):
    output: str
    key_findings: list[str]
    confidence: float


class OtherSchema(pydantic.BaseModel):
    answer: int


class FakeAgnoAgent:
    """Stands in for an Agno Agent/Team: only ``arun`` and a response with ``content``."""

    def __init__(self, content, status="COMPLETED"):
        self.content = content
        self.status = status
        self.calls: list[tuple[str, dict]] = []

    async def arun(self, message, **kwargs):
        self.calls.append((message, kwargs))
        return SimpleNamespace(content=self.content, status=SimpleNamespace(value=self.status))


async def async_text_agent(context):
    return f"handled {context.task_description}"


def sync_text_agent(context):
    return "sync answer"


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        (
            async_text_agent,
            {
                "success": True,
                "output": "handled Task for pws",
                "output_format": "markdown",
            },
        ),
        (sync_text_agent, {"success": True, "output": "sync answer"}),
        (FakeAgnoAgent("plain text"), {"success": True, "output": "plain text"}),
        (
            FakeAgnoAgent({"output": "# Card", "scores": {"problem": 22}, "confidence": 0.75}),
            {
                "success": True,
                "output": "# Card",
                "scores": {"problem": 22.0},
                "confidence": 0.75,
            },
        ),
        (
            FakeAgnoAgent(Verdict(output="v", key_findings=["k"], confidence=0.4)),
            {"success": True, "output": "v", "key_findings": ("k",), "confidence": 0.4},
        ),
        (
            FakeAgnoAgent({"success": False, "error": "no data"}),
            {"success": False, "error": "no data"},
        ),
        (
            FakeAgnoAgent(OtherSchema(answer=7)),
            {"success": True, "output": '{"answer": 7}', "output_format": "json"},
        ),
        (FakeAgnoAgent(None), {"success": False, "error": "agent returned no content"}),
        (
            FakeAgnoAgent(42),
            {"success": False, "error": "agent returned unsupported int content"},
        ),
        (
            FakeAgnoAgent("rate limited", status="ERROR"),
            {
                "success": False,
                "error": "agent run ended with status ERROR: rate limited",
            },
        ),
        (
            FakeAgnoAgent({"output": "x", "confidence": 3}),
            {
                "success": False,
                "error": "agent 'pws' raised ValueError: confidence must be between 0.0 and 1.0, "
                "got 3",
            },
        ),
    ],
    ids=lambda v: type(v).__name__,
)
def test_every_agent_kind_is_adapted(agent, expected):
    manager = manager_with(pws=agent)
    result = run(manager.execute(delegate(manager)))
    assert {name: getattr(result, name) for name in expected} == expected
    assert (result.handoff_id, result.from_agent, result.to_agent) == (
        "h1",
        "pws",
        "larry",
    )


def test_agno_style_agent_gets_the_prompt_and_the_session():
    agno = FakeAgnoAgent("ok")
    manager = manager_with(pws=agno)
    context = delegate(manager, session_id="s1")
    run(manager.execute(context))
    run(manager.execute(delegate(manager)))
    assert agno.calls == [
        (context.to_prompt(), {"session_id": "s1"}),
        (agno.calls[1][0], {}),
    ]


def test_result_routing_is_taken_from_the_context():
    async def wrong_routing(context):
        return HandoffResult(
            handoff_id="other", from_agent="someone", to_agent="else", success=True
        )

    manager = manager_with(pws=wrong_routing)
    result = run(manager.execute(delegate(manager, return_to="boss")))
    assert (result.handoff_id, result.from_agent, result.to_agent) == (
        "h1",
        "pws",
        "boss",
    )


@pytest.mark.parametrize(
    ("agent_id", "agent", "error"),
    [("x", object(), TypeError), ("", async_text_agent, ValueError)],
)
def test_register_agent_rejects_unusable_input(agent_id, agent, error):
    with pytest.raises(error):
        make_manager().register_agent(agent_id, agent)


def test_register_agent_replaces_an_earlier_registration():
    manager = manager_with(pws=sync_text_agent)
    manager.register_agent("pws", async_text_agent)
    assert manager.agents == ("pws",)
    assert run(manager.execute(delegate(manager))).output == "handled Task for pws"


# --- execute: failure paths -------------------------------------------------------------


@pytest.mark.parametrize(
    ("agents", "timeout", "error"),
    [
        ({"minto": sync_text_agent}, None, "unknown agent 'pws'; registered: minto"),
        ({}, None, "unknown agent 'pws'; registered: (none)"),
        (
            {"pws": raising_agent},
            None,
            "agent 'pws' raised RuntimeError: model exploded",
        ),
        ({"pws": sleeping_agent}, 0.01, "agent 'pws' timed out after 0.01s"),
        (
            {"pws": own_timeout_agent},
            None,
            "agent 'pws' raised TimeoutError: upstream API timed out",
        ),
    ],
    ids=[
        "unknown",
        "nothing-registered",
        "raises",
        "timeout",
        "agent-own-timeout-error",
    ],
)
def test_failures_come_back_as_results(agents, timeout, error):
    manager = manager_with(**agents)
    context = delegate(manager, timeout_seconds=timeout)
    result = run(manager.execute(context))
    assert (result.success, result.error) == (False, error)
    assert (result.from_agent, result.to_agent, result.duration_seconds) == (
        "pws",
        "larry",
        1.0,
    )
    assert manager.history[-1] == HandoffRecord(context=context, result=result)


def test_timeout_is_enforced_in_real_time():
    manager = HandoffManager()
    manager.register_agent("pws", sleeping_agent)
    context = manager.create_delegation("larry", "pws", "t", timeout_seconds=0.05)
    result = run(manager.execute(context))
    assert not result.success
    assert 0.05 <= result.duration_seconds < 20  # the agent sleeps 30 s: a bound, not a speed


# --- sequential ---------------------------------------------------------------------------


def test_sequential_passes_earlier_successes_on_without_mutating_inputs():
    pws = FakeAgent("pws", key_findings=["Strong problem"], scores={"problem": 22})
    devil = FakeAgent("devil")
    jtbd = FakeAgent("jtbd")
    manager = manager_with(pws=pws, broken=raising_agent, devil=devil, jtbd=jtbd)
    contexts = [delegate(manager, name) for name in ("pws", "broken", "devil", "jtbd")]
    results = run(manager.execute_sequential(contexts))

    assert [r.success for r in results] == [True, False, True, True]
    assert pws.received[0].previous_analyses == ()
    assert devil.received[0].previous_analyses == (PreviousAnalysis.from_result(results[0]),)
    assert [a.agent_id for a in jtbd.received[0].previous_analyses] == ["pws", "devil"]
    assert devil.received[0].handoff_mode is HandoffMode.SEQUENTIAL
    assert all(c.previous_analyses == () for c in contexts)


def test_sequential_keeps_analyses_the_caller_already_supplied():
    devil = FakeAgent("devil")
    manager = manager_with(pws=FakeAgent("pws"), devil=devil)
    given = PreviousAnalysis(agent_id="minto", summary="earlier")
    run(
        manager.execute_sequential(
            [
                delegate(manager, "pws"),
                delegate(manager, "devil", previous_analyses=[given]),
            ]
        )
    )
    assert [a.agent_id for a in devil.received[0].previous_analyses] == ["minto", "pws"]


# --- parallel -------------------------------------------------------------------------------


def test_parallel_runs_concurrently_and_one_failure_does_not_sink_the_others():
    seen: set[str] = set()

    def waiting_agent(name):
        # Each agent waits until the other has started: only a concurrent run finishes in time
        # (a sequential one would spin until the timeout, generous for a loaded machine).
        async def agent(context):
            seen.add(name)
            while len(seen) < 2:
                await asyncio.sleep(0)
            return f"{name} done"

        return agent

    manager = manager_with(a=waiting_agent("a"), b=waiting_agent("b"), broken=raising_agent)
    contexts = [delegate(manager, n, timeout_seconds=30) for n in ("a", "broken", "b")]
    results = run(manager.execute_parallel(contexts))
    assert [(r.from_agent, r.success, r.output) for r in results] == [
        ("a", True, "a done"),
        ("broken", False, ""),
        ("b", True, "b done"),
    ]
    assert {r.context.handoff_mode for r in manager.history} == {HandoffMode.PARALLEL}


def test_parallel_turns_an_unexpected_exception_into_a_failed_result(monkeypatch):
    manager = manager_with(pws=FakeAgent("pws"), minto=FakeAgent("minto"))
    original = manager._execute

    async def flaky_execute(context):
        if context.to_agent == "minto":
            raise RuntimeError("manager bug")
        return await original(context)

    monkeypatch.setattr(manager, "_execute", flaky_execute)
    results = run(manager.execute_parallel([delegate(manager, "pws"), delegate(manager, "minto")]))
    assert [r.success for r in results] == [True, False]
    assert results[1].error == "RuntimeError: manager bug"
    assert [r.result for r in manager.history] == list(results)


# --- selective ------------------------------------------------------------------------------


def pick_minto(context, candidates):
    return "minto"


async def pick_async(context, candidates):
    return candidates[-1]


def pick_unknown(context, candidates):
    return "oracle"


def pick_raises(context, candidates):
    raise LookupError("no route")


@pytest.mark.parametrize(
    ("choose", "success", "to_agent", "error"),
    [
        (pick_minto, True, "minto", None),
        (pick_async, True, "pws", None),
        (
            pick_unknown,
            False,
            "jtbd",
            "router chose 'oracle', which is not one of the candidates: minto, pws",
        ),
        (pick_raises, False, "jtbd", "router raised LookupError: no route"),
    ],
)
def test_selective_routes_to_the_chosen_candidate(choose, success, to_agent, error):
    manager = manager_with(minto=FakeAgent("minto"), pws=FakeAgent("pws"))
    result = run(manager.execute_selective(delegate(manager, "jtbd"), ["minto", "pws"], choose))
    assert (result.success, result.from_agent, result.error) == (
        success,
        to_agent,
        error,
    )
    record = manager.history[-1]
    assert (record.context.to_agent, record.context.handoff_mode) == (
        to_agent,
        HandoffMode.SELECTIVE,
    )


def test_selective_candidate_that_is_not_registered_fails_cleanly():
    manager = manager_with(minto=FakeAgent("minto"))
    result = run(
        manager.execute_selective(delegate(manager, "minto"), ["ghost"], lambda c, o: "ghost")
    )
    assert (result.success, result.error) == (
        False,
        "unknown agent 'ghost'; registered: minto",
    )


# --- debate ---------------------------------------------------------------------------------


def test_debate_rounds_show_each_participant_the_others_positions():
    cynefin = FakeAgent("cynefin", key_findings=["Complex domain"])
    bets = FakeAgent("bets", key_findings=["Small bets"])
    manager = manager_with(cynefin=cynefin, bets=bets, premortem=raising_agent)
    contexts = [delegate(manager, n) for n in ("cynefin", "bets", "premortem")]
    rounds = run(manager.execute_debate(contexts, rounds=3))

    assert [[r.success for r in round_] for round_ in rounds] == [[True, True, False]] * 3
    first, second, third = cynefin.received
    assert first.previous_analyses == ()
    assert second.previous_analyses == (PreviousAnalysis.from_result(rounds[0][1]),)
    assert third.previous_analyses == (PreviousAnalysis.from_result(rounds[1][1]),)
    assert [a.agent_id for a in bets.received[1].previous_analyses] == ["cynefin"]
    assert "Debate round 2 of 3" in second.task_description
    assert first.handoff_mode is HandoffMode.DEBATE
    ids = [r.context.handoff_id for r in manager.history]
    assert len(ids) == len(set(ids)) == 9


@pytest.mark.parametrize(
    ("participants", "rounds", "message"),
    [(2, 0, "at least one round"), (1, 2, "two participants")],
)
def test_debate_rejects_impossible_setups(participants, rounds, message):
    manager = manager_with(a=FakeAgent("a"))
    with pytest.raises(ValueError, match=message):
        run(manager.execute_debate([delegate(manager, "a")] * participants, rounds=rounds))


# --- synthesize -----------------------------------------------------------------------------


def result(agent, **fields):
    return HandoffResult(
        handoff_id=f"r-{agent}",
        from_agent=agent,
        to_agent="larry",
        success=True,
        **fields,
    )


SYNTHESIS_INPUTS = (
    result(
        "pws",
        output="# PWS Scorecard",
        key_findings=["Strong problem", "Weak team"],
        recommendations=["Hire CTO"],
        scores={"problem": 22, "team": 12},
        confidence=0.75,
        duration_seconds=2.0,
    ),
    HandoffResult.failure(
        HandoffContext(handoff_id="x", from_agent="larry", to_agent="devil", task_description="t"),
        "timed out",
        5.0,
    ),
    result(
        "jtbd",
        output="Top jobs: faster response",
        key_findings=["Weak team", "Clear job"],
        recommendations=["Hire CTO", "Validate market"],
        scores={"problem": 18},
        confidence=0.25,
        open_questions=["Which segment first?"],
        duration_seconds=1.5,
    ),
)


def test_synthesize_merges_deterministically(golden: Golden) -> None:
    manager = make_manager()
    context = delegate(manager, "validation-team")
    merged = run(manager.synthesize(SYNTHESIS_INPUTS, context))
    assert merged == run(make_manager().synthesize(list(SYNTHESIS_INPUTS), context))
    assert (merged.handoff_id, merged.from_agent, merged.to_agent) == (
        "h1:synthesis",
        SYNTHESIS_AGENT_ID,
        "larry",
    )
    assert merged.success is True
    assert merged.key_findings == ("Strong problem", "Weak team", "Clear job")
    assert merged.recommendations == ("Hire CTO", "Validate market")
    assert merged.scores == {"problem": 20.0, "team": 12.0}
    assert merged.confidence == 0.5
    assert merged.error == "devil: timed out"
    assert merged.open_questions == (
        "Which segment first?",
        "No result from devil: timed out",
    )
    assert merged.duration_seconds == 8.5
    golden.check(GOLDEN / "handoff_synthesis.md", merged.output)
    assert manager.history == ()


def test_synthesize_of_only_failures_is_a_failure():
    manager = make_manager()
    merged = run(manager.synthesize(SYNTHESIS_INPUTS[1:2], delegate(manager)))
    assert (merged.success, merged.confidence, merged.scores) == (False, 0.0, {})
    assert (
        merged.output
        == "# Synthesis of 1 handoff (0 succeeded, 1 failed)\n\n## Failed Handoffs\n- devil: timed "
        "out\n"
    )


def test_synthesize_carries_human_input_requests():
    manager = make_manager()
    asks = result("guide", needs_human_input=True, human_input_reason="Pick a segment")
    merged = run(manager.synthesize([SYNTHESIS_INPUTS[0], asks], delegate(manager)))
    assert (merged.needs_human_input, merged.human_input_reason) == (
        True,
        "Pick a segment",
    )


def test_synthesize_with_a_synthesizer_agent_hands_it_the_results():
    larry = FakeAgent("larry", output="Here is what the team found")
    manager = manager_with(larry=larry)
    context = delegate(manager, "validation-team", session_id="s1")
    merged = run(manager.synthesize(SYNTHESIS_INPUTS, context, synthesizer="larry"))
    (given,) = larry.received
    assert [a.agent_id for a in given.previous_analyses] == ["pws", "jtbd"]
    assert (
        "These handoffs failed and are not included:\n- devil: timed out" in given.task_description
    )
    assert (given.from_agent, given.to_agent, given.session_id) == (
        "larry",
        "larry",
        "s1",
    )
    assert (merged.success, merged.output, merged.from_agent) == (
        True,
        "Here is what the team found",
        "larry",
    )


def test_synthesize_with_an_unknown_synthesizer_fails_cleanly():
    manager = make_manager()
    merged = run(manager.synthesize(SYNTHESIS_INPUTS, delegate(manager), synthesizer="nobody"))
    assert (merged.success, merged.error) == (
        False,
        "unknown agent 'nobody'; registered: (none)",
    )


# --- transfer, return, escalate ---------------------------------------------------------------


def transfer_context(manager, from_agent="larry", to_agent="expert", session_id="s1"):
    return manager.create_delegation(
        from_agent, to_agent, "Take over the technical questions", session_id=session_id
    )


def test_transfer_and_return_move_ownership():
    expert = FakeAgent("expert", output="Hi, I'm the Technical Expert.")
    manager = manager_with(expert=expert, deep_expert=FakeAgent("deep-expert"))
    assert manager.owner("s1") is None

    greeting = run(manager.transfer(transfer_context(manager)))
    assert (greeting.success, greeting.output, manager.owner("s1")) == (
        True,
        "Hi, I'm the Technical Expert.",
        "expert",
    )
    assert expert.received[0].handoff_type is HandoffType.TRANSFER

    run(manager.transfer(transfer_context(manager, "expert", "deep-expert")))
    assert manager.owner("s1") == "deep-expert"

    back = manager.return_control("s1", "deep-expert", output="Architecture reviewed")
    assert (back.success, back.from_agent, back.to_agent, back.output) == (
        True,
        "deep-expert",
        "expert",
        "Architecture reviewed",
    )
    assert manager.owner("s1") == "expert"
    assert manager.history[-1].context.handoff_type is HandoffType.RETURN
    manager.return_control("s1", "expert")
    assert manager.owner("s1") == "larry"


@pytest.mark.parametrize(
    ("setup", "attempt", "error"),
    [
        (None, ("larry", "expert", None), "a transfer needs a session_id"),
        (
            ("larry", "expert"),
            ("larry", "expert", "s1"),
            "larry cannot transfer session s1: expert owns it",
        ),
        (
            None,
            ("larry", "broken", "s1"),
            "agent 'broken' raised RuntimeError: model exploded",
        ),
        (
            None,
            ("larry", "ghost", "s1"),
            "unknown agent 'ghost'; registered: broken, expert",
        ),
    ],
)
def test_failed_transfers_leave_ownership_alone(setup, attempt, error):
    manager = manager_with(expert=FakeAgent("expert"), broken=raising_agent)
    if setup:
        run(manager.transfer(transfer_context(manager, *setup)))
    owner_before = manager.owner("s1")
    outcome = run(manager.transfer(transfer_context(manager, *attempt)))
    assert (outcome.success, outcome.error) == (False, error)
    assert manager.owner("s1") == owner_before


@pytest.mark.parametrize(
    ("transfer_first", "returning", "error"),
    [
        (False, "expert", "no transfer to return in session s1"),
        (True, "larry", "larry cannot return session s1: expert owns it"),
    ],
)
def test_invalid_returns_fail_without_changing_ownership(transfer_first, returning, error):
    manager = manager_with(expert=FakeAgent("expert"))
    if transfer_first:
        run(manager.transfer(transfer_context(manager)))
    owner_before = manager.owner("s1")
    outcome = manager.return_control("s1", returning)
    assert (outcome.success, outcome.error) == (False, error)
    assert manager.owner("s1") == owner_before
    assert manager.history[-1].result == outcome


def test_escalate_asks_for_a_human_and_is_recorded():
    manager = make_manager()
    context = delegate(manager, "pws")
    outcome = manager.escalate(context, "User must confirm the target market")
    assert (outcome.success, outcome.needs_human_input) == (False, True)
    assert outcome.human_input_reason == "User must confirm the target market"
    assert outcome.error == "escalated to a human: User must confirm the target market"
    assert (outcome.from_agent, outcome.to_agent) == ("pws", "larry")
    record = manager.history[-1]
    assert (
        record.context.handoff_type,
        record.context.from_agent,
        record.context.to_agent,
    ) == (
        HandoffType.ESCALATE,
        "pws",
        HUMAN_AGENT_ID,
    )
    assert record.context.handoff_id == outcome.handoff_id != context.handoff_id
    with pytest.raises(ValueError, match="needs a reason"):
        manager.escalate(context, "")


# --- history ----------------------------------------------------------------------------------


def test_history_exports_as_json_and_loads_back():
    manager = manager_with(pws=FakeAgent("pws", scores={"problem": 22}), broken=raising_agent)
    run(manager.execute_parallel([delegate(manager, "pws"), delegate(manager, "broken")]))
    manager.escalate(delegate(manager, "pws"), "stuck")
    exported = manager.export_history()
    text = json.dumps(exported, allow_nan=False, sort_keys=True)
    assert [r["context"]["to_agent"] for r in exported] == [
        "pws",
        "broken",
        HUMAN_AGENT_ID,
    ]
    assert tuple(HandoffRecord.from_dict(r) for r in json.loads(text)) == manager.history
    exported.clear()
    assert len(manager.history) == 3


# --- the seed examples --------------------------------------------------------------------------


def seed_agents():
    pws = FakeAgent(
        "pws-validation",
        output="# PWS Scorecard\n\nScore: 72/100 (PIVOT)",
        key_findings=["Strong problem", "Weak team"],
        recommendations=["Hire CTO", "Validate market"],
        confidence=0.75,
        scores={"problem": 22, "solution": 18, "business": 20, "people": 12},
    )
    return FakeAgent("larry"), pws, FakeAgent("devil-advocate")


def test_seed_001_usage_example_as_written():
    larry_agent, pws_agent, devil_agent = seed_agents()

    async def example():
        # Initialize
        manager = HandoffManager()

        # Register agents
        manager.register_agent("larry", larry_agent)
        manager.register_agent("pws-validation", pws_agent)
        manager.register_agent("devil-advocate", devil_agent)

        # Create delegation
        context = manager.create_delegation(
            from_agent="larry",
            to_agent="pws-validation",
            task="Validate this opportunity",
            problem_clarity={
                "what": "Customer churn in SaaS",
                "who": "B2B companies <$1M ARR",
                "success": "Reduce churn from 15% to 8%",
                "what_clarity": 0.85,
                "who_clarity": 0.80,
                "success_clarity": 0.75,
            },
            expected_output="PWS Scorecard with GO/PIVOT/NO-GO",
        )

        # Execute
        result = await manager.execute(context)
        return context, result

    context, result = run(example())
    assert result.output.startswith("# PWS Scorecard")
    assert result.key_findings == ("Strong problem", "Weak team")
    assert result.recommendations == ("Hire CTO", "Validate market")
    assert result.scores == {
        "problem": 22,
        "solution": 18,
        "business": 20,
        "people": 12,
    }
    assert result.confidence == 0.75
    assert pws_agent.received == [context]
    assert context.problem_clarity.is_ready_for_analysis
    assert "## Expected Output\nPWS Scorecard with GO/PIVOT/NO-GO" in context.to_prompt()


def test_seed_000_orchestrated_workflow_with_a_fresh_manager():
    larry_agent, pws_agent, _ = seed_agents()
    minto_agent = FakeAgent("minto", key_findings=["Onboarding is the bottleneck"], confidence=0.65)
    clarity = ProblemClarity(
        what="Churn",
        who="B2B SaaS",
        success="8% churn",
        what_clarity=0.8,
        who_clarity=0.7,
        success_clarity=0.7,
    )

    async def workflow():
        manager = make_manager()
        manager.register_agent("larry", larry_agent)
        manager.register_agent("minto", minto_agent)
        manager.register_agent("pws", pws_agent)
        contexts = [
            manager.create_delegation(
                from_agent="larry",
                to_agent="minto",
                task="Structure this problem",
                problem_clarity=clarity.to_dict(),
            ),
            manager.create_delegation(
                from_agent="larry",
                to_agent="pws",
                task="Validate this opportunity",
                problem_clarity=clarity.to_dict(),
            ),
        ]
        results = await manager.execute_parallel(contexts)
        return await manager.synthesize(results, contexts[0])

    synthesis = run(workflow())
    assert synthesis.success
    assert synthesis.key_findings == (
        "Onboarding is the bottleneck",
        "Strong problem",
        "Weak team",
    )
    assert synthesis.confidence == pytest.approx(0.7)
    assert synthesis.scores["problem"] == 22.0
