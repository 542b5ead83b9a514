"""``mindrian serve``: an AgentOS app with every registered agent.

Each agent is served through :class:`~mindrian.agents.served.ServedAgent`, so
what runs behind AgentOS's routes keeps the wrapper's guarantees (see that
module). Sessions, runs and guided progress live in one Agno database:
SQLite under ``.mindrian/`` by default, or PostgreSQL when a
``postgresql+psycopg://`` URL is given (``--db`` or ``MINDRIAN_DB_URL``), so
several ``serve`` processes behind a load balancer share every session.

Authentication is AgentOS's own, configured by environment variables:
``OS_SECURITY_KEY`` (one shared bearer key), or ``JWT_VERIFICATION_KEY`` /
``JWT_JWKS_FILE`` (JWTs; the user is the token's ``sub``, scopes such as
``agents:run`` and ``sessions:read`` are enforced, and user isolation is on, so
a user sees, continues and deletes only their own sessions and runs; the
``agent_os:admin`` scope sees all). Without either, the app is anonymous and
:func:`check_exposure` keeps it on loopback unless ``insecure`` is asked for.
With either, the API description (``/docs``, ``/redoc``, ``/openapi.json``) is
off: AgentOS's authentication lets those paths through unauthenticated.

A served agent's callers are not its operator: host tools (Bash, Read…) run
only when the operator enables them (``host_tools``: ``--host-tools``, or ``host-tools = true``
in the project's ``[tool.mindrian.serve]``). Each
user then works in a folder of their own under the served workspace, and an
operator's call that no rule of its skill allows pauses the run for the
client's confirmation (:mod:`mindrian.agents.served`), and so does a role
agent's; the other types cannot pause in the middle of a part, so only their
pre-approved calls run.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from mindrian.agents.base import STATE_DIR_ENV, MindrianAgent
from mindrian.agents.operator import OperatorAgent
from mindrian.agents.role import RoleAgent
from mindrian.agents.served import REQUEST_KEY, ServedAgent
from mindrian.errors import MindrianError
from mindrian.host import Approving, Denying, HostSession, arbitrary_code_rules
from mindrian.model_choice import ModelChoice
from mindrian.packages import AgentPackage, agent_class, registered_packages
from mindrian.project import ProjectPaths
from mindrian.providers import ProviderModel, missing_credentials
from mindrian.request_limits import RequestLimits
from mindrian.served_api import ServedRoutes, describe_served

__all__ = [
    "DB_URL_ENV",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "JWT_ALGORITHM_ENV",
    "AgentDatabaseId",
    "AuthMode",
    "DatabaseUnusableError",
    "ExposedWithoutAuthError",
    "IdempotencyKey",
    "ServeConfig",
    "auth_mode",
    "build_app",
    "check_exposure",
    "exposure_warning",
    "host_tool_warnings",
    "is_loopback",
    "listen",
    "open_database",
    "run_server",
    "serve",
    "unusable_models",
]

#: Environment variable with the session database URL.
DB_URL_ENV = "MINDRIAN_DB_URL"
#: JWT signature algorithm (AgentOS's default, RS256, when unset); HS256 for a shared secret.
JWT_ALGORITHM_ENV = "MINDRIAN_JWT_ALGORITHM"
#: Loopback by default: without a key or JWT verification the app is anonymous.
DEFAULT_HOST = "127.0.0.1"
#: AgentOS's usual port.
DEFAULT_PORT = 7777
_log = logging.getLogger("mindrian.serve")
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
    insecure: bool = False
    """Serve anonymously beyond loopback anyway (``--insecure``), with a warning each start."""
    host_tools: bool = False
    """Give agents the host tools their packages grant (``--host-tools``); off: none runs."""
    workspace: Path | None = None
    """The served root: each user's host tools work in a folder of their own under it (None:
    the current folder)."""


class AuthMode(Enum):
    """How AgentOS authenticates requests, read from its environment variables."""

    NONE = "none"
    """Anonymous: anyone who reaches the port may do anything."""
    SECURITY_KEY = "security key"
    """``OS_SECURITY_KEY``: one shared bearer key; its holders may do anything."""
    JWT = "JWT"
    """``JWT_VERIFICATION_KEY`` or ``JWT_JWKS_FILE``: verified users, scopes, user isolation."""


class ExposedWithoutAuthError(MindrianError, ValueError):
    """``serve`` was asked to listen beyond loopback with no authentication configured."""


class DatabaseUnusableError(MindrianError, RuntimeError):
    """The SQLite sessions database cannot be opened (a missing folder, no permission)."""


def auth_mode(env: Mapping[str, str]) -> AuthMode:
    """The authentication AgentOS will apply under ``env`` (JWT wins over a key, as in AgentOS)."""
    if env.get("JWT_VERIFICATION_KEY") or env.get("JWT_JWKS_FILE"):
        return AuthMode.JWT
    if env.get("OS_SECURITY_KEY"):
        return AuthMode.SECURITY_KEY
    return AuthMode.NONE


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``localhost`` or a loopback address)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # any other name may resolve to a public interface
        return False


def check_exposure(config: ServeConfig, env: Mapping[str, str]) -> str | None:
    """Refuse anonymous serving beyond loopback; returns the warning ``--insecure`` earns.

    Raises :class:`ExposedWithoutAuthError` when ``config.host`` is not loopback,
    no authentication is configured in ``env`` and ``config.insecure`` is off.
    """
    return exposure_warning(config.host, config.insecure, env)


def exposure_warning(host: str, insecure: bool, env: Mapping[str, str]) -> str | None:
    """:func:`check_exposure` for any server on ``host`` (``mindrian serve``, ``mindrian mcp``)."""
    if is_loopback(host) or auth_mode(env) is not AuthMode.NONE:
        return None
    if not insecure:
        raise ExposedWithoutAuthError(
            f"refusing to serve on {host!r} without authentication: anyone who reaches "
            "it could read, continue and delete every session. Set OS_SECURITY_KEY, or "
            "JWT_VERIFICATION_KEY / JWT_JWKS_FILE for per-user access, or listen on 127.0.0.1 "
            "(--insecure serves anonymously anyway)"
        )
    return (
        f"warning: serving on {host!r} WITHOUT authentication (--insecure): anyone who "
        "reaches it can read, continue and delete every session"
    )


def open_database(url: str | None, project: ProjectPaths) -> Any:
    """The sessions database: PostgreSQL or SQLite by URL, else SQLite under ``.mindrian/``."""
    chosen = url or os.environ.get(DB_URL_ENV) or None
    if chosen is None:
        from agno.db.sqlite import SqliteDb

        project.sessions_db.parent.mkdir(parents=True, exist_ok=True)
        return _opened(
            SqliteDb(db_file=str(project.sessions_db), id=_DB_ID),
            "sqlite:///" + str(project.sessions_db),
        )
    scheme = chosen.partition(":")[0]
    if scheme.startswith("postgresql"):
        from agno.db.postgres import PostgresDb

        return PostgresDb(db_url=chosen, id=_DB_ID)
    if scheme.startswith("sqlite"):
        from agno.db.sqlite import SqliteDb

        return _opened(SqliteDb(db_url=chosen, id=_DB_ID), chosen)
    raise ValueError(
        f"unsupported database URL scheme {scheme!r}: use postgresql+psycopg://... or sqlite:///..."
    )


def _opened(db: Any, url: str) -> Any:
    """``db`` once a connection opened: Agno logs a SQLite file it cannot open and serves on,
    storing no session or run. PostgreSQL is not probed: a server that is down may come back,
    and requests meanwhile get 503 (:func:`_database_unavailable`)."""
    from sqlalchemy.exc import OperationalError

    try:
        db.db_engine.connect().close()
    except OperationalError as error:
        reason = str(error.orig) if error.orig is not None else str(error)
        raise DatabaseUnusableError(f"cannot open the sessions database {url}: {reason}") from None
    return db


def served_agents(
    config: ServeConfig, db: Any, packages: tuple[AgentPackage, ...]
) -> list[ServedAgent]:
    """The agents of ``packages``, built with the chosen model and wrapped for AgentOS."""
    served = []
    for package in packages:
        cls = agent_class(package)
        model = config.model.run_model_for(package.agent_id, cls.model)
        agent = cls() if model is None else cls(model=model)
        if config.host_tools and agent.host_grant.grant:
            agent.use_host(_served_host(agent, config))
        served.append(ServedAgent.of(agent, db=db))
    return served


def _served_host(agent: MindrianAgent, config: ServeConfig) -> HostSession:
    """An operator or a role agent pauses for the client on a call no rule allows (and runs the
    calls the client confirmed); the other types deny such a call: they cannot pause inside a
    part (a pipeline phase, a team member, a guided step)."""
    root = (config.workspace or Path.cwd()).resolve()
    if isinstance(agent, (OperatorAgent, RoleAgent)):
        return HostSession(root, approver=Approving(), confirm_in_run=True, per_user=True)
    denial = (
        f"a served {agent.agent_type} agent cannot pause for the client's confirmation; "
        "only the calls its skill's allowed-tools pre-approve run"
    )
    return HostSession(root, approver=Denying(denial), per_user=True)


def host_tool_warnings(config: ServeConfig) -> list[str]:
    """What ``serve`` says at start about host tools: that they are off while packages grant
    them, or, when on, each pre-approved rule that runs arbitrary code."""
    granted = [p for p in registered_packages(config.project) if agent_class(p).host_grant.grant]
    if not config.host_tools:
        if not granted:
            return []
        names = ", ".join(p.agent_id for p in granted)
        return [
            "note: host tools are off (--host-tools, or host-tools = true in "
            f"[tool.mindrian.serve], turns them on); granted by: {names}"
        ]
    warnings = []
    for package in granted:
        risky = arbitrary_code_rules(agent_class(package).host_grant.allow)
        if risky:
            rules = ", ".join(rule.text for rule in risky)
            warnings.append(
                f"warning: {package.agent_id} pre-approves commands that run arbitrary code "
                f"for every user, without asking: {rules}"
            )
    return warnings


def unusable_models(config: ServeConfig) -> tuple[str, ...]:
    """One line per registered agent whose model cannot be asked here (no API key, no SDK):
    ``serve`` says so at start rather than answer each run with an error."""
    lines = []
    for package in registered_packages(config.project):
        chosen = config.model.run_model_for(package.agent_id, agent_class(package).model)
        why = missing_credentials(chosen) if isinstance(chosen, ProviderModel) else None
        if why is not None:
            lines.append(f"agent {package.agent_id!r} cannot run until then: {why}")
    return tuple(lines)


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` for uvicorn, bound as uvicorn binds one (IPv6 for a
    host with ``:``, addresses reusable), so a port in use is an ``OSError`` here, before the
    server says it is serving."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def run_server(app: Any, sock: socket.socket) -> None:
    """Serve ``app`` on the listening ``sock`` until interrupted."""
    import uvicorn

    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


def build_app(config: ServeConfig) -> Any:
    """The FastAPI app of an AgentOS serving every registered agent."""
    from agno.agent import Agent, AgentFactory, RemoteAgent
    from agno.agent.protocol import AgentProtocol
    from agno.os import AgentOS

    agents: list[Agent | RemoteAgent | AgentProtocol | AgentFactory] = []
    # Before the database and the environment: a project with nothing to serve is refused with
    # nothing written and nothing changed in the process.
    packages = registered_packages(config.project)
    # Wrappers that keep files (pipeline checkpoints) keep them in the project, not a temp dir.
    os.environ.setdefault(STATE_DIR_ENV, str(config.project.state_dir))
    db = open_database(config.db_url, config.project)
    agents.extend(served_agents(config, db, packages))
    agent_os = AgentOS(
        id="mindrian",
        name="mindrian",
        description="Agents generated from SKILL.md files by mindrian",
        agents=agents,
        db=db,
        telemetry=False,
        settings=_settings(os.environ),
        **_authentication(os.environ),
    )
    app = agent_os.get_app()
    describe_served(app)
    app.add_middleware(RequestLimits)
    app.add_middleware(ServedRoutes)
    app.add_middleware(AgentDatabaseId, db_id=_DB_ID)
    app.add_middleware(IdempotencyKey)
    from sqlalchemy.exc import InterfaceError, OperationalError

    for unavailable in (OperationalError, InterfaceError):
        app.add_exception_handler(unavailable, _database_unavailable)
    return app


class AgentDatabaseId:
    """ASGI middleware: ``GET /agents/{id}`` names the sessions database as ``GET /agents``
    does. AgentOS answers an agent of another framework (each served agent is one, a
    :class:`ServedAgent`) with ``db_id`` None, though its sessions are in that database."""

    def __init__(self, app: Any, db_id: str) -> None:
        self.app = app
        self.db_id = db_id

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "GET"
            or not _AGENT_ROUTE.fullmatch(scope["path"])
        ):
            await self.app(scope, receive, send)
            return
        started: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def hold(message: Any) -> None:
            if message["type"] == "http.response.start":
                started.update(message)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                await _send_with_db_id(send, started, b"".join(chunks), self.db_id)

        await self.app(scope, receive, hold)


class IdempotencyKey:
    """ASGI middleware: a request's ``Idempotency-Key`` header, as AgentOS reads it on a new
    run, reaches the served agents (:data:`~mindrian.agents.served.REQUEST_KEY`): a guided
    answer sent again with the same key is taken once. A key over 512 characters is a 422, as
    AgentOS answers one."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        key = _header(scope, b"idempotency-key") if scope["type"] == "http" else None
        if key is not None and len(key) > _MAX_KEY:
            body = json.dumps({"detail": f"Idempotency-Key must be at most {_MAX_KEY} characters"})
            await send(
                {
                    "type": "http.response.start",
                    "status": 422,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body.encode()})
            return
        token = REQUEST_KEY.set(key or None)
        try:
            await self.app(scope, receive, send)
        finally:
            REQUEST_KEY.reset(token)


