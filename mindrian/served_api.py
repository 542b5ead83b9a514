"""What ``mindrian serve`` exposes of AgentOS.

AgentOS mounts every feature it has; mindrian's agents use a few: the agents
and their runs (human-in-the-loop confirmations are a run's continue route),
sessions, health, configuration and the OS's info. Every other feature (queue,
media storage, knowledge, components, schedules, eval runs, traces, metrics,
service accounts, filesystem, memories, learnings, approvals, registry,
databases, teams, workflows) is switched off: its paths answer 404 before any
of AgentOS's code runs (:class:`ServedRoutes`), and the API description
(``/openapi.json``) leaves them out (:func:`describe_served`).

Some values the served routes take reach AgentOS's code unchecked and fail
there with a 500 (``page=0``, a ``limit`` beyond SQLite's integers) or a 503
(``delete_media=true`` with no media storage). :class:`ServedRoutes` answers an
integer out of bounds with FastAPI's own 422 and ``delete_media=true`` with a
400 and its reason, and the description states the same bounds.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

__all__ = ["INTEGER_QUERY", "SERVED_PATH", "ServedRoutes", "describe_served", "is_served"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The paths ``serve`` answers: a request's path, or a route's template (``{session_id}``).
SERVED_PATH = re.compile(
    r"/(?:|health|config|info|docs|docs/oauth2-redirect|redoc|openapi\.json"
    r"|agents(?:/[^/]+)*|sessions(?:/[^/]+)*)/?"
)
#: Session paths of a feature mindrian does not use (media storage).
_MEDIA = re.compile(r"/sessions/[^/]+/media(?:/.*)?")
#: Integer query parameters of the served routes and the values they may take.
INTEGER_QUERY: Mapping[str, tuple[int, int]] = {
    "page": (1, 1_000_000),
    "limit": (1, 10_000),
    "created_after": (0, 2**53),
    "created_before": (0, 2**53),
}
#: A checkpoint's message index (a path segment) and its bounds.
_CHECKPOINT = re.compile(r"/agents/[^/]+/runs/[^/]+/checkpoints/(-?[0-9]+)/?")
_MESSAGE_INDEX = (0, 2**31 - 1)
#: Boolean spellings FastAPI reads as true.
_TRUE = frozenset({"1", "true", "on", "yes", "t", "y"})


def is_served(path: str) -> bool:
    """Whether ``serve`` answers ``path`` (a request's path or a route template)."""
    return SERVED_PATH.fullmatch(path) is not None and _MEDIA.fullmatch(path) is None


class ServedRoutes:
    """ASGI middleware: 404 for a path :func:`is_served` leaves out, 422 or 400 for a value the
    served routes cannot take (see the module)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass a served request on; answer any other HTTP request at once."""
        if scope["type"] == "http":
            path = scope.get("path", "")
            refusal = (404, "Not Found") if not is_served(path) else _refusal(scope, path)
            if refusal is not None:
                await _answer(send, *refusal)
                return
        await self.app(scope, receive, send)


def _refusal(scope: Scope, path: str) -> tuple[int, Any] | None:
    query = parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1"), True)
    for name, value in query:
        if name == "delete_media" and value.strip().lower() in _TRUE:
            return 400, "delete_media: this server keeps no media storage"
        bounds = INTEGER_QUERY.get(name)
        if bounds is not None and _out_of(value, bounds):
            return 422, _invalid(("query", name), value, bounds)
    checkpoint = _CHECKPOINT.fullmatch(path)
    if checkpoint is not None and _out_of(checkpoint.group(1), _MESSAGE_INDEX):
        return 422, _invalid(("path", "message_index"), checkpoint.group(1), _MESSAGE_INDEX)
    return None


def _invalid(where: tuple[str, str], value: str, bounds: tuple[int, int]) -> list[Any]:
    """FastAPI's own validation error for a value out of ``bounds`` (its 422's shape)."""
    low, high = bounds
    message = f"Input should be an integer from {low} to {high}"
    return [{"type": "int_bounds", "loc": list(where), "msg": message, "input": value[:100]}]


def _out_of(value: str, bounds: tuple[int, int]) -> bool:
    """Whether ``value`` is an integer outside ``bounds`` (anything else is FastAPI's 422)."""
    text = value.strip()
    if not re.fullmatch(r"[+-]?[0-9]{1,400}", text):
        return False
    return not bounds[0] <= int(text) <= bounds[1]


async def _answer(send: Send, status: int, reason: Any) -> None:
    payload = json.dumps({"detail": reason}).encode()
    headers = [(b"content-type", b"application/json")]
    headers.append((b"content-length", str(len(payload)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def describe_served(app: Any) -> None:
    """Make a FastAPI ``app``'s API description hold only the served paths, with the bounds
    :class:`ServedRoutes` puts on their values."""
    full = app.openapi

    def openapi() -> dict[str, Any]:
        with warnings.catch_warnings():  # the routes left out share operation ids (AgentOS's)
            warnings.filterwarnings("ignore", "Duplicate Operation ID", UserWarning)
            schema: dict[str, Any] = full()
        schema["paths"] = {p: ops for p, ops in schema.get("paths", {}).items() if is_served(p)}
        for operations in schema["paths"].values():
            for operation in operations.values():
                _bound(operation)
        return schema

    app.openapi = openapi


def _bound(operation: dict[str, Any]) -> None:
    kept = []
    for parameter in operation.get("parameters", []):
        name = parameter.get("name")
        if name == "delete_media":
            continue  # no media storage: the parameter can only be false
        bounds = INTEGER_QUERY.get(name) if parameter.get("in") == "query" else None
        if name == "message_index":
            bounds = _MESSAGE_INDEX
        if bounds is not None:
            for option in _integer_schemas(parameter.get("schema", {})):
                option["minimum"], option["maximum"] = bounds
        kept.append(parameter)
    if "parameters" in operation:
        operation["parameters"] = kept


def _integer_schemas(schema: dict[str, Any]) -> list[dict[str, Any]]:
    options = [schema, *schema.get("anyOf", [])]
    return [o for o in options if o.get("type") == "integer"]
