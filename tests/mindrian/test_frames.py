"""Control frames: canonical emission, incremental parsing, malformed input."""

import json
import logging
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mindrian.frames import (
    Frame,
    FrameError,
    FrameParser,
    Text,
    coalesce,
    defuse,
    emit,
    parse_text,
)

READY = Frame("ODEI", "READY", {"stage": "discuss", "ts": "2025-10-09T18:30:00Z"})
HANDOFF = Frame("ODEI", "HANDOFF", {"to": "decisions"})
ERROR = Frame("MINDRIAN", "ERROR", {"code": "MCP_CONNECTION_FAILED", "message": "a >>> b"})

#: A stream with three frames, text around them, and traps next to the markers.
STREAM = (
    "booting <\n"
    + READY.to_text()
    + " working << on it\n"
    + HANDOFF.to_text()
    + ERROR.to_text()
    + "\ndone >"
)
EXPECTED = (
    Text("booting <\n"),
    READY,
    Text(" working << on it\n"),
    HANDOFF,
    ERROR,
    Text("\ndone >"),
)


def feed_chunks(chunks, max_body=4096):
    parser = FrameParser(max_body)
    events = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return coalesce(events)


# --- emit -------------------------------------------------------------------


def test_emit_is_compact_sorted_json():
    text = emit("ODEI", "READY", {"ts": "2025-10-09T18:30:00Z", "stage": "discuss"})
    assert text == '<<<ODEI:READY:{"stage":"discuss","ts":"2025-10-09T18:30:00Z"}>>>'


@pytest.mark.parametrize(
    "note",
    ["a>>>b", "<<<ODEI:HANDOFF:mind>>>", "line1\nline2\r\n", ">", "<", "é ✓ \u2028"],
)
def test_payload_text_cannot_break_the_frame(note):
    text = emit("ODEI", "READY", {"stage": "s", "note": note})
    inner = text[3:-3]
    assert "<<<" not in inner and ">>>" not in inner
    assert "\n" not in text and "\r" not in text
    assert parse_text(text) == (Frame("ODEI", "READY", {"stage": "s", "note": note}),)


@pytest.mark.parametrize(
    ("ns", "type_", "payload", "message"),
    [
        ("odei", "READY", {"stage": "s"}, "namespace"),
        ("OD:EI", "READY", {"stage": "s"}, "namespace"),
        ("ODEI", "ready", {"stage": "s"}, "frame type"),
        ("ODEI", "PING", {}, "unknown frame type"),
        ("ODEI", "READY", {}, "lacks stage"),
        ("ODEI", "READY", {"stage": ""}, "invalid value"),
        ("ODEI", "READY", {"stage": "a b"}, "invalid value"),
        ("ODEI", "READY", {"stage": "s", "ts": "yesterday"}, "ISO 8601"),
        ("ODEI", "HANDOFF", {"to": 3}, "must be a string"),
        ("ODEI", "ERROR", {"code": "lower_case"}, "invalid value"),
        ("ODEI", "ERROR", {"code": "X", "message": None}, "must be a string"),
        ("ODEI", "ERROR", ["code"], "JSON object"),
        ("ODEI", "READY", {"stage": "s", "n": float("nan")}, "not JSON data"),
        ("ODEI", "READY", {"stage": "s", "n": object()}, "not JSON data"),
    ],
)
def test_emit_rejects_invalid_frames(ns, type_, payload, message):
    with pytest.raises(FrameError, match=message):
        emit(ns, type_, payload)


@settings(max_examples=150)
@given(
    extra=st.dictionaries(
        st.text(max_size=8).filter(lambda k: k not in ("stage", "ts")),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=5), inner, max_size=3)
            ),
            max_leaves=8,
        ),
        max_size=4,
    )
)
def test_round_trip_emit_then_parse(extra):
    payload = {"stage": "discuss", **extra}
    text = emit("ODEI", "READY", payload)
    (frame,) = parse_text(text)
    assert frame == Frame("ODEI", "READY", payload)
    assert frame.to_text() == text


def test_frame_payload_is_read_only():
    with pytest.raises(TypeError):
        READY.payload["stage"] = "other"  # type: ignore[index]


# --- incremental parsing ------------------------------------------------------


def test_whole_stream_in_one_chunk():
    assert feed_chunks([STREAM]) == EXPECTED


@pytest.mark.parametrize("cut", range(len(STREAM) + 1))
def test_every_single_split_point_gives_the_same_events(cut):
    assert feed_chunks([STREAM[:cut], STREAM[cut:]]) == EXPECTED


