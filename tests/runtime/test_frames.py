"""Control frames: canonical emission, incremental parsing, malformed input."""

import json
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mindrian.frames import (
    Frame,
    FrameError,
    FrameParser,
    Text,
    coalesce,
    emit,
    parse_text,
)

READY = Frame("ODEI", "READY", {"stage": "discuss", "ts": "2025-10-09T18:30:00Z"})
HANDOFF = Frame("ODEI", "HANDOFF", {"to": "decisions"})
ERROR = Frame(
    "MINDRIAN", "ERROR", {"code": "MCP_CONNECTION_FAILED", "message": "a >>> b"}
)

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
            lambda inner: st.lists(inner, max_size=3)
            | st.dictionaries(st.text(max_size=5), inner, max_size=3),
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
    chunks = [STREAM[a:b] for a, b in zip(bounds, bounds[1:])]
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
    assert parse_text(exact, max_body=limit) == (
        Frame("ODEI", "READY", {"stage": "s"}),
    )
    assert parse_text(exact, max_body=limit - 1) == (Text(exact),)


def test_parser_rejects_nonpositive_limit():
    with pytest.raises(ValueError):
        FrameParser(max_body=0)


def test_frames_are_checked_on_construction():
    with pytest.raises(FrameError, match="unknown frame type"):
        Frame("ODEI", "PING", {})
