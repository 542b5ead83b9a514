"""ROLE agents: conversational personas with their history kept in SQLite."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from agno.agent import Agent
from agno.models.message import Message

from mindrian.agents.base import (
    AgentReply,
    MindrianAgent,
    ModelRef,
    check_run,
    resolve_state_dir,
    text_of,
)
from mindrian.handoff import FrameSink, HandoffManager, HandoffType
from mindrian.handoff.tools import TOOL_NAMES, Orchestration, bound

__all__ = ["REGISTRY_ENV", "RoleAgent", "default_orchestration"]

#: Environment variable naming the registry (database file or registry.yaml) agents select from.
REGISTRY_ENV = "MINDRIAN_REGISTRY"


class RoleAgent(MindrianAgent):
    """A persona that talks with the user and remembers the conversation.

    History lives in ``<state_dir>/roles/<agent_id>.db`` (Agno ``SqliteDb``) and
    the last ``history_runs`` runs of the session are put back into the model's
    context. The state directory is the ``state_dir`` argument, else
    ``$MINDRIAN_STATE_DIR``, else a temporary directory created once per process
    (history then lasts only as long as the process: pass a directory to keep it).
    Sessions are keyed by ``session_id`` (the run's, else the constructor's, else
    ``"default"``). Unlike the other types, a role agent accepts TRANSFER: it
    then owns the conversation of the transferred session.

    When its tools include the orchestration tools of :mod:`mindrian.handoff.tools`,
    every run binds them to the agent's :class:`~mindrian.handoff.tools.Orchestration`
    (the ``orchestration`` argument, else :func:`default_orchestration`) and the
    run's session, and the session's clarity is snapshotted when the turn ends.
    """

    agent_type: ClassVar[str] = "role"
    accepted_handoffs: ClassVar[frozenset[HandoffType]] = frozenset(
        {HandoffType.DELEGATE, HandoffType.TRANSFER}
    )
    history_runs: ClassVar[int] = 10
    """How many earlier runs of the session the model sees."""

    def __init__(
        self,
        *,
        model: ModelRef | None = None,
        state_dir: str | os.PathLike[str] | None = None,
        session_id: str = "default",
        orchestration: Orchestration | None = None,
    ) -> None:
        super().__init__(model=model)
        self._orchestration = orchestration
        self.state_dir: Path = resolve_state_dir(state_dir)
        """Directory holding the history database."""
        self.session_id = session_id
        """Session used when a run names none."""

    @property
    def db_file(self) -> Path:
        """The SQLite file of this agent's conversations."""
        return self.state_dir / "roles" / f"{self.agent_id}.db"

    def _build(self) -> Agent:
        # Imported here: SQLAlchemy, under it, is a quarter of a second that only a role agent's
        # history needs, and every process importing the runtime would pay it.
        from agno.db.sqlite import SqliteDb

        self.db_file.parent.mkdir(parents=True, exist_ok=True)
        return self._new_agno_agent(
            name=self.name or self.agent_id,
            agent_id=self.agent_id,
            instructions=self.instructions,
            model=self._model,
            db=SqliteDb(db_file=str(self.db_file)),
            add_history_to_context=True,
            num_history_runs=self.history_runs,
        )

    @property
    def orchestrates(self) -> bool:
        """Whether the agent was given the orchestration tools (or an orchestration)."""
        names = {getattr(tool, "name", None) for tool in self.tools}
        return self._orchestration is not None or not names.isdisjoint(TOOL_NAMES)

    @cached_property
    def orchestration(self) -> Orchestration:
        """What the orchestration tools act on: the one given, else the default one."""
        if self._orchestration is not None:
            return self._orchestration
        return default_orchestration(self)

    @cached_property
    def stateless_agent(self) -> Agent:
        """The persona with no store of its own, for callers keeping the conversation elsewhere."""
        return self._new_agno_agent(
            name=self.name or self.agent_id,
            agent_id=self.agent_id,
            instructions=self.instructions,
            model=self._model,
        )

    async def run(self, message: str, *, session_id: str | None = None) -> AgentReply:
        session = session_id or self.session_id
        with self._orchestrated(session):
            output = await self.agent.arun(message, session_id=session)
            output = await self._settled(self.agent, output, session)
        return AgentReply(content=text_of(check_run(output, f"role {self.agent_id!r}")))

    def _orchestrated(self, session: str) -> AbstractContextManager[Any]:
        """The orchestration tools bound to ``session`` for a block (nothing without them)."""
        if not self.orchestrates:
            return nullcontext()
        # Resolved lazily: a turn that calls no orchestration tool opens no registry.
        return bound(lambda: self.orchestration, session)

    async def turn(
        self, message: str, earlier: Sequence[tuple[str, str]], *, session_id: str
    ) -> AgentReply:
        """One turn after the (role, content) messages ``earlier``, which the caller stores.

        The model sees the last ``history_runs`` exchanges as real conversation
        turns, as it would with the agent's own store; nothing is written here.
        """
        kept = list(earlier)[-2 * self.history_runs :]
        conversation = [Message(role=role, content=text) for role, text in kept]
        conversation.append(Message(role="user", content=message))
        with self._orchestrated(session_id):
            output = await self.stateless_agent.arun(conversation, session_id=session_id)
            output = await self._settled(self.stateless_agent, output, session_id)
        return AgentReply(content=text_of(check_run(output, f"role {self.agent_id!r}")))

    async def resume(self, paused: Any) -> AgentReply:
        """Go on with a served turn whose host tool calls the client answered."""
        session_id = paused.session_id or self.session_id
        with self._orchestrated(session_id):
            output = await self.stateless_agent.acontinue_run(
                run_response=paused, requirements=paused.requirements, session_id=session_id
            )
            output = await self._settled(self.stateless_agent, output, session_id)
        return AgentReply(content=text_of(check_run(output, f"role {self.agent_id!r}")))

    def history(self, session_id: str | None = None) -> tuple[tuple[str, str], ...]:
        """The stored conversation of a session as (role, content) pairs, oldest first."""
        messages: Any = self.agent.get_chat_history(session_id=session_id or self.session_id)
        return tuple((m.role, text_of(m.content)) for m in messages)


