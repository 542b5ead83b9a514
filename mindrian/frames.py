"""Control frames: ``<<<NS:TYPE:PAYLOAD>>>`` markers inside terminal output (seed 002).

A frame is a namespace (``ODEI``, ``MINDRIAN``…), a type (``READY``, ``HANDOFF``,
``ERROR``) and a JSON object payload. :func:`emit` writes the canonical text:
compact JSON with sorted keys in which every ``<`` and ``>`` is written as a
``\\u003c``/``\\u003e`` escape. JSON only allows those two characters inside
strings, where the escapes mean the same thing, so a canonical payload can never
contain ``<<<`` or ``>>>`` and cannot end its frame early or open another one.
JSON already escapes newlines, so a frame is always a single line.

:class:`FrameParser` reads a stream incrementally. Its rules, which do not depend
on how the stream is cut into chunks:

* a frame starts at ``<<<`` (the last three of a longer run of ``<``) and ends at
  the first ``>>>`` after it;
* if another ``<<<`` comes before that ``>>>``, or no ``>>>`` comes within
  ``max_body`` characters, the opening marker is ordinary text and scanning
  resumes right after it, so the buffer never holds more than about
  ``max_body`` characters;
* a terminated frame that is malformed (bad namespace or type, unknown type,
  payload that is not JSON or lacks a required field) is logged at WARNING and
  passed through verbatim as :class:`Text`: nothing an agent printed is lost,
  and only well-formed frames ever act as signals.

Seed 002 writes HANDOFF as a bare stage name (``<<<ODEI:HANDOFF:decisions>>>``),
the only payload that is not JSON. The canonical form is ``{"to":"decisions"}``;
the parser still accepts the bare name and reads it as that object.

Two types extend the seed for tools that drive a long command (``mindrian build
--frames``): ``PHASE`` reports one finished step of a stage (``phase``, ``number``,
``status``), and ``DONE`` ends a stage with its verdict (``stage``, ``ok``). ERROR
may say where the problem is: ``location`` is ``{"path", "line", "column"}``,
line and column 1-based and 0 when unknown.

Frames are only signals when nothing else in the stream can look like one.
:func:`defuse` makes ordinary text safe to print next to frames: it breaks every
run of three or more ``<``, so text that quotes untrusted input (a message naming
a SKILL.md value) can never pose as a frame.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any

from mindrian.errors import MindrianError

__all__ = [
    "DEFAULT_MAX_BODY",
    "FRAME_TYPES",
    "Event",
    "Frame",
    "FrameError",
    "FrameParser",
    "Text",
    "coalesce",
    "defuse",
    "emit",
    "parse_text",
]

logger = logging.getLogger(__name__)

#: Longest text accepted between ``<<<`` and ``>>>`` before the opener counts as plain text.
DEFAULT_MAX_BODY: int = 4096

_OPEN = "<<<"
_CLOSE = ">>>"
_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,31}")
_STAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_CODE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
_STATUS = re.compile(r"[a-z][a-z_]{0,31}")
_OPENER_RUN = re.compile(r"<{3,}")


class FrameError(MindrianError, ValueError):
    """A frame that cannot be emitted or parsed."""


def _text(pattern: re.Pattern[str] | None) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if not isinstance(value, str):
            raise FrameError(f"field {name!r} must be a string")
        if pattern is not None and not pattern.fullmatch(value):
            raise FrameError(f"field {name!r} has an invalid value {value!r}")

    return check


def _timestamp(name: str, value: Any) -> None:
    _text(None)(name, value)
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise FrameError(f"field {name!r} is not an ISO 8601 timestamp") from None


def _count(name: str, value: Any) -> None:
    # bool is an int subclass; ``true`` is not a count.
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FrameError(f"field {name!r} must be a non-negative integer")


def _positive(name: str, value: Any) -> None:
    _count(name, value)
    if value == 0:
        raise FrameError(f"field {name!r} must be positive")


def _flag(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise FrameError(f"field {name!r} must be true or false")


def _names(name: str, value: Any) -> None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise FrameError(f"field {name!r} must be a list of strings")


def _location(name: str, value: Any) -> None:
    if not isinstance(value, Mapping) or "path" not in value:
        raise FrameError(f"field {name!r} must be an object with a path")
    _text(None)(f"{name}.path", value["path"])
    for part in ("line", "column"):
        if part in value:
            _count(f"{name}.{part}", value[part])


@dataclass(frozen=True)
class _Spec:
    """What one frame type's payload must hold."""

    required: tuple[str, ...]
    """Fields that must be present."""
    checks: Mapping[str, Callable[[str, Any], None]]
    """Validator per known field (required or optional); other fields pass unchecked."""
    bare_field: str | None = None
    """Field a legacy bare-word payload fills, if the type allows one."""


