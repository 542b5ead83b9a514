"""The quicker safe dumper writes exactly what PyYAML's own pure-Python emitter writes."""

from __future__ import annotations

import io
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from mindrian.yaml_emit import SafeDumper

#: Every character PyYAML's analysis treats apart (indicators, whitespace, breaks, the edges of
#: its printable ranges, a surrogate, the byte order mark), and a few ordinary ones.
TRICKY = (
    "-?:,[]{}#&*!|>'\"%@`. \t\r\n\x00\x07\x1f\x7e\x7f\x85\x9f\xa0é\ud7ff\ud800\ue000"
    "\ufeff\ufffd\ufffe\U00010000😀\U0010fffe\U0010ffffaZ09"
)
texts = st.text(alphabet=st.sampled_from(TRICKY), max_size=10)
#: How registry.yaml and spec.yaml are written (``width`` as large as either uses).
STYLE: dict[str, Any] = {
    "sort_keys": False,
    "allow_unicode": True,
    "default_flow_style": False,
    "width": 2**31 - 1,
}


def _emitter(cls: type[yaml.SafeDumper], **options: Any) -> yaml.SafeDumper:
    return cls(io.StringIO(), allow_unicode=True, **options)


@given(texts)
def test_the_scalar_analysis_is_pyyamls(text: str) -> None:
    ours = _emitter(SafeDumper).analyze_scalar(text)
    theirs = _emitter(yaml.SafeDumper).analyze_scalar(text)
    assert vars(ours) == vars(theirs)


class _Literal(yaml.SafeDumper):
    """Asks for a literal block for every multi-line string, as the project's dumpers do."""


class _QuickLiteral(SafeDumper):
    """:class:`_Literal` on the quicker dumper."""


def _literal(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Literal.add_representer(str, _literal)
_QuickLiteral.add_representer(str, _literal)

documents = st.recursive(
    texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


@given(documents, st.booleans())
def test_documents_are_written_byte_for_byte_as_pyyaml_writes_them(
    document: Any, unicode: bool
) -> None:
    style = {**STYLE, "allow_unicode": unicode}
    assert yaml.dump(document, Dumper=_QuickLiteral, **style) == yaml.dump(
        document, Dumper=_Literal, **style
    )


@pytest.mark.parametrize(
    "text",
    [
        "two\nlines",
        "kept\n\n\nblank lines\n",
        "trailing break\n\n",
        "  indented\nfirst line",
        "\nleading break",
        "next line\x85and separator\u2028in a block",
        "ends without a break",
    ],
)
def test_literal_blocks_are_written_as_pyyaml_writes_them(text: str) -> None:
    data = {"k": [text, {"nested": text}]}
    assert yaml.dump(data, Dumper=_QuickLiteral, **STYLE) == yaml.dump(
        data, Dumper=_Literal, **STYLE
    )


def test_an_encoded_stream_is_left_to_pyyaml() -> None:
    data = {"k": "a\nb"}
    ours = yaml.dump(data, Dumper=_QuickLiteral, encoding="utf-16", **STYLE)
    assert ours == yaml.dump(data, Dumper=_Literal, encoding="utf-16", **STYLE)
