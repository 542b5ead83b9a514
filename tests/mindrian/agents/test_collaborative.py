"""CollaborativeAgent: the Agno team consults every perspective, synthesises, and can debate."""

from __future__ import annotations

import pytest

from mindrian.agents import AgentRunError, CollaborativeAgent
from mindrian.testing import ScriptedModel, Step

HATS = (
    ("White Hat", "Facts only."),
    ("Black Hat", "Risks only."),
    ("Green Hat", "New ideas only."),
)
BROADCAST = "delegate_task_to_members"


@pytest.fixture
def hats(agent_class):
    def make(rounds: int = 1):
        return agent_class(
            CollaborativeAgent,
            agent_id="de-bono-hats",
            perspectives=HATS,
            debate_rounds=rounds,
            instructions="Think with six hats.",
        )

    return make


def leader_for(rounds: int, synthesis: str) -> ScriptedModel:
    """A leader broadcasting once per round and summing up each round."""
    turns = []
    for number in range(1, rounds + 1):
        turns += [
            Step.tool_call(BROADCAST, task="Consider the question"),
            f"{synthesis} (round {number})",
        ]
    return ScriptedModel(*turns, id="leader")


def members(*answers_per_round: tuple[str, str, str]) -> dict[str, ScriptedModel]:
    return {
        name: ScriptedModel(*(answers[i] for answers in answers_per_round), id=name)
        for i, (name, _) in enumerate(HATS)
    }


def test_broadcast_consults_every_member_then_synthesises(hats, run) -> None:
    leader = leader_for(1, "Go, carefully")
    parts = members(("Churn is 15%", "Could fail on trust", "Offer a free audit"))
    agent = hats()(model=leader, part_models=parts)

    result = run(
        agent.process_handoff(agent.create_handoff_context("Should we build the chatbot?"))
    )

    assert result.success, result.error
    for name, model in parts.items():
        assert len(model.calls) == 1, name
        assert "Should we build the chatbot?" in model.calls[0].last_user_message
        model.assert_complete()
    assert parts["Black Hat"].calls[0].contents("system")[0].count("Risks only.") == 1
    leader_tool_result = leader.calls[1].contents("tool")[0]
    assert all(
        answer in leader_tool_result
        for answer in ("Churn is 15%", "Could fail on trust", "Offer a free audit")
    )
    assert leader.calls[0].tools == (BROADCAST,)
    assert result.output.startswith("Go, carefully (round 1)\n\n## Partial results")
    assert "### Black Hat\n\nCould fail on trust" in result.output
    leader.assert_complete()


def test_debate_rounds_show_members_the_other_positions(hats, run) -> None:
    leader = leader_for(2, "Verdict")
    parts = members(("fact A", "risk B", "idea C"), ("still A", "B, softened", "C plus A"))
    agent = hats(rounds=2)(model=leader, part_models=parts)

    reply = run(agent.run("Enter the market?"))

    second_round_prompt = parts["White Hat"].calls[1].last_user_message
    assert "## Debate round 2" in second_round_prompt
    assert all(
        f"### {name} (round 1)\n{text}" in second_round_prompt
        for name, text in zip(
            ("White Hat", "Black Hat", "Green Hat"), ("fact A", "risk B", "idea C"), strict=True
        )
    )
    assert reply.content == "Verdict (round 2)"
    assert [p.name for p in reply.partials] == [
        "White Hat (round 1)",
        "Black Hat (round 1)",
        "Green Hat (round 1)",
        "White Hat (round 2)",
        "Black Hat (round 2)",
        "Green Hat (round 2)",
    ]
    for model in (leader, *parts.values()):
        model.assert_complete()


def test_a_member_left_out_fails_the_run(hats, run) -> None:
    # The leader answers without broadcasting, so no member is consulted.
    leader = ScriptedModel("I will answer alone.")
    parts = members()
    agent = hats()(model=leader, part_models=parts)

    with pytest.raises(AgentRunError, match="no answer from White Hat, Black Hat, Green Hat"):
        run(agent.run("question"))
    result = run(
        hats()(model=ScriptedModel("alone"), part_models=parts).process_handoff(
            agent.create_handoff_context("q")
        )
    )
    assert not result.success and "did not hear from every member" in result.error


def test_a_team_needs_two_perspectives(agent_class, run) -> None:
    lonely = agent_class(CollaborativeAgent, perspectives=HATS[:1])(model=ScriptedModel())
    result = run(lonely.process_handoff(lonely.create_handoff_context("q")))
    assert not result.success
    assert result.error == "TypeError: GeneratedCollaborativeAgent needs at least two perspectives"