#: Known frame types. READY's ``ts`` is optional so deterministic producers need no clock;
#: ERROR's ``message`` is optional because seed 002's own example frame omits it.
#: PHASE and DONE are this project's extensions (see the module docstring).
FRAME_TYPES: Mapping[str, _Spec] = MappingProxyType(
    {
        "READY": _Spec(
            ("stage",), {"stage": _text(_STAGE), "ts": _timestamp, "skill": _text(None)}
        ),
        "HANDOFF": _Spec(("to",), {"to": _text(_STAGE)}, bare_field="to"),
        "ERROR": _Spec(
            ("code",),
            {
                "code": _text(_CODE),
                "message": _text(None),
                "location": _location,
                "skill": _text(None),
            },
        ),
        "PHASE": _Spec(
            ("phase", "number", "status"),
            {
                "phase": _text(_STAGE),
                "number": _positive,
                "status": _text(_STATUS),
                "failed": _names,
                "skill": _text(None),
            },
        ),
        "DONE": _Spec(
            ("stage", "ok"),
            {
                "stage": _text(_STAGE),
                "ok": _flag,
                "exit_code": _count,
                "agent_id": _text(None),
                "skill": _text(None),
            },
        ),
    }
)


@dataclass(frozen=True)
class Frame:
    """One well-formed control frame (checked on construction, FrameError otherwise)."""

    ns: str
    """Namespace, e.g. ``ODEI``: an uppercase name."""
    type: str
    """Frame type, one of :data:`FRAME_TYPES`."""
    payload: Mapping[str, Any]
    """The decoded JSON object (read-only view)."""

    def __post_init__(self) -> None:
        _check_frame(self.ns, self.type, self.payload)
        object.__setattr__(self, "payload", MappingProxyType(dict(self.payload)))

    def to_text(self) -> str:
        """The canonical text of this frame."""
        return emit(self.ns, self.type, self.payload)


@dataclass(frozen=True)
class Text:
    """Ordinary output between frames, passed through unchanged."""

    text: str
    """The characters, exactly as received."""


#: What :meth:`FrameParser.feed` yields.
Event = Frame | Text


def _check_frame(ns: str, type_: str, payload: Any) -> _Spec:
    if not _NAME.fullmatch(ns):
        raise FrameError(f"invalid namespace {ns!r}: expected an uppercase name")
    if not _NAME.fullmatch(type_):
        raise FrameError(f"invalid frame type {type_!r}: expected an uppercase name")
    spec = FRAME_TYPES.get(type_)
    if spec is None:
        raise FrameError(f"unknown frame type {type_!r}")
    if not isinstance(payload, Mapping):
        raise FrameError(f"{type_} payload must be a JSON object")
    for key in payload:
        if not isinstance(key, str):
            raise FrameError(f"{type_} payload keys must be strings")
    missing = [name for name in spec.required if name not in payload]
    if missing:
        raise FrameError(f"{type_} payload lacks {', '.join(missing)}")
    for name, check in spec.checks.items():
        if name in payload:
            check(name, payload[name])
    return spec


def emit(ns: str, type_: str, payload: Mapping[str, Any]) -> str:
    """The canonical frame text for ``payload``; FrameError if it is not a valid frame."""
    _check_frame(ns, type_, payload)
    try:
        body = json.dumps(
            dict(payload),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )
    except (TypeError, ValueError) as exc:
        raise FrameError(f"{type_} payload is not JSON data: {exc}") from None
    body = body.replace("<", "\\u003c").replace(">", "\\u003e")
    if not body.isprintable():  # U+2028, DEL, C1 controls: JSON escapes keep the terminal safe
        body = "".join(ch if ch.isprintable() else json.dumps(ch)[1:-1] for ch in body)
    return f"{_OPEN}{ns}:{type_}:{body}{_CLOSE}"