def default_orchestration(
    agent: RoleAgent,
    *,
    make: Callable[[type[MindrianAgent]], object] | None = None,
    frames: FrameSink | None = None,
) -> Orchestration:
    """The orchestration of a generated role agent, from the folder its package lives in.

    Frameworks are the packages beside it (built by ``make``, else each with its
    own default model), the delegation list and clarity thresholds come from their
    spec.yaml files, and the registry is ``$MINDRIAN_REGISTRY``, else that folder's
    ``registry.yaml``, opened read-only. Sessions are kept under the agent's state
    directory, so a conversation continued by a later process keeps its clarity.
    ``frames`` receives the handoffs' control frames. No usage is recorded: pass an
    :class:`~mindrian.handoff.tools.Orchestration` whose manager has ``usage=``.
    """
    # Imported here: a role agent without orchestration tools never needs them.
    from mindrian.graph import EmbeddedRegistry, Registry, registry_from_yaml
    from mindrian.packages import PackageFolder
    from mindrian.routing.semantic import configured_encoder

    package = type(agent).package
    home = package.folder if package is not None else Path(inspect.getfile(type(agent))).parent
    folder = home.resolve().parent
    packages = PackageFolder(folder, make)
    source = Path(os.environ.get(REGISTRY_ENV) or folder / "registry.yaml")
    registry: Registry = (
        registry_from_yaml(source)
        if source.suffix in (".yaml", ".yml")
        else EmbeddedRegistry(source, read_only=True)
    )
    registry.use_encoder(configured_encoder(os.environ))
    info = packages.infos.get(agent.agent_id)
    return Orchestration(
        agent_id=agent.agent_id,
        registry=registry,
        agents=packages,
        can_delegate_to=info.can_delegate_to if info is not None else (),
        min_clarity=packages.min_clarity(),
        manager=HandoffManager(frames=frames),
        state_dir=agent.state_dir,
    )
