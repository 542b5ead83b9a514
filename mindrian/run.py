"""``mindrian run``: one generated agent, loaded by id, run from a terminal.

Every type goes through ``process_handoff``, so what the command reports is
the agent's :class:`~mindrian.handoff.HandoffResult` (its output, or the whole
result as JSON) and a failed result is exit status 1. State lives under the
project's ``.mindrian/state``: a role agent keeps its history per session, a
guided session is resumed by ``--session`` in a later process, a pipeline keeps
its per-phase checkpoints. A guided agent steps interactively: after each step
the question goes to stderr and the answer is read from stdin, until the last
step or the end of input (the session then waits to be resumed).

A role agent with the orchestration tools (Larry) delegates to the packages
beside it, each built with the same model choice (a script's per-agent answers),
and keeps its clarity per session under the state directory. With ``frames``,
control frames go to stdout between the output lines (seed 002): READY for the
agent when it starts, then HANDOFF/ERROR/READY for every handoff it makes, and
ERROR (``RUN_FAILED``) when its own result failed.

The host tools a package grants (Bash, Read, Write…) work in the request's
workspace; a call no rule of the skill allows is asked about on the terminal
(y/N), approved by ``--approve PATTERN`` or ``--yes``, and denied when there is
no terminal. Each call is shown on stderr as it ends; ``--json`` lists them all
under ``tool_calls``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from mindrian.agent_types import record_of
from mindrian.agents import (
    STATE_DIR_ENV,
    GuidedAgent,
    MindrianAgent,
    Partial,
    PipelineAgent,
    RoleAgent,
)
from mindrian.agents.base import render_output
from mindrian.agents.guided import GuidedProgress
from mindrian.agents.role import default_orchestration
from mindrian.frames import emit
from mindrian.handoff import FRAME_NAMESPACE, HandoffResult, ProblemClarity
from mindrian.host import (
    Approver,
    Approving,
    AskOnTerminal,
    Denying,
    HostSession,
    ToolLog,
    ToolRecord,
    parse_rules,
)
from mindrian.model_choice import ModelChoice
from mindrian.packages import agent_class, registered_packages
from mindrian.project import ProjectPaths

__all__ = ["RunRequest", "handoff", "host_session", "load_agent", "prepared_agent", "run_agent"]

#: Exit status of a run whose result failed.
EXIT_FAILED = 1


@dataclass(frozen=True)
class RunRequest:
    """What ``mindrian run`` was asked for."""

    project: ProjectPaths
    """The project whose registry names the agent."""
    agent_id: str
    """The agent to run."""
    message: str | None
    """The task, or a guided session's next answer; None to resume a guided session."""
    model: ModelChoice
    """The model (None reference: the agent's own)."""
    session_id: str | None = None
    """Session to continue; guided sessions get a fresh one when None."""
    json_output: bool = False
    """Print each HandoffResult as JSON instead of its output."""
    frames: bool = False
    """Print control frames (READY, HANDOFF, ERROR) on stdout."""
    clarity: float = 1.0
    """What, who and success clarity the handoff states (agents may refuse below their minimum).

    A person asking an agent directly has judged the problem clear enough: 1.0 by default.
    """
    workspace: Path | None = None
    """Where host tools work; None: the current folder."""
    approve: tuple[str, ...] = ()
    """Permission rules the user approves for this run (``--approve``), as written."""
    approve_all: bool = False
    """Approve every host tool call (``--yes``)."""


def host_session(request: RunRequest, stdin: TextIO, stderr: TextIO) -> HostSession:
    """The host tools' session of a run: its workspace, who approves, a log shown on stderr.

    Raises :class:`~mindrian.host.RuleError` for an ``--approve`` value that is no rule.
    """
    approver: Approver
    if request.approve_all:
        approver = Approving()
    elif stdin.isatty():
        approver = AskOnTerminal(stdin, stderr)
    else:
        approver = Denying()
    return HostSession(
        workspace=(request.workspace or Path.cwd()).resolve(),
        approver=approver,
        approved=parse_rules(request.approve),
        log=ToolLog(functools.partial(_show_call, stderr)),
    )


def _show_call(stderr: TextIO, record: ToolRecord) -> None:
    subject = next(iter(record.arguments.values()), "") if record.arguments else ""
    first = record.output.splitlines()[0] if record.output.strip() else ""
    shown = f"{record.tool}({str(subject)[:120]}): {record.outcome}"
    stderr.write(shown + (f": {first[:160]}" if record.outcome != "ran" else "") + "\n")
    stderr.flush()


def load_agent(
    project: ProjectPaths,
    agent_id: str,
    model: ModelChoice,
    host: HostSession | None = None,
) -> MindrianAgent:
    """The registered agent ``agent_id``; state in ``$MINDRIAN_STATE_DIR``, else the project's.

    With ``host``, it (and every agent it delegates to) gets the host tools its package grants.
    """
    packages = {p.agent_id: p for p in registered_packages(project)}
    if agent_id not in packages:
        from mindrian.packages import PackageError

        known = ", ".join(sorted(packages)) or "none"
        raise PackageError(f"no registered agent {agent_id!r} (registered: {known})")
    return _made(project, model, host)(agent_class(packages[agent_id]))  # type: ignore[return-value]


def _made(
    project: ProjectPaths, model: ModelChoice, host: HostSession | None = None
) -> Callable[[type[MindrianAgent]], object]:
    """Builds an agent of a class with the run's model choice, the project's state and the
    run's host tools."""

    def make(cls: type[MindrianAgent]) -> object:
        chosen = model.run_model_for(cls.agent_id, cls.model)
        options: dict[str, object] = {"model": chosen} if chosen is not None else {}
        if record_of(cls.agent_type).keeps_state:
            options["state_dir"] = os.environ.get(STATE_DIR_ENV) or project.state_dir
        agent = cls(**options)  # type: ignore[arg-type]
        if host is not None:
            agent.use_host(host)
        return agent

    return make


