"""GUIDED agents: one step at a time, pausing for the user, with back, redo, skip and resume.

Agno 3.1 workflows can pause, but only around tool confirmations and step
requirements whose resumption goes through Agno's own run store and its
``continue_run`` bookkeeping; a wizard whose every step waits for free text,
can go back, and must resume in another process is simpler and more
predictable as our own loop. So the steps are built as an Agno ``Workflow``
(``agent`` returns it: one ``Step`` with its own ``Agent`` per step) and this
module drives those step agents one by one. ``start``/``respond`` save the
progress as a JSON file after every move; ``begin``/``advance`` make the same
moves on progress the caller keeps (AgentOS sessions, see
:mod:`mindrian.agents.served`).

Where the user's answer leads is read from the agent's thought graph
(:func:`mindrian.workflow.agent_workflow`: the package's ``workflow.dot``, else
the guided drawing of its steps): after each step a human gate offers
``continue``, ``redo`` and ``back``, and the edge the engine's routing picks for
the answer is the move made. A word the gate does not offer is refused.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from agno.agent import Agent
from agno.workflow import Step, Workflow

from mindrian.agents._state import (
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
    check_run,
    resolve_state_dir,
    slug,
    text_of,
)
from mindrian.agents.errors import AgentRunError
from mindrian.handoff import HandoffContext
from mindrian.serial import from_plain, to_plain
from mindrian.workflow import (
    NodeKind,
    ThoughtGraph,
    WorkflowError,
    agent_workflow,
    next_node,
    normalise_label,
    review_gate_id,
    step_ids,
)

if TYPE_CHECKING:
    from mindrian.agents.package import AgentPackage

__all__ = ["BACK", "REDO", "SKIP", "GuidedAgent", "GuidedProgress"]

#: What the user says to return to the previous step.
BACK = "back"
#: What the user says to run the current step again.
REDO = "redo"
#: What the user says to leave the current step out and move on.
SKIP = "skip"
#: The gate outcome of any other answer (and of ``skip``).
_CONTINUE = "continue"


@dataclass(frozen=True)
class GuidedProgress:
    """Where a guided session stands; saved as JSON after every move."""

    agent_id: str
    """Agent the session belongs to."""
    session_id: str
    """The session."""
    task: str
    """What the user asked for at the start."""
    position: int
    """Index of the step waiting for the user; the number of steps once finished."""
    partials: tuple[Partial, ...]
    """Outputs of the steps up to and including ``position``."""

    def finished(self, step_count: int) -> bool:
        """Whether every step has been answered or skipped."""
        return self.position >= step_count

    def to_json(self) -> str:
        """Deterministic JSON text (sorted keys, trailing newline)."""
        return dump_json(to_plain(self))

    @classmethod
    def from_json(cls, text: str) -> GuidedProgress:
        """Read what :meth:`to_json` wrote."""
        return cls.from_data(json.loads(text))

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> GuidedProgress:
        """Build from the parsed JSON object."""
        state: GuidedProgress = from_plain(cls, data)
        return state


class GuidedAgent(MindrianAgent):
    """An interactive step-by-step agent (wizard, canvas, tutorial).

    ``start`` runs the first step and pauses; each ``respond`` takes the user's
    answer to the step shown, runs the next step and pauses again, until every
    step is done. ``back`` re-opens the previous step (its stored output is shown
    again and the steps after it are discarded), ``redo`` runs the current step
    again, ``skip`` leaves the current step out of what later steps see. The
    moves are the edges of the step's review gate in the agent's thought graph. Progress is saved to
    ``<state_dir>/guided/<agent_id>/<session_id>.json`` (state dir: argument,
    else ``$MINDRIAN_STATE_DIR``, else a per-process temp dir), so any process
    with the same state dir can continue a session. ``part_models`` keys are
    step names.
    """

    agent_type: ClassVar[str] = "guided"
    steps: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(name, instructions) of each step, in order."""
    questions: ClassVar[tuple[str, ...]] = ()
    """What the user is asked when the run pauses after each step, as the skill words it (its
    gate on the user); an empty or missing entry leaves the generic prompt alone."""

    @classmethod
    def type_attributes(cls, package: AgentPackage) -> dict[str, Any]:
        steps = package.spec.get("steps") or ()
        return {
            "steps": package.parts("steps"),
            "questions": tuple(str(step.get("question") or "") for step in steps),
        }

    def __init__(
        self,
        *,
        model: ModelRef | None = None,
        part_models: Mapping[str, ModelRef] | None = None,
        state_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(model=model, part_models=part_models)
        self.state_dir: Path = resolve_state_dir(state_dir)
        """Directory under which progress files are kept."""
        self._workflow: ThoughtGraph | None = None

    @property
    def workflow(self) -> ThoughtGraph:
        """The thought graph whose review gates decide every move (read once)."""
        if self._workflow is None:
            try:
                self._workflow = agent_workflow(type(self), "guided", self.steps)
            except WorkflowError as exc:
                raise AgentRunError(f"guided {self.agent_id!r}: {exc.message}") from None
        return self._workflow

    def _build(self) -> Workflow:
        if not self.steps:
            raise TypeError(f"{type(self).__name__} needs at least one step")
        return Workflow(
            id=self.agent_id,
            name=self.name or self.agent_id,
            description=self.description or None,
            steps=[
                Step(name=name, agent=self._step_agent(name, text)) for name, text in self.steps
            ],
            telemetry=False,
        )

    def _step_agent(self, name: str, instructions: str) -> Agent:
        return self._new_agno_agent(
            name=name,
            agent_id=f"{self.agent_id}-{slug(name)}",
            instructions="\n\n".join(filter(None, (self.instructions, instructions))),
            model=self.model_for(name),
        )

    # -- the session API ----------------------------------------------------------

    def progress_file(self, session_id: str) -> Path:
        """Where the progress of ``session_id`` is saved."""
        return session_file(self.state_dir, "guided", self.agent_id, session_id)

    def load_progress(self, session_id: str) -> GuidedProgress | None:
        """The saved progress of ``session_id``, or None if it never started."""
        return load_state(self.progress_file(session_id), self.agent_id, GuidedProgress)

    async def start(self, task: str, *, session_id: str) -> AgentReply:
        """Begin a session: run the first step and pause for the user."""
        existing = self.load_progress(session_id)
        if existing is not None and not existing.finished(len(self.steps)):
            raise AgentRunError(
                f"guided session {session_id!r} is already in progress "
                f"at step {existing.position + 1}"
            )
        progress, reply = await self.begin(task, session_id=session_id)
        self._save(progress)
        return reply

    async def respond(self, session_id: str, answer: str) -> AgentReply:
        """Take the user's answer to the step shown: text, ``back``, ``redo`` or ``skip``."""
        progress = self.load_progress(session_id)
        if progress is None:
            raise AgentRunError(f"no guided session {session_id!r} to continue")
        moved, reply = await self.advance(progress, answer)
        self._save(moved)
        return reply

    # -- moves on explicit progress (callers that keep progress elsewhere, e.g. AgentOS sessions) --

    async def begin(self, task: str, *, session_id: str) -> tuple[GuidedProgress, AgentReply]:
        """Run the first step of a new session; returns the progress to keep and the reply."""
        self._offered(0)  # a drawing that does not fit the steps fails before any model call
        fresh = GuidedProgress(self.agent_id, session_id, task, position=0, partials=())
        return await self._run_current(fresh)

    async def advance(
        self, progress: GuidedProgress, answer: str
    ) -> tuple[GuidedProgress, AgentReply]:
        """Apply an answer: text, ``back``, ``redo`` or ``skip``; returns new progress and reply."""
        if progress.finished(len(self.steps)):
            raise AgentRunError(f"guided session {progress.session_id!r} is already finished")
        command = answer.strip().lower()
        move = command if command in (BACK, REDO) else _CONTINUE
        target = self._route(progress.position, move)
        if move == BACK:
            back = self._went_back(progress, target)
            return back, self._paused_reply(back)
        if move == REDO:
            retry = replace(progress, partials=progress.partials[: progress.position])
            return await self._run_current(retry)
        current = progress.partials[progress.position]
        done = (
            replace(current, status="skipped")
            if command == SKIP
            else replace(current, user_input=answer)
        )
        position = len(self.steps) if target is None else target
        if target is not None and target > progress.position + 1:
            raise AgentRunError(
                f"guided {self.agent_id!r}: the workflow skips from step "
                f"{progress.position + 1} to step {position + 1}"
            )
        advanced = replace(
            progress,
            position=position,
            partials=(*progress.partials[: progress.position], done)[:position],
        )
        if advanced.finished(len(self.steps)):
            return advanced, self.final_reply(advanced)
        return await self._run_current(advanced)

    def _route(self, position: int, move: str) -> int | None:
        """The step index the gate after step ``position`` leads to for ``move``; None: the end."""
        graph, ids = self.workflow, step_ids(tuple(name for name, _ in self.steps))
        gate = review_gate_id(ids[position])
        if move not in self._offered(position):
            if move == BACK and position == 0:
                raise AgentRunError("cannot go back from the first step")
            raise AgentRunError(f"step {position + 1} of {self.agent_id!r} offers no {move!r}")
        target = next_node(graph, gate, move)
        if graph.node(target).kind is NodeKind.EXIT:
            return None
        if target not in ids:
            raise AgentRunError(f"the gate {gate} of {self.agent_id!r} leads to {target}, no step")
        return ids.index(target)

    def _offered(self, position: int) -> tuple[str, ...]:
        """The moves the gate after step ``position`` offers, in edge order."""
        ids = step_ids(tuple(name for name, _ in self.steps))
        edges = self.workflow.outgoing(review_gate_id(ids[position]))
        return tuple(normalise_label(e.label) for e in edges if e.label)

    async def run(self, message: str, *, session_id: str | None = None) -> AgentReply:
        """Continue the session if one is open (``message`` is the answer), else start one."""
        session = session_id or "default"
        progress = self.load_progress(session)
        if progress is not None and not progress.finished(len(self.steps)):
            return await self.respond(session, message)
        return await self.start(message, session_id=session)

    async def _answer(self, context: HandoffContext) -> AgentReply:
        session = context.session_id or context.handoff_id
        progress = self.load_progress(session)
        if progress is not None and not progress.finished(len(self.steps)):
            return await self.respond(session, context.task_description)
        return await self.start(context.to_prompt(), session_id=session)

    # -- moves ------------------------------------------------------------------------

    def _went_back(self, progress: GuidedProgress, target: int | None) -> GuidedProgress:
        position = progress.position - 1 if target is None else target
        if position >= progress.position:
            raise AgentRunError(f"guided {self.agent_id!r}: 'back' must lead to an earlier step")
        reopened = replace(progress.partials[position], user_input="", status="done")
        return replace(
            progress,
            position=position,
            partials=(*progress.partials[:position], reopened),
        )

    async def _run_current(self, progress: GuidedProgress) -> tuple[GuidedProgress, AgentReply]:
        name, _ = self.steps[progress.position]
        step_agent = self.agent.steps[progress.position].agent
        output = await step_agent.arun(self._step_prompt(progress), session_id=progress.session_id)
        text = text_of(check_run(output, f"guided {self.agent_id!r} step {name!r}"))
        shown = replace(progress, partials=(*progress.partials, Partial(name=name, output=text)))
        return shown, self._paused_reply(shown)

    def _step_prompt(self, progress: GuidedProgress) -> str:
        name, _ = self.steps[progress.position]
        earlier = [_describe(p) for p in progress.partials]
        asked = self._question(progress.position)
        sections = [
            f"# Task\n{progress.task}",
            "## Earlier steps\n\n" + "\n\n".join(earlier) if earlier else "",
            f"## Now\nStep {progress.position + 1} of {len(self.steps)}: {name}."
            # The skill's own gate ends the step: the user answers it before the next one runs.
            + (f"\nStop there and wait for the user's answer to: {asked}" if asked else ""),
        ]
        return "\n\n".join(s for s in sections if s)

    def _paused_reply(self, progress: GuidedProgress) -> AgentReply:
        name, _ = self.steps[progress.position]
        words = [
            f"'{w}'" for w in (BACK, REDO, SKIP) if w in (*self._offered(progress.position), SKIP)
        ]
        listed = words[-1] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
        question = (
            f"Step {progress.position + 1} of {len(self.steps)} ({name}): "
            f"answer to continue, or say {listed}."
        )
        asked = self._question(progress.position)
        if asked:
            question = f"{asked}\n{question}"
        return AgentReply(
            content=progress.partials[progress.position].output,
            partials=progress.partials,
            awaiting_input=True,
            prompt_for_user=question,
        )

    def _question(self, position: int) -> str:
        """The skill's question for the pause after step ``position``, or ""."""
        return self.questions[position] if position < len(self.questions) else ""

    def current_reply(self, progress: GuidedProgress) -> AgentReply:
        """What the session shows now: the waiting step and its question, or the final reply."""
        if progress.finished(len(self.steps)):
            return self.final_reply(progress)
        return self._paused_reply(progress)

    def final_reply(self, progress: GuidedProgress) -> AgentReply:
        """The reply of a finished session: the last answered step, with every step as partials."""
        done = [p for p in progress.partials if p.status == "done"]
        content = done[-1].output if done else "Every step was skipped."
        return AgentReply(content=content, partials=progress.partials)

    def _save(self, progress: GuidedProgress) -> None:
        write_atomic(self.progress_file(progress.session_id), progress.to_json())


def _describe(partial: Partial) -> str:
    if partial.status == "skipped":
        return f"### {partial.name}\n(skipped by the user)"
    answer = f"\n\n**User:** {partial.user_input}" if partial.user_input else ""
    return f"### {partial.name}\n{partial.output}{answer}"
