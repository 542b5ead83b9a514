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

import yaml
from yaml.emitter import ScalarAnalysis

__all__ = ["SafeDumper"]

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
