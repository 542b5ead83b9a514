"""YAML written by the builder reads back exactly, whatever line breaks a skill's text holds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from builder.pipeline.serial import dump_yaml, load_yaml
from mindrian.serial import _literal_safe


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


def _literal_safe_by_lines(value: str) -> bool:
    """What a literal block can carry, spelled out line by line and character by character."""
    return (
        all(line == line.rstrip(" \t") for line in value.split("\n"))
        and all(ch in "\n\t" or ch >= " " for ch in value)
        and not value.startswith((" ", "\n"))
    )


@given(st.text(alphabet=st.sampled_from(" \t\n\r\x00\x0b\x1f\x7f\x85ab:-#é😀"), max_size=12))
def test_the_literal_style_test_agrees_with_its_definition(value: str) -> None:
    assert _literal_safe(value) is _literal_safe_by_lines(value)


@pytest.mark.parametrize(
    ("text", "style"),
    [
        ("two\nlines", "|"),
        ("colon: inside\n- dash", "|"),
        ("trailing space \nno", None),
        ("trailing tab\t\nno", None),
        ("ends with space\n ", None),
        ("bell\x07\nno", None),
        (" leading\nspace", None),
        ("\nleading break", None),
    ],
)
def test_multiline_text_is_a_literal_block_only_when_it_reads_back_as_is(
    text: str, style: str | None
) -> None:
    dumped = dump_yaml({"k": text})
    assert dumped.startswith("k: |") is (style == "|")
    assert load_yaml(dumped) == {"k": text}


def _plain_data() -> st.SearchStrategy[object]:
    """Plain data as checkpoints hold it: strings (with the breaks and characters that choose a
    style), numbers, booleans, None, lists and string-keyed mappings."""
    text = st.text(alphabet=st.sampled_from(" \t\n\r\x85\u2028ab:-#|'\"é😀0yN~"), max_size=10)
    scalars = st.one_of(text, st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
        max_leaves=12,
    )


@given(_plain_data())
@pytest.mark.parametrize("fast", [False, True], ids=["python", "libyaml"])
def test_strings_skip_the_representers_dispatch_with_the_same_bytes(
    fast: bool, data: object
) -> None:
    """The dumpers build a string's node themselves (speed); PyYAML's own dispatch to the same
    representer gives the same bytes."""
    import yaml

    import mindrian.serial as serial

    dumper = serial._FastDumper if fast else serial._Dumper
    reference = type("Reference", (dumper,), {"represent_data": yaml.SafeDumper.represent_data})
    options = {"sort_keys": False, "allow_unicode": True, "default_flow_style": False}
    expected = yaml.dump(data, Dumper=reference, width=2**31 - 1, **options)
    assert dump_yaml(data, fast=fast) == expected
