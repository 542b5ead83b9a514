"""Limits ``mindrian serve`` puts on a request before AgentOS sees it.

Every request is untrusted. AgentOS answers most bad input itself (an unknown
agent is 404, a missing field 422, a form field over 1 MiB 400), but a body
may be any size, a message of a megabyte reaches the model, and a session id
is used as a file name by the agents that keep state files (pipeline
checkpoints): a ``../`` there was a failed run with a traceback in the log.
This ASGI middleware answers those with a 4xx and a reason instead:

* a body over :data:`MAX_BODY_BYTES` (declared or counted): 413;
* a run's ``message`` (or a continue's ``input``) over
  :data:`MAX_MESSAGE_CHARS` characters: 413;
* a run's or continue's ``session_id`` that is not a plain id
  (:data:`SESSION_ID_PATTERN`): 400.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_MESSAGE_CHARS",
    "SESSION_ID_PATTERN",
    "RequestLimits",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Largest request body accepted (uploads included).
MAX_BODY_BYTES = 8 * 1024 * 1024
#: Longest message or answer a run takes, in characters.
MAX_MESSAGE_CHARS = 100_000
#: A session id: what the agents' state files accept as a file name (``mindrian.agents._state``).
SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: The routes that start or continue a run: their form is checked.
_RUN_ROUTE = re.compile(r"/agents/[^/]+/runs(?:/[^/]+/continue)?/?")
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class _Refused(Exception):
    """A request answered with ``status`` and ``reason`` instead of reaching the app."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class RequestLimits:
    """ASGI middleware: bounded bodies, bounded messages, plain session ids (see the module)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE"):
            await self.app(scope, receive, send)
            return
        try:
            body = await _read_body(scope, receive)
            if _RUN_ROUTE.fullmatch(scope["path"]) and _is_form(scope):
                await _check_run_form(scope, body)
        except _Refused as refused:
            await _answer(send, refused.status, refused.reason)
            return
        await self.app(scope, _replay(body, receive), send)


async def _read_body(scope: Scope, receive: Receive) -> bytes:
    declared = _header(scope, b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _Refused(413, f"request body of {declared} bytes; at most {MAX_BODY_BYTES}")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:  # a chunked body has no declared length
            raise _Refused(413, f"request body over {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _check_run_form(scope: Scope, body: bytes) -> None:
    from starlette.exceptions import HTTPException
    from starlette.requests import Request

    try:
        form = await Request(scope, _replay(body, _no_more)).form(max_part_size=MAX_BODY_BYTES)
    except HTTPException as error:  # a malformed multipart body
        raise _Refused(error.status_code, str(error.detail)) from error
    try:
        for field in ("message", "input"):
            value = form.get(field)
            if isinstance(value, str) and len(value) > MAX_MESSAGE_CHARS:
                raise _Refused(
                    413,
                    f"{field} of {len(value)} characters; at most {MAX_MESSAGE_CHARS}",
                )
        session_id = form.get("session_id")
        if (
            isinstance(session_id, str)
            and session_id
            and not SESSION_ID_PATTERN.fullmatch(session_id)
        ):
            raise _Refused(
                400,
                f"malformed session_id {session_id[:80]!r}: 1-128 letters, digits, '.', '_' "
                "or '-', starting with a letter or digit",
            )
    finally:
        await form.close()


def _is_form(scope: Scope) -> bool:
    content_type = (_header(scope, b"content-type") or "").lower()
    return content_type.startswith(_FORM_TYPES)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _replay(body: bytes, then: Receive) -> Receive:
    """A ``receive`` that hands over the body already read, then passes on to ``then``.

    A streaming response waits on ``receive`` for the client's disconnect, so
    after the body the real channel takes over.
    """
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await then()

    return receive


async def _no_more() -> Message:
    return {"type": "http.disconnect"}


async def _answer(send: Send, status: int, reason: str) -> None:
    payload = json.dumps({"detail": reason}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
