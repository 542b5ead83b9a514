"""Text for a terminal: what a skill wrote can neither drive the terminal nor fake a line.

Skill text reaches human-readable output (error lines, warnings, ``explain``,
``select``, the system prompts). A raw CR rewrites the line, an LF or U+2028
starts a line that looks like the builder's own (``[7/7] registration … ok``),
and ESC sequences drive the terminal. Every human line the commands print goes
through :func:`terminal_line`, and every multi-line document through
:func:`terminal_text`. A module of its own, free of imports, so printing a
line never loads the pipeline.
"""

from __future__ import annotations

__all__ = ["CONTINUATION", "terminal_line", "terminal_safe", "terminal_text"]

#: What begins each further line of a multi-line message.
CONTINUATION = "    "


def terminal_safe(text: str) -> str:
    """``text`` for a terminal: every non-printable character (CR, LF, ESC, U+2028...) escaped."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def terminal_line(text: str) -> str:
    """A message as printed: control characters escaped, and any line after the first indented.

    Some messages span lines on purpose (a failing test's output); indenting the
    rest keeps whatever they quote from beginning a line of its own.
    """
    first, *rest = text.split("\n")
    return "\n".join([terminal_safe(first), *(CONTINUATION + terminal_safe(r) for r in rest)])


def terminal_text(text: str) -> str:
    """A document (a diff, the system prompts): its line breaks and tabs kept, every other
    control character escaped."""
    return "\n".join(
        "\t".join(terminal_safe(cell) for cell in line.split("\t")) for line in text.split("\n")
    )
