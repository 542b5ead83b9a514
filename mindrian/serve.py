"""``mindrian serve``: an AgentOS app with every registered agent.

Each agent is served through :class:`~mindrian.agents.served.ServedAgent`, so
what runs behind AgentOS's routes keeps the wrapper's guarantees (see that
module). Sessions, runs and guided progress live in one Agno database:
SQLite under ``.mindrian/`` by default, or PostgreSQL when a
``postgresql+psycopg://`` URL is given (``--db`` or ``MINDRIAN_DB_URL``), so
several ``serve`` processes behind a load balancer share every session.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from mindrian.agents.base import STATE_DIR_ENV
from mindrian.agents.served import ServedAgent
from mindrian.model_choice import ModelChoice
from mindrian.packages import agent_class, registered_packages
from mindrian.project import ProjectPaths

__all__ = [
    "DB_URL_ENV",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "ServeConfig",
    "build_app",
    "open_database",
    "serve",
]

#: Environment variable with the session database URL.
DB_URL_ENV = "MINDRIAN_DB_URL"
#: Loopback only unless told otherwise: the app has no authentication.
DEFAULT_HOST = "127.0.0.1"
#: AgentOS's usual port.
DEFAULT_PORT = 7777
#: Id of the database in AgentOS; the same on every replica, so they name one store.
_DB_ID = "mindrian-sessions"


@dataclass(frozen=True)
class ServeConfig:
    """What ``mindrian serve`` was asked for."""

    project: ProjectPaths
    """The project whose registered agents are served."""
    model: ModelChoice
    """The model of every agent (None reference: each agent's own)."""
    db_url: str | None = None
    """Session database URL; None: ``$MINDRIAN_DB_URL``, else SQLite under ``.mindrian/``."""
    host: str = DEFAULT_HOST
    """Interface to listen on."""
    port: int = DEFAULT_PORT
    """Port to listen on."""


def open_database(url: str | None, project: ProjectPaths) -> Any:
    """The sessions database: PostgreSQL or SQLite by URL, else SQLite under ``.mindrian/``."""
    chosen = url or os.environ.get(DB_URL_ENV) or None
    if chosen is None:
        from agno.db.sqlite import SqliteDb

        project.sessions_db.parent.mkdir(parents=True, exist_ok=True)
        return SqliteDb(db_file=str(project.sessions_db), id=_DB_ID)
    scheme = chosen.partition(":")[0]
    if scheme.startswith("postgresql"):
        from agno.db.postgres import PostgresDb

        return PostgresDb(db_url=chosen, id=_DB_ID)
    if scheme.startswith("sqlite"):
        from agno.db.sqlite import SqliteDb

        return SqliteDb(db_url=chosen, id=_DB_ID)
    raise ValueError(
        f"unsupported database URL scheme {scheme!r}: use postgresql+psycopg://... or sqlite:///..."
    )


def served_agents(config: ServeConfig, db: Any) -> list[ServedAgent]:
    """Every registered agent, built with the chosen model and wrapped for AgentOS."""
    served = []
    for package in registered_packages(config.project):
        cls = agent_class(package)
        model = config.model.model_for(package.agent_id, cls.model)
        agent = cls() if model is None else cls(model=model)
        served.append(ServedAgent.of(agent, db=db))
    return served


def build_app(config: ServeConfig) -> Any:
    """The FastAPI app of an AgentOS serving every registered agent."""
    from agno.agent import Agent, AgentFactory, RemoteAgent
    from agno.agent.protocol import AgentProtocol
    from agno.os import AgentOS

    agents: list[Agent | RemoteAgent | AgentProtocol | AgentFactory] = []
    # Wrappers that keep files (pipeline checkpoints) keep them in the project, not a temp dir.
    os.environ.setdefault(STATE_DIR_ENV, str(config.project.state_dir))
    db = open_database(config.db_url, config.project)
    agents.extend(served_agents(config, db))
    agent_os = AgentOS(
        id="mindrian",
        name="mindrian",
        description="Agents generated from SKILL.md files by mindrian",
        agents=agents,
        db=db,
        telemetry=False,
    )
    return agent_os.get_app()


def serve(config: ServeConfig) -> None:
    """Run the app until interrupted."""
    import uvicorn

    uvicorn.run(build_app(config), host=config.host, port=config.port, log_level="warning")
