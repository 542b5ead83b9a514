"""Untrusted SKILL.md text is parsed in linear time: no backtracking pattern meets it."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from builder.orchestration.validation import validate
from builder.pipeline.config import BuildConfig
from builder.skill.body import atx_heading, section_key

# The pattern atx_heading replaces (quadratic on runs of spaces), as the reference for
# every heading that is not only closing hashes, where CommonMark and it disagreed.
OLD_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")


@contextmanager
def hang_guard(seconds: int) -> Iterator[None]:
    """Turn a hang into a failure (a bound on the old quadratic behaviour, not a speed target)."""

    def expired(*_: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@given(st.text(alphabet=" \t#ab:(-", max_size=30))
def test_atx_heading_agrees_with_the_pattern_it_replaces(line: str) -> None:
    old = OLD_HEADING.match(line)
    new = atx_heading(line)
    if old is None:
        assert new is None
        return
    text = (old.group(2) or "").strip()
    if text.strip("#") or not text:
        assert new == (len(old.group(1)), text)
    else:
        assert new == (len(old.group(1)), "")  # "# ##" is an empty heading (CommonMark)


@pytest.mark.parametrize(
    ("heading", "key"),
    [
        ("Methodology: 4 pillars", "methodology"),
        ("Methodology - the pillars", "methodology"),
        ("Methodology \u2014 the pillars", "methodology"),
        ("Methodology (short)", "methodology"),
        ("Self-check", None),
    ],
)
def test_qualifiers_are_cut_at_the_first_marker(heading: str, key: str | None) -> None:
    assert section_key(heading) == key


def test_a_one_mebibyte_pathological_heading_validates(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    head = "---\nname: spaced\ndescription: A skill whose heading is mostly spaces.\n---\n"
    spaces = " " * ((1 << 20) - len(head) - 40)
    skill.write_text(f"{head}## Methodology{spaces}:x b\n\nStep one.\n", encoding="utf-8")
    assert skill.stat().st_size <= 1 << 20  # within the size limit phase 1 enforces
    with hang_guard(60):
        report = validate(skill, BuildConfig(root=str(tmp_path)))
    assert report.problems == () and report.agent_id == "spaced"