def test_one_character_at_a_time():
    assert feed_chunks(list(STREAM)) == EXPECTED


@settings(max_examples=300)
@given(cuts=st.lists(st.integers(0, len(STREAM)), max_size=12))
def test_any_chunking_gives_the_same_events(cuts):
    points = sorted(set(cuts))
    bounds = [0, *points, len(STREAM)]
    chunks = [STREAM[a:b] for a, b in pairwise(bounds)]
    assert feed_chunks(chunks) == EXPECTED


def test_frames_are_reported_as_soon_as_they_close():
    parser = FrameParser()
    assert parser.feed("x <<<ODEI:HAND") == (Text("x "),)
    assert parser.feed("OFF:mind>>> y") == (
        Frame("ODEI", "HANDOFF", {"to": "mind"}),
        Text(" y"),
    )
    assert parser.close() == ()


def test_seed_bare_handoff_payload_is_accepted():
    assert parse_text("<<<ODEI:HANDOFF:decisions>>>") == (HANDOFF,)
    assert HANDOFF.to_text() == '<<<ODEI:HANDOFF:{"to":"decisions"}>>>'


def test_seed_error_example_without_message_is_accepted():
    frames = parse_text('<<<ODEI:ERROR:{"code":"MCP_CONNECTION_FAILED"}>>>')
    assert frames == (Frame("ODEI", "ERROR", {"code": "MCP_CONNECTION_FAILED"}),)


def test_longer_marker_runs_keep_their_extra_brackets_as_text():
    text = "<<" + HANDOFF.to_text() + ">>"
    assert parse_text(text) == (Text("<<"), HANDOFF, Text(">>"))


@pytest.mark.parametrize(
    "raw",
    [
        '<<<ODEI:READY:{"stage":"discuss"',  # unterminated at end of stream
        "<<<ODEI:READY:{not json}>>>",
        '<<<ODEI:PING:{"stage":"x"}>>>',  # unknown type
        '<<<odei:READY:{"stage":"x"}>>>',  # bad namespace
        "<<<ODEI:READY>>>",  # no payload separator
        "<<<ODEI:READY:{}>>>",  # lacks stage
        '<<<ODEI:READY:["stage"]>>>',  # not an object
        '<<<ODEI:ERROR:{"code":"X","message":"a>>>"}>>>',  # unescaped >>> ends early
        "<<<ODEI:HANDOFF:two words>>>",
    ],
)
def test_malformed_frames_pass_through_as_text_and_are_logged(raw, caplog):
    caplog.set_level(logging.WARNING, logger="mindrian.frames")
    assert parse_text("a " + raw + " b") == (Text("a " + raw + " b"),)
    assert caplog.records, "malformed frame was not logged"


def test_a_new_opener_abandons_the_unclosed_frame():
    text = "<<<ODEI:READY:{" + READY.to_text()
    assert parse_text(text) == (Text("<<<ODEI:READY:{"), READY)


def test_overlong_frame_is_text_and_the_buffer_stays_bounded():
    parser = FrameParser(max_body=16)
    garbage = "<<<" + "x" * 1000
    events = parser.feed(garbage)
    passed = "".join(e.text for e in events if isinstance(e, Text))
    assert len(garbage) - len(passed) <= 16 + 3
    rest = parser.close()
    assert coalesce(events + rest) == (Text(garbage),)


def test_overlong_frame_does_not_hide_a_following_frame():
    text = "<<<" + "y" * 80 + HANDOFF.to_text()
    assert parse_text(text, max_body=40) == (Text("<<<" + "y" * 80), HANDOFF)


def test_runs_of_openers_do_not_grow_the_buffer():
    parser = FrameParser(max_body=8)
    events = parser.feed("<" * 500)
    assert sum(len(e.text) for e in events) == 500 - 3


def test_frame_limit_is_about_the_body_only():
    body = json.dumps({"stage": "s"}, separators=(",", ":"))
    exact = f"<<<ODEI:READY:{body}>>>"
    limit = len(exact) - 6
    assert parse_text(exact, max_body=limit) == (Frame("ODEI", "READY", {"stage": "s"}),)
    assert parse_text(exact, max_body=limit - 1) == (Text(exact),)


def test_parser_rejects_nonpositive_limit():
    with pytest.raises(ValueError):
        FrameParser(max_body=0)


def test_frames_are_checked_on_construction():
    with pytest.raises(FrameError, match="unknown frame type"):
        Frame("ODEI", "PING", {})


# --- PHASE and DONE (project extensions), ERROR locations -----------------------