#: The longest ``Idempotency-Key`` taken (AgentOS's bound).
_MAX_KEY = 512


def _header(scope: Any, name: bytes) -> str | None:
    """The value of header ``name`` (lower case) of an HTTP request, or None."""
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


#: ``/agents/{agent_id}`` and nothing below it.
_AGENT_ROUTE = re.compile(r"/agents/[^/]+/?")


async def _send_with_db_id(send: Any, start: dict[str, Any], body: bytes, db_id: str) -> None:
    """Send the held response, the agent's ``db_id`` set to ``db_id`` when it was a 200 without
    one."""
    if start.get("status") == 200:
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        # AgentOS leaves out a None field: an agent's answer without its database names none.
        if isinstance(data, dict) and "id" in data and data.get("db_id") is None:
            body = json.dumps({**data, "db_id": db_id}).encode("utf-8")
            headers = [
                (k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"
            ]
            start = {**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
    await send(start)
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _database_unavailable(request: Any, error: Exception) -> Any:
    """503 while the session database cannot be reached (a restart, a network cut).

    Otherwise the error reaches the server's last handler: a 500 with a
    traceback in the log, or a dropped connection. The reason names no host,
    port or user: the driver's message carries the connection string.
    """
    from fastapi.responses import JSONResponse

    _log.warning("session database unavailable (%s): answered 503", type(error).__name__)
    return JSONResponse(
        status_code=503,
        content={"detail": "the session database is unavailable; retry shortly"},
        headers={"Retry-After": "2"},
    )


def _settings(env: Mapping[str, str]) -> Any:
    """AgentOS's settings, the API description switched off whenever authentication is on.

    AgentOS's auth middleware and security-key check always let ``/docs``,
    ``/redoc`` and ``/openapi.json`` through, so behind authentication they
    would describe every route to anyone; anonymous local serving keeps them.
    """
    from agno.os.settings import AgnoAPISettings

    return AgnoAPISettings(docs_enabled=auth_mode(env) is AuthMode.NONE)


def _authentication(env: Mapping[str, str]) -> dict[str, Any]:
    """AgentOS's arguments for ``env``'s authentication (a security key needs none: it reads it).

    With JWT verification, scope checks and user isolation go on together: the
    user of every run, session read and deletion is the token's ``sub``.
    """
    if auth_mode(env) is not AuthMode.JWT:
        return {}
    from agno.os.authz import Authorization

    return {
        "authorization": Authorization(algorithm=env.get(JWT_ALGORITHM_ENV) or None),
        "user_isolation": True,
    }


def serve(config: ServeConfig) -> None:
    """Run the app until interrupted; refuses anonymous serving beyond loopback (see above)."""
    import sys

    warning = check_exposure(config, os.environ)
    if warning is not None:
        print(warning, file=sys.stderr)
    app = build_app(config)
    run_server(app, listen(config.host, config.port))
