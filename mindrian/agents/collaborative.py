"""COLLABORATIVE agents: an Agno ``Team`` that asks every perspective, then synthesises."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from agno.agent import Agent
from agno.team import Team
from agno.team.mode import TeamMode

from mindrian.agents.base import (
    AgentReply,
    MindrianAgent,
    Partial,
    check_run,
    slug,
    text_of,
)
from mindrian.agents.errors import AgentRunError
from mindrian.agents.operator import HandoffOutput, SchemaMismatchError, schema_mismatch

if TYPE_CHECKING:
    from mindrian.agents.package import AgentPackage

__all__ = ["CollaborativeAgent"]

#: Added to the leader's instructions: how to combine the members' answers.
SYNTHESIS_INSTRUCTIONS = (
    "Put the task to all members at once, then write one synthesis of their answers: "
    "where they agree, where they conflict and which view you take, and what to do next."
)


class CollaborativeAgent(MindrianAgent):
    """Several perspectives consulted in parallel, then combined by a leader.

    Every member is told the skill's instructions and then its own; the
    leader is told the skill's instructions and how to synthesise. When
    ``synthesizer`` names a perspective, that perspective leads: it is not asked
    for a position of its own but receives the others' and writes the synthesis,
    with its own instructions added to the leader's (``part_models`` key: its name).
    With ``output_schema`` set, the synthesis is that structured answer (the
    declared returns such as ``key_findings``), checked like an operator's.

    The Agno team runs in ``TeamMode.broadcast``: the leader's single delegation
    call reaches every member. ``determine_input_for_members`` is off, so each
    member receives exactly the text we send, not a rewrite by the leader; that
    is what lets debate rounds show every member the positions of the others.
    With ``debate_rounds`` > 1 the team is run again per round, the message then
    carrying every member's position from the round before. The leader's answer
    in the last round is the result. A run in which some member did not answer
    fails: a synthesis of only part of the perspectives is not what was asked.

    ``part_models`` keys are perspective names; the leader uses ``model``.
    """

    agent_type: ClassVar[str] = "collaborative"
    perspectives: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(name, instructions) of each member."""
    debate_rounds: ClassVar[int] = 1
    """Rounds of the debate; 1 is a plain broadcast."""
    synthesizer: ClassVar[str] = ""
    """Name of the perspective that writes the synthesis; empty: the leader alone does."""

    @classmethod
    def type_attributes(cls, package: AgentPackage) -> dict[str, Any]:
        return {
            "perspectives": package.parts("sub_agents"),
            "debate_rounds": int(package.metadata.get("debate_rounds", 1)),
            "synthesizer": str(package.metadata.get("synthesizer") or ""),
            "output_schema": package.output_model(),
        }

    output_schema: ClassVar[type[HandoffOutput] | None] = None
    """Structured form of the synthesis; None keeps it as text."""

    @property
    def members(self) -> tuple[tuple[str, str], ...]:
        """(name, instructions) of the perspectives asked for a position: all but the
        synthesiser."""
        return tuple((n, text) for n, text in self.perspectives if n != self.synthesizer)

    def leader_instructions(self) -> str:
        """The skill's instructions, the synthesiser's own, and how to combine the answers."""
        own = dict(self.perspectives).get(self.synthesizer, "")
        return "\n\n".join(filter(None, (self.instructions, own, SYNTHESIS_INSTRUCTIONS)))

    def _build(self) -> Team:
        if self.synthesizer and self.synthesizer not in dict(self.perspectives):
            raise TypeError(f"synthesizer {self.synthesizer!r} is not one of the perspectives")
        if len(self.members) < 2:
            raise TypeError(f"{type(self).__name__} needs at least two perspectives")
        # A member's description would be listed to the leader once per member, so the skill's
        # description opens each member's instructions instead.
        members: list[Agent | Team] = [
            self._new_agno_agent(
                name=name,
                agent_id=slug(name),
                instructions="\n\n".join(
                    filter(None, (self.description, self.instructions, instructions))
                ),
                model=self.model_for(name),
                role=f"The {name} perspective",
                description=None,
            )
            for name, instructions in self.members
        ]
        leader = self.model_for(self.synthesizer) if self.synthesizer else self._model
        return Team(
            id=self.agent_id,
            name=self.name or self.agent_id,
            model=self.built_model(leader),
            members=members,
            mode=TeamMode.broadcast,
            determine_input_for_members=False,
            instructions=self.leader_instructions(),
            description=self.description or None,
            output_schema=self.output_schema,
            telemetry=False,
            resolve_in_context=False,  # the skill's text is data, never a template (see base)
        )

    async def run(self, message: str, *, session_id: str | None = None) -> AgentReply:
        if self.debate_rounds < 1:
            raise AgentRunError(f"debate_rounds must be at least 1, got {self.debate_rounds}")
        positions: tuple[Partial, ...] = ()
        partials: list[Partial] = []
        synthesis: Any = None
        for number in range(1, self.debate_rounds + 1):
            prompt = message if number == 1 else _debate_prompt(message, positions, number)
            output = await self.agent.arun(prompt, session_id=session_id)
            synthesis = check_run(output, f"team {self.agent_id!r}")
            positions = self._positions(output, number)
            partials.extend(positions)
        if self.output_schema is None:
            return AgentReply(content=text_of(synthesis), partials=tuple(partials))
        # Agno hands back the raw text, with only a logged warning, when parsing fails.
        if not isinstance(synthesis, self.output_schema):
            raise SchemaMismatchError(
                f"synthesis did not match schema: {schema_mismatch(synthesis, self.output_schema)}"
            )
        return AgentReply(
            content=synthesis.output,
            structured=synthesis.model_dump(mode="json"),
            partials=tuple(partials),
        )

    def _positions(self, output: Any, number: int) -> tuple[Partial, ...]:
        answers = {
            getattr(r, "agent_id", None): text_of(getattr(r, "content", None))
            for r in getattr(output, "member_responses", ())
        }
        names = [name for name, _ in self.members]
        missing = [name for name in names if not answers.get(slug(name))]
        if missing:
            raise AgentRunError(
                f"team {self.agent_id!r} did not hear from every member in round {number}: "
                f"no answer from {', '.join(missing)}"
            )
        return tuple(
            Partial(
                name=_label(name, number, self.debate_rounds),
                output=answers[slug(name)],
            )
            for name in names
        )


def _label(name: str, number: int, rounds: int) -> str:
    return name if rounds == 1 else f"{name} (round {number})"


def _debate_prompt(message: str, positions: tuple[Partial, ...], number: int) -> str:
    stated = "\n\n".join(f"### {p.name}\n{p.output}" for p in positions)
    return (
        f"{message}\n\n## Debate round {number}\n"
        "These are the positions from the previous round. Answer the others: "
        "say where you agree, where you disagree and why, and whether you change your position.\n\n"
        f"{stated}"
    )
