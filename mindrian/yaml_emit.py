"""PyYAML's pure-Python safe dumper, byte for byte, with its two loops over characters done by
regular expressions and ``str`` methods.

Generated files under review (``spec.yaml``, ``registry.yaml``) are written by
PyYAML's own emitter, whose bytes are what the project commits (libyaml's emitter
differs, e.g. on characters outside the Basic Multilingual Plane). That emitter
examines every character of every string twice in Python: once to decide which
styles the string allows (:meth:`Emitter.analyze_scalar`) and once more to write a
literal block (:meth:`Emitter.write_literal`); for a skill's instructions that was
most of the time ``mindrian check`` spent rendering a package. :class:`SafeDumper`
decides the same things from a handful of scans. A case it does not cover (an
output encoding, a text holding NEL, LS or PS breaks, ``allow_unicode`` off) goes
to PyYAML's own code.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import yaml
from yaml.emitter import ScalarAnalysis

__all__ = ["SafeDumper", "libyaml_writes_alike"]

#: What PyYAML counts as a break, and as whitespace around an indicator.
_BREAKS = "\n\x85\u2028\u2029"
_SPACE = "\0 \t\r\n\x85\u2028\u2029"
#: A character PyYAML writes in double quotes only (``allow_unicode`` on): neither LF, printable
#: ASCII nor printable Unicode, or the byte order mark. ``\U0010ffff`` itself is excluded, as
#: PyYAML's ``< '\U0010ffff'`` does.
_SPECIAL = re.compile("[^\n\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010fffe]|\ufeff")
#: Indicators after the first character: any of these ends a flow plain scalar.
_FLOW_INDICATOR = re.compile(rf"[,?\[\]{{}}:]|(?<=[{_SPACE}])#")
#: Indicators after the first character that also end a block plain scalar.
_BLOCK_INDICATOR = re.compile(rf":(?=[{_SPACE}]|\Z)|(?<=[{_SPACE}])#")
_BREAK = re.compile(f"[{_BREAKS}]")
_OTHER_BREAK = re.compile("[\x85\u2028\u2029]")
_BREAK_SPACE = re.compile(f"[{_BREAKS}] ")
_SPACE_BREAK = re.compile(f" [{_BREAKS}]")
#: First characters that are indicators whatever follows.
_LEADING_INDICATORS = "#,[]{}&*!|>'\"%@`"


class SafeDumper(yaml.SafeDumper):
    """:class:`yaml.SafeDumper` with the same output, faster on long strings."""

    def analyze_scalar(self, scalar: str) -> ScalarAnalysis:
        """What :meth:`yaml.emitter.Emitter.analyze_scalar` finds, from regular expressions."""
        if not scalar or not self.allow_unicode:
            return super().analyze_scalar(scalar)
        flow, block = _leading_indicators(scalar)
        if _FLOW_INDICATOR.search(scalar, 1):
            flow = True
        if _BLOCK_INDICATOR.search(scalar, 1):
            flow = block = True
        line_breaks = _BREAK.search(scalar) is not None
        special = _SPECIAL.search(scalar) is not None
        space_break = _SPACE_BREAK.search(scalar) is not None
        break_space = _BREAK_SPACE.search(scalar) is not None
        first, last = scalar[0], scalar[-1]
        edge = first == " " or last == " " or first in _BREAKS or last in _BREAKS
        # The rest is PyYAML's decision, unchanged.
        flow_plain = block_plain = single = literal = True
        if edge:
            flow_plain = block_plain = False
        if last == " ":
            literal = False
        if break_space:
            flow_plain = block_plain = single = False
        if space_break or special:
            flow_plain = block_plain = single = literal = False
        if line_breaks:
            flow_plain = block_plain = False
        if flow:
            flow_plain = False
        if block:
            block_plain = False
        return ScalarAnalysis(
            scalar=scalar,
            empty=False,
            multiline=line_breaks,
            allow_flow_plain=flow_plain,
            allow_block_plain=block_plain,
            allow_single_quoted=single,
            allow_double_quoted=True,
            allow_block=literal,
        )

    def write_literal(self, text: str) -> None:
        """What :meth:`yaml.emitter.Emitter.write_literal` writes, a line at a time."""
        if self.encoding or _OTHER_BREAK.search(text) is not None:
            super().write_literal(text)
            return
        hints = self.determine_block_hints(text)
        self.write_indicator("|" + hints, True)
        if hints[-1:] == "+":
            self.open_ended = True
        self.write_line_break()
        lines = text.split("\n")
        for number, line in enumerate(lines):
            if number:
                self.write_line_break()
            if line:
                self.write_indent()
                self.stream.write(line)
        if lines[-1]:
            self.write_line_break()


def _leading_indicators(scalar: str) -> tuple[bool, bool]:
    """Whether the first characters keep ``scalar`` from being flow plain, and block plain."""
    if scalar.startswith(("---", "...")) or scalar[0] in _LEADING_INDICATORS:
        return True, True
    spaced = len(scalar) == 1 or scalar[1] in _SPACE
    if scalar[0] in "?:":
        return True, spaced
    return (True, True) if scalar[0] == "-" and spaced else (False, False)


#: Characters both emitters write as they are, in every style (``allow_unicode`` on): printable
#: ASCII and the Basic Multilingual Plane's printable ranges, without NEL, LS, PS and the byte
#: order mark. libyaml escapes NEL and every character past the BMP where PyYAML does not.
_SAME_EVERYWHERE = re.compile("[\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]*")
#: The longest mapping key both write as a simple key (PyYAML: under 128, libyaml: 128 too).
_SIMPLE_KEY = 100
#: Scalar types whose representation is Python's in both dumpers.
_NUMBERS = (bool, int, float)


def libyaml_writes_alike(data: Any, literal: Callable[[str], bool], width: int) -> bool:
    """Whether libyaml's emitter writes ``data`` byte for byte as :class:`SafeDumper` does, for a
    dumper whose block style (``allow_unicode`` on, no flow style) asks for a literal block
    exactly for the strings ``literal`` accepts and that folds lines at ``width``.

    Conservative: plain data whose strings hold only :data:`_SAME_EVERYWHERE` characters,
    are shorter than half the width on one line, or are a literal block's text (LF-ended
    lines, no blank line at the end); short one-line keys; a mapping or a list at the top (a
    lone scalar's document end marker differs). Anything else is left to PyYAML.
    """
    return type(data) in (dict, list) and _alike(data, literal, width)


def _alike(data: Any, literal: Callable[[str], bool], width: int) -> bool:
    """:func:`libyaml_writes_alike` of a value at any depth."""
    if data is None or type(data) in _NUMBERS:
        return True
    if type(data) is str:
        if "\n" in data:
            lines = data.split("\n")
            return (
                literal(data)
                and not data.endswith("\n\n")
                and all(_SAME_EVERYWHERE.fullmatch(line) for line in lines)
            )
        return len(data) < width // 2 and _SAME_EVERYWHERE.fullmatch(data) is not None
    if type(data) is list:
        return all(_alike(item, literal, width) for item in data)
    if type(data) is dict:
        return all(
            type(key) is str
            and 0 < len(key) < _SIMPLE_KEY
            and "\n" not in key
            and _alike(key, literal, width)
            and _alike(value, literal, width)
            for key, value in data.items()
        )
    return False
