"""PIPELINE agents: an Agno ``Workflow`` with one agent step per phase."""

from __future__ import annotations

from typing import Any, ClassVar

from agno.workflow import Step, Workflow

from mindrian.agents.base import (
    AgentReply,
    AgentRunError,
    MindrianAgent,
    Partial,
    check_run,
    slug,
    text_of,
)

__all__ = ["PipelineAgent"]


class PipelineAgent(MindrianAgent):
    """Phases run in order, each building on the one before.

    Agno gives every step after the first the previous step's output as its
    message; the original task travels alongside as workflow dependencies added
    to each step's context, so no phase loses sight of what was asked. Every
    phase's output is kept as a :class:`Partial`; the last phase's output is the
    answer. ``part_models`` keys are phase names.
    """

    agent_type: ClassVar[str] = "pipeline"
    phases: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(name, instructions) of each phase, in order."""

    def _build(self) -> Workflow:
        if not self.phases:
            raise TypeError(f"{type(self).__name__} needs at least one phase")
        steps = [
            Step(
                name=name,
                agent=self._new_agno_agent(
                    name=name,
                    agent_id=f"{self.agent_id}-{slug(name)}",
                    instructions="\n\n".join(
                        filter(None, (self.instructions, instructions))
                    ),
                    model=self.model_for(name),
                ),
            )
            for name, instructions in self.phases
        ]
        return Workflow(
            id=self.agent_id,
            name=self.name or self.agent_id,
            description=self.description or None,
            steps=steps,
            telemetry=False,
        )

    async def run(self, message: str, *, session_id: str | None = None) -> AgentReply:
        output = await self.agent.arun(
            message,
            session_id=session_id,
            dependencies={"task": message},
            add_dependencies_to_context=True,
        )
        check_run(output, f"pipeline {self.agent_id!r}")
        partials = self._partials(getattr(output, "step_results", None) or ())
        return AgentReply(content=partials[-1].output, partials=partials)

    def _partials(self, step_results: Any) -> tuple[Partial, ...]:
        by_name = {r.step_name: r for r in step_results}
        partials = []
        for name, _ in self.phases:
            result = by_name.get(name)
            problem = _phase_problem(result)
            if problem:
                raise AgentRunError(
                    f"pipeline {self.agent_id!r}: phase {name!r} {problem}"
                )
            partials.append(Partial(name=name, output=text_of(result.content)))
        return tuple(partials)


def _phase_problem(result: Any) -> str:
    # Agno marks the workflow completed even when a step failed, so each step is checked.
    if result is None:
        return "did not run"
    if not result.success:
        return f"failed: {result.error or text_of(result.content)}"
    if not text_of(result.content):
        return "produced no output"
    return ""