def run_agent(request: RunRequest, *, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Run the agent as the request says; returns the exit status."""
    host = host_session(request, stdin, stderr)
    try:
        return _run(request, host, stdin, stdout, stderr)
    finally:
        if request.model.recording is not None:
            request.model.recording.keep_tool_calls([r.to_dict() for r in host.log.records])


def prepared_agent(
    project: ProjectPaths,
    agent_id: str,
    model: ModelChoice,
    host: HostSession | None = None,
    frames: TextIO | None = None,
) -> MindrianAgent:
    """:func:`load_agent`, with an orchestrating role agent's delegates built the same way."""
    agent = load_agent(project, agent_id, model, host)
    if frames is not None:
        _frame(frames, "READY", {"stage": agent.agent_id})
    if isinstance(agent, RoleAgent) and agent.orchestrates:
        # Delegated agents take the run's model (a script's answers for their id).
        agent.orchestration = default_orchestration(
            agent, make=_made(project, model, host), frames=frames
        )
    return agent


def _run(
    request: RunRequest, host: HostSession, stdin: TextIO, stdout: TextIO, stderr: TextIO
) -> int:
    frames = stdout if request.frames else None
    agent = prepared_agent(request.project, request.agent_id, request.model, host, frames)
    if isinstance(agent, PipelineAgent):
        agent.phase_listener = _phase_printer(len(agent.phases), stderr)
    session_id = request.session_id
    if isinstance(agent, GuidedAgent):
        session_id = session_id or uuid.uuid4().hex
        stderr.write(f"session {session_id}\n")
        return asyncio.run(_guided(agent, request, session_id, stdin, stdout, stderr, host.log))
    if request.message is None:
        stderr.write(f"error: {request.agent_id}: {agent.agent_type} agents need a MESSAGE\n")
        return 2
    result = asyncio.run(handoff(agent, request.message, session_id, request.clarity))
    if frames is not None and not result.success:
        _frame(frames, "ERROR", {"code": "RUN_FAILED", "message": result.error or "failed"})
    return _report(result, request, stdout, stderr, host.log)


def _frame(stream: TextIO, type_: str, payload: dict[str, object]) -> None:
    stream.write(emit(FRAME_NAMESPACE, type_, payload) + "\n")
    stream.flush()


async def handoff(
    agent: MindrianAgent, message: str, session_id: str | None, clarity: float = 1.0
) -> HandoffResult:
    """The agent's result for ``message`` from the user, stated at ``clarity``."""
    stated = ProblemClarity(
        what=message, what_clarity=clarity, who_clarity=clarity, success_clarity=clarity
    )
    context = agent.create_handoff_context(
        message, stated, from_agent="user", session_id=session_id
    )
    return await agent.process_handoff(context)


async def _guided(
    agent: GuidedAgent,
    request: RunRequest,
    session_id: str,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    log: ToolLog,
) -> int:
    message = request.message
    if message is None:
        progress = agent.load_progress(session_id)
        if progress is None or progress.finished(len(agent.steps)):
            stderr.write(
                f"error: {request.agent_id}: no open session {session_id!r}; "
                "give a MESSAGE to start one\n"
            )
            return 2
        stdout.write(progress.partials[progress.position].output + "\n")
        message = _ask(agent, progress, stdin, stderr)
    while message is not None:
        result = await handoff(agent, message, session_id, request.clarity)
        if request.json_output or not result.success:
            status = _report(result, request, stdout, stderr, log)
        else:
            status = _show_step(agent, session_id, stdout)
        if status or not result.needs_human_input:
            return status
        stderr.write(result.human_input_reason + "\n")
        message = _read_answer(stdin)
    stderr.write(f"paused; resume with: mindrian run {request.agent_id} --session {session_id}\n")
    return 0


def _show_step(agent: GuidedAgent, session_id: str, stdout: TextIO) -> int:
    """On a terminal only the step just run is shown; once finished, every step."""
    progress = agent.load_progress(session_id)
    assert progress is not None  # the handoff that just succeeded saved it
    reply = agent.current_reply(progress)
    shown = reply.content if reply.awaiting_input else render_output(reply)
    stdout.write(shown.rstrip("\n") + "\n")
    return 0


def _ask(agent: GuidedAgent, progress: GuidedProgress, stdin: TextIO, stderr: TextIO) -> str | None:
    stderr.write(agent.current_reply(progress).prompt_for_user + "\n")
    return _read_answer(stdin)


def _read_answer(stdin: TextIO) -> str | None:
    line = stdin.readline()
    return line.rstrip("\n") if line else None


def _report(
    result: HandoffResult, request: RunRequest, stdout: TextIO, stderr: TextIO, log: ToolLog
) -> int:
    if request.json_output:
        shown: dict[str, Any] = result.to_dict()
        shown["tool_calls"] = [record.to_dict() for record in log.records]
        stdout.write(json.dumps(shown, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    elif result.success:
        stdout.write(result.output.rstrip("\n") + "\n")
    if not result.success:
        stderr.write(f"error: {request.agent_id}: {result.error}\n")
        return EXIT_FAILED
    return 0


def _phase_printer(count: int, stderr: TextIO) -> Callable[[int, Partial], None]:
    def tell(index: int, partial: Partial) -> None:
        stderr.write(f"[{index + 1}/{count}] {partial.name}: done\n")
        stderr.flush()

    return tell