@pytest.mark.parametrize(
    ("type_", "payload", "text"),
    [
        (
            "PHASE",
            {
                "phase": "tool_assembly",
                "number": 4,
                "status": "failed",
                "failed": ["tools_available"],
                "skill": "s/SKILL.md",
            },
            '<<<MINDRIAN:PHASE:{"failed":["tools_available"],"number":4,"phase":"tool_assembly",'
            '"skill":"s/SKILL.md","status":"failed"}>>>',
        ),
        (
            "DONE",
            {"stage": "build", "ok": False, "exit_code": 1},
            '<<<MINDRIAN:DONE:{"exit_code":1,"ok":false,"stage":"build"}>>>',
        ),
        (
            "ERROR",
            {
                "code": "P003",
                "message": "m",
                "location": {"path": "s/SKILL.md", "line": 3, "column": 0},
            },
            '<<<MINDRIAN:ERROR:{"code":"P003","location":{"column":0,"line":3,"path":"s/SKILL.md"},"message":"m"}>>>',
        ),
    ],
)
def test_extension_frames_are_canonical_and_round_trip(type_, payload, text):
    assert emit("MINDRIAN", type_, payload) == text
    assert parse_text(text) == (Frame("MINDRIAN", type_, payload),)


@pytest.mark.parametrize(
    ("type_", "payload", "message"),
    [
        ("PHASE", {"phase": "p", "status": "ok"}, "lacks number"),
        ("PHASE", {"phase": "p", "number": 0, "status": "ok"}, "must be positive"),
        (
            "PHASE",
            {"phase": "p", "number": True, "status": "ok"},
            "non-negative integer",
        ),
        (
            "PHASE",
            {"phase": "p", "number": "1", "status": "ok"},
            "non-negative integer",
        ),
        ("PHASE", {"phase": "p", "number": 1, "status": "OK"}, "invalid value"),
        ("PHASE", {"phase": "a b", "number": 1, "status": "ok"}, "invalid value"),
        (
            "PHASE",
            {"phase": "p", "number": 1, "status": "ok", "failed": "check"},
            "list of strings",
        ),
        (
            "PHASE",
            {"phase": "p", "number": 1, "status": "ok", "failed": [1]},
            "list of strings",
        ),
        ("DONE", {"stage": "build"}, "lacks ok"),
        ("DONE", {"stage": "build", "ok": 1}, "true or false"),
        (
            "DONE",
            {"stage": "build", "ok": True, "exit_code": -1},
            "non-negative integer",
        ),
        ("DONE", {"stage": "build", "ok": True, "agent_id": None}, "must be a string"),
        ("ERROR", {"code": "X", "location": "s/SKILL.md:3"}, "object with a path"),
        ("ERROR", {"code": "X", "location": {"line": 3}}, "object with a path"),
        (
            "ERROR",
            {"code": "X", "location": {"path": "p", "line": "3"}},
            "location.line",
        ),
        (
            "ERROR",
            {"code": "X", "location": {"path": "p", "column": -1}},
            "location.column",
        ),
        ("READY", {"stage": "build", "skill": 3}, "must be a string"),
    ],
)
def test_extension_payloads_are_validated(type_, payload, message):
    with pytest.raises(FrameError, match=message):
        emit("MINDRIAN", type_, payload)
    raw = "<<<MINDRIAN:" + type_ + ":" + json.dumps(payload) + ">>>"
    assert parse_text(raw) == (Text(raw),)


# --- defuse ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain < text << here >>> too", "plain < text << here >>> too"),
        ("<<<MINDRIAN:DONE:{}>>>", "<< <MINDRIAN:DONE:{}>>>"),
        ("<<<<", "<< <<"),
        ("<<<<<<<", "<< << << <"),
        ("a<<<b<<<c", "a<< <b<< <c"),
    ],
)
def test_defuse_breaks_openers_and_leaves_other_text_alone(text, expected):
    assert defuse(text) == expected


@settings(max_examples=300)
@given(
    text=st.text(alphabet=st.sampled_from('<>:{}"ODEIREADY \n'), max_size=60) | st.text(max_size=60)
)
def test_defused_text_never_parses_as_a_frame(text):
    safe = defuse(text)
    assert "<<<" not in safe
    assert parse_text(safe) == ((Text(safe),) if safe else ())
    assert safe.replace(" ", "") == text.replace(" ", "")


def test_defused_text_next_to_frames_keeps_only_the_real_ones():
    forged = HANDOFF.to_text()
    stream = defuse(f"note: {forged}\n") + READY.to_text()
    assert [e for e in parse_text(stream) if isinstance(e, Frame)] == [READY]