def _decode(body: str) -> Frame:
    ns, sep1, rest = body.partition(":")
    type_, sep2, raw = rest.partition(":")
    if not (sep1 and sep2):
        raise FrameError("expected NS:TYPE:PAYLOAD")
    spec = FRAME_TYPES.get(type_)
    if spec is not None and spec.bare_field and _STAGE.fullmatch(raw):
        payload: Any = {spec.bare_field: raw}
    else:
        try:
            payload = json.loads(raw)
        except ValueError as exc:
            raise FrameError(f"payload is not JSON: {exc}") from None
    _check_frame(ns, type_, payload)
    return Frame(ns, type_, payload)


class FrameParser:
    """Splits a chunked stream into frames and passthrough text."""

    def __init__(self, max_body: int = DEFAULT_MAX_BODY) -> None:
        if max_body < 1:
            raise ValueError("max_body must be positive")
        self._max_body = max_body
        self._buffer = ""

    def feed(self, chunk: str) -> tuple[Event, ...]:
        """Events completed by ``chunk``; an unfinished frame waits for the next call."""
        self._buffer += chunk
        events: list[Event] = []
        while self._buffer:
            taken = self._step(events)
            if not taken:
                break
            self._buffer = self._buffer[taken:]
        return tuple(events)

    def close(self) -> tuple[Event, ...]:
        """Flush what is left at end of stream: an unterminated frame is plain text."""
        rest, self._buffer = self._buffer, ""
        if _OPEN in rest:
            logger.warning("unterminated control frame at end of stream")
        return (Text(rest),) if rest else ()

    def _step(self, events: list[Event]) -> int:
        """Handle the start of the buffer; return how many characters were used (0: need more)."""
        buf = self._buffer
        start = buf.find(_OPEN)
        if start < 0:
            keep = len(buf) - len(buf.rstrip("<"))  # a marker may be cut in two
            keep = min(keep, len(_OPEN) - 1)
            return _pass(events, buf[: len(buf) - keep])
        run_end = start + len(_OPEN)
        while run_end < len(buf) and buf[run_end] == "<":
            run_end += 1
        if run_end == len(buf):
            return _pass(events, buf[: len(buf) - len(_OPEN)])
        if run_end - len(_OPEN) > 0:
            return _pass(events, buf[: run_end - len(_OPEN)])
        return self._frame(events, buf, run_end)

    def _frame(self, events: list[Event], buf: str, body_start: int) -> int:
        window = buf[body_start : body_start + self._max_body + len(_CLOSE)]
        close = window.find(_CLOSE)
        reopen = window.find(_OPEN)
        if reopen >= 0 and (close < 0 or reopen < close):
            logger.warning("control frame opened but not closed before the next one")
            return _pass(events, buf[:body_start])
        if close < 0:
            if len(window) < self._max_body + len(_CLOSE):
                return 0
            logger.warning("control frame longer than %d characters", self._max_body)
            return _pass(events, buf[:body_start])
        end = body_start + close + len(_CLOSE)
        try:
            events.append(_decode(buf[body_start : body_start + close]))
        except FrameError as exc:
            logger.warning("malformed control frame passed through: %s", exc)
            events.append(Text(buf[:end]))
        return end


def _pass(events: list[Event], text: str) -> int:
    if text:
        events.append(Text(text))
    return len(text)


def coalesce(events: Iterable[Event]) -> tuple[Event, ...]:
    """``events`` with neighbouring Text joined, so equal streams compare equal."""
    merged: list[Event] = []
    for event in events:
        if isinstance(event, Text) and merged and isinstance(merged[-1], Text):
            merged[-1] = Text(merged[-1].text + event.text)
        elif not (isinstance(event, Text) and not event.text):
            merged.append(event)
    return tuple(merged)


def defuse(text: str) -> str:
    """``text`` with every run of three or more ``<`` split by spaces (``<< <``), so it holds no
    frame opener."""
    return _OPENER_RUN.sub(
        lambda run: " ".join(run[0][i : i + 2] for i in range(0, len(run[0]), 2)), text
    )


def parse_text(text: str, max_body: int = DEFAULT_MAX_BODY) -> tuple[Event, ...]:
    """All events of a complete stream, neighbouring text joined."""
    parser = FrameParser(max_body)
    return coalesce(parser.feed(text) + parser.close())
