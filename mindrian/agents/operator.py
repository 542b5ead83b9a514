"""OPERATOR agents: one Agno ``Agent`` whose answer must match the HandoffResult fields."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from agno.agent import Agent
from pydantic import BaseModel, ValidationError

from mindrian.agents.base import AgentReply, MindrianAgent, check_run
from mindrian.agents.errors import AgentRunError
from mindrian.agents.output import HandoffOutput

if TYPE_CHECKING:
    from mindrian.agents.package import AgentPackage

__all__ = ["HandoffOutput", "OperatorAgent", "SchemaMismatchError"]


class SchemaMismatchError(AgentRunError):
    """The model's answer could not be parsed into the output schema."""


def schema_mismatch(content: Any, schema: type[BaseModel]) -> str:
    """Why ``content`` is not a ``schema`` object, in one line."""
    if not isinstance(content, str):
        return f"got {type(content).__name__} instead of {schema.__name__}"
    try:
        schema.model_validate_json(content)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in exc.errors()
        )
        return f"{schema.__name__}: {problems}"
    return f"{schema.__name__}: Agno returned the answer unparsed"


class OperatorAgent(MindrianAgent):
    """A single-purpose framework agent with structured output.

    ``output_schema`` may be replaced by a subclass of :class:`HandoffOutput`
    adding methodology-specific fields; those appear in ``AgentReply.structured``
    and are left out of the HandoffResult, which has no place for them.
    """

    agent_type: ClassVar[str] = "operator"
    output_schema: ClassVar[type[HandoffOutput]] = HandoffOutput
    """The schema the model's answer is parsed into."""

    @classmethod
    def type_attributes(cls, package: AgentPackage) -> dict[str, Any]:
        return {"output_schema": package.output_model()}

    def _build(self) -> Agent:
        return self._new_agno_agent(
            name=self.name or self.agent_id,
            agent_id=self.agent_id,
            instructions=self.instructions,
            model=self._model,
            output_schema=self.output_schema,
        )

    async def run(self, message: str, *, session_id: str | None = None) -> AgentReply:
        output = await self.agent.arun(message, session_id=session_id)
        return self._reply(await self._settled(self.agent, output, session_id))

    async def resume(self, paused: Any) -> AgentReply:
        """Go on with a run whose host tool calls the client answered (serve)."""
        output = await self.agent.acontinue_run(
            run_response=paused, requirements=paused.requirements, session_id=paused.session_id
        )
        return self._reply(await self._settled(self.agent, output, paused.session_id))

    def _reply(self, output: Any) -> AgentReply:
        content = check_run(output, f"operator {self.agent_id!r}")
        # Agno hands back the raw text, with only a logged warning, when parsing fails.
        if not isinstance(content, self.output_schema):
            raise SchemaMismatchError(
                f"output did not match schema: {schema_mismatch(content, self.output_schema)}"
            )
        return AgentReply(content=content.output, structured=content.model_dump(mode="json"))
