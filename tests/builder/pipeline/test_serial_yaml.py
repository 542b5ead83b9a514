"""YAML written by the builder reads back exactly, whatever line breaks a skill's text holds."""

from __future__ import annotations

import pytest

from builder.pipeline.serial import dump_yaml, load_yaml


@pytest.mark.parametrize(
    "text",
    ["a\x85b", "a\rb", "a\u2028b", "a\u2029 b\n", "rule\n\x85next  ", "plain", "two\nlines"],
    ids=["nel", "cr", "ls", "ps", "mixed", "plain", "lf"],
)
@pytest.mark.parametrize("fast", [False, True], ids=["python", "libyaml"])
def test_every_line_break_survives_a_round_trip(text: str, fast: bool) -> None:
    # PyYAML folds a NEL written plain, single-quoted or in a literal block into a space.
    data = {"description": text, "rules": [text]}
    assert load_yaml(dump_yaml(data, fast=fast)) == data


def test_text_without_other_breaks_keeps_its_readable_style() -> None:
    assert dump_yaml({"k": "two\nlines"}) == "k: |-\n  two\n  lines\n"
    assert dump_yaml({"k": "plain"}) == "k: plain\n"
