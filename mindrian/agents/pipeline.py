"""PIPELINE agents: an Agno ``Workflow`` with one agent step per phase, checkpointed per phase.

``agent`` is the Agno ``Workflow`` (one ``Step`` with its own ``Agent`` per
phase), and ``run`` drives those step agents in order, handing each exactly
what the workflow would: the previous phase's output as the message and the
task as a dependency in its context. Driving them here rather than through
``Workflow.arun`` has two reasons: Agno 3.1 keeps going after a failed agent
step and feeds the error text to the next phase as if it were an answer, and
its non-streaming loop has no point between steps where a checkpoint could be
saved the moment a phase ends.

The order comes from the agent's thought graph
(:func:`mindrian.workflow.agent_workflow`: the package's ``workflow.dot``, else
the linear drawing of its phases), run by :func:`mindrian.workflow.arun`, so a
drawing with goal gates or loops is followed as drawn.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from agno.workflow import Step, Workflow
from agno.workflow.workflow import WorkflowStep

from mindrian.agents._state import (
    configured_state_dir,
    dump_json,
    load_state,
    session_file,
    write_atomic,
)
from mindrian.agents.base import (
    AgentReply,
    MindrianAgent,
    ModelRef,
    Partial,
    failed_status,
    slug,
    text_of,
)
from mindrian.agents.errors import AgentRunError
from mindrian.serial import from_plain, to_plain
from mindrian.workflow import (
    StepContext,
    ThoughtGraph,
    WorkflowError,
    agent_workflow,
    arun,
    step_ids,
)

if TYPE_CHECKING:
    from mindrian.agents.package import AgentPackage

__all__ = ["PipelineAgent", "PipelineCheckpoint"]


@dataclass(frozen=True)
class PipelineCheckpoint:
    """The phases of one pipeline session finished so far; saved after each phase."""

    agent_id: str
    """Agent the session belongs to."""
    session_id: str
    """The session."""
    task: str
    """What the pipeline was asked."""
    digest: str
    """SHA-256 of the task, the agent's instructions and its phase list; a run resumes only on a
    match."""
    partials: tuple[Partial, ...]
    """Outputs of the finished phases, in phase order."""

    def finished(self, phase_count: int) -> bool:
        """Whether every phase has its output."""
        return len(self.partials) >= phase_count

    def to_json(self) -> str:
        """Deterministic JSON text (sorted keys, trailing newline)."""
        return dump_json(to_plain(self))

    @classmethod
    def from_json(cls, text: str) -> PipelineCheckpoint:
        """Read what :meth:`to_json` wrote."""
        return cls.from_data(json.loads(text))

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> PipelineCheckpoint:
        """Build from the parsed JSON object."""
        state: PipelineCheckpoint = from_plain(cls, data)
        return state


class PipelineAgent(MindrianAgent):
    """Phases run in order, each building on the one before.

    Every phase after the first gets the previous phase's output as its
    message; the original task travels alongside as a dependency added to each
    phase's context, so no phase loses sight of what was asked. Every phase's
    output is kept as a :class:`Partial`; the last phase's output is the answer.
    A failed or empty phase stops the run with :class:`AgentRunError`.
    ``part_models`` keys are phase names.

    Checkpoints: when a state directory is configured (``state_dir`` argument,
    else ``$MINDRIAN_STATE_DIR``) and a run names a ``session_id``, each
    finished phase is saved to ``<state_dir>/pipeline/<agent_id>/<session_id>.json``
    before the next starts. A later run of the same session with the same
    digest (task, instructions and phase list) takes the saved phases as done,
    without calling their models, and continues at the first missing one. A
    finished run's file is kept: running the session again returns the saved
    answer and ``load_checkpoint`` re-reads it; a new task or a changed
    pipeline in that session starts from the first phase and overwrites it.
    Without a state directory or a session id nothing is written.
    """

    agent_type: ClassVar[str] = "pipeline"
    phases: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(name, instructions) of each phase, in order."""

    @classmethod
    def type_attributes(cls, package: AgentPackage) -> dict[str, Any]:
        return {"phases": package.parts("steps")}

    def __init__(
        self,
        *,
        model: ModelRef | None = None,
        part_models: Mapping[str, ModelRef] | None = None,
        state_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(model=model, part_models=part_models)
        self.state_dir: Path | None = configured_state_dir(state_dir)
        """Directory under which checkpoints are kept; None keeps none."""
        self.phase_listener: Callable[[int, Partial], None] | None = None
        """Told (phase index, output) as each phase ends or is resumed, e.g. to show progress."""
        self._workflow: ThoughtGraph | None = None

    @property
    def workflow(self) -> ThoughtGraph:
        """The thought graph that orders the phases (read once)."""
        if self._workflow is None:
            try:
                self._workflow = agent_workflow(type(self), "pipeline", self.phases)
            except WorkflowError as exc:
                raise AgentRunError(f"pipeline {self.agent_id!r}: {exc.message}") from None
        return self._workflow

    def _build(self) -> Workflow:
        if not self.phases:
            raise TypeError(f"{type(self).__name__} needs at least one phase")
        steps: list[WorkflowStep] = [
            Step(
                name=name,
                agent=self._new_agno_agent(
                    name=name,
                    agent_id=f"{self.agent_id}-{slug(name)}",
                    instructions="\n\n".join(filter(None, (self.instructions, instructions))),
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
        saved_as = session_id if self.state_dir is not None else None
        resumed = self._resumed(message, saved_as) if saved_as is not None else ()
        index_of = {
            node_id: i for i, node_id in enumerate(step_ids(tuple(n for n, _ in self.phases)))
        }
        partials: list[Partial] = []

        async def phase(step: StepContext) -> None:
            index = index_of[step.node.id]
            done = tuple(partials)
            saved = resumed[len(done)] if len(done) < len(resumed) else None
            if saved is not None and saved.name == self.phases[index][0]:
                partials.append(saved)  # finished in an earlier run: no model call
                self._tell(index, saved)
                return
            partials.append(await self._run_phase(index, message, done, session_id))
            if saved_as is not None:
                self._save(message, saved_as, tuple(partials))
            self._tell(index, partials[-1])

        state = await arun(self.workflow, dict.fromkeys(index_of, phase))
        if state.status != "done" or not partials:
            reason = state.failure_reason or f"the workflow ended {state.status}"
            raise AgentRunError(f"pipeline {self.agent_id!r}: {reason}")
        return AgentReply(content=partials[-1].output, partials=tuple(partials))

    def _tell(self, index: int, partial: Partial) -> None:
        if self.phase_listener is not None:
            self.phase_listener(index, partial)

    # -- checkpoints ----------------------------------------------------------------

    def checkpoint_file(self, session_id: str) -> Path:
        """Where the checkpoint of ``session_id`` is saved (needs a state directory)."""
        if self.state_dir is None:
            raise AgentRunError(
                f"pipeline {self.agent_id!r} has no state directory for checkpoints"
            )
        return session_file(self.state_dir, "pipeline", self.agent_id, session_id)

    def load_checkpoint(self, session_id: str) -> PipelineCheckpoint | None:
        """The saved checkpoint of ``session_id``, or None if there is none."""
        if self.state_dir is None:
            return None
        return load_state(self.checkpoint_file(session_id), self.agent_id, PipelineCheckpoint)

    def run_digest(self, task: str) -> str:
        """What a checkpoint must match to be resumed: the task and everything phases are told."""
        basis = {
            "task": task,
            "instructions": self.instructions,
            "phases": [[name, text] for name, text in self.phases],
        }
        return hashlib.sha256(dump_json(basis).encode("utf-8")).hexdigest()

    def _resumed(self, task: str, session_id: str) -> tuple[Partial, ...]:
        saved = self.load_checkpoint(session_id)
        if saved is None or saved.digest != self.run_digest(task):
            return ()
        names = tuple(name for name, _ in self.phases)
        if tuple(p.name for p in saved.partials) != names[: len(saved.partials)]:
            return ()
        return saved.partials

    def _save(self, task: str, session_id: str, partials: tuple[Partial, ...]) -> None:
        checkpoint = PipelineCheckpoint(
            agent_id=self.agent_id,
            session_id=session_id,
            task=task,
            digest=self.run_digest(task),
            partials=partials,
        )
        write_atomic(self.checkpoint_file(session_id), checkpoint.to_json())

    # -- phases ---------------------------------------------------------------------

    async def _run_phase(
        self,
        index: int,
        task: str,
        done: tuple[Partial, ...],
        session_id: str | None,
    ) -> Partial:
        name, _ = self.phases[index]
        output = await self.agent.steps[index].agent.arun(
            done[-1].output if done else task,
            session_id=session_id,
            dependencies={"task": task},
            add_dependencies_to_context=True,
        )
        problem = _phase_problem(output)
        if problem:
            raise AgentRunError(f"pipeline {self.agent_id!r}: phase {name!r} {problem}")
        return Partial(name=name, output=text_of(output.content))


def _phase_problem(output: Any) -> str:
    if failed_status(getattr(output, "status", None)):
        return f"failed: {text_of(output.content)}"
    if not text_of(output.content):
        return "produced no output"
    return ""
