"""The skill's text and the user's message reach the model as written (issue 27, item 1).

Agno formats system and user messages with ``string.Template`` unless an agent sets
``resolve_in_context=False``: ``$$`` became ``$`` and ``{task}``/``${name}`` could be
replaced by run values. Text from SKILL.md is data, so every agent and team mindrian builds
turns that off.
"""

from __future__ import annotations

from mindrian.agents import CollaborativeAgent, OperatorAgent
from mindrian.testing import ScriptedModel, Step

TEXT = "AS $$ BEGIN END $$; tiers $–$$ and $$$–$$$$; ${price} per seat for {task}, $user_id"
ANSWER = {"output": "ok", "confidence": 0.5}


def test_an_agent_is_told_dollar_signs_and_braces_as_written(agent_class, run) -> None:
    model = ScriptedModel(ANSWER)
    agent = agent_class(OperatorAgent, instructions=TEXT)(model=model)
    result = run(agent.process_handoff(agent.create_handoff_context(f"check {TEXT}")))
    assert result.success, result.error
    assert TEXT in "\n".join(model.calls[0].contents("system"))
    assert TEXT in "\n".join(model.calls[0].contents("user"))


def test_a_team_is_told_dollar_signs_and_braces_as_written(agent_class, run) -> None:
    members = {name: ScriptedModel(f"{name} says $$", id=name) for name in ("Buyer", "Seller")}
    leader = ScriptedModel(
        Step.tool_call("delegate_task_to_members", task="Consider $$"), "Go $$", id="leader"
    )
    cls = agent_class(
        CollaborativeAgent,
        perspectives=(("Buyer", f"Buyer: {TEXT}"), ("Seller", "Judge the margin.")),
        instructions=TEXT,
    )
    agent = cls(model=leader, part_models=members)
    result = run(agent.process_handoff(agent.create_handoff_context("price it")))
    assert result.success, result.error
    assert TEXT in "\n".join(leader.calls[0].contents("system"))
    assert f"Buyer: {TEXT}" in "\n".join(members["Buyer"].calls[0].contents("system"))
