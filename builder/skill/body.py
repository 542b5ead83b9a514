"""Markdown body of SKILL.md: headings, recognised sections, list items.

Only ATX headings (``#`` to ``######``, up to three spaces of indent) count;
anything inside a fenced code block (a line starting with ``` or ~~~ at any
indent, closed by the same fence character at least as long) is never a
heading or a list item. Setext headings (underlined with ``===``) are not
recognised: skills in the wild use ``#`` headings, and ``---`` under a line
is more often a rule than a heading.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from builder.pipeline.patterns import on_first_use
from builder.skill.model import Section

__all__ = [
    "SECTION_SYNONYMS",
    "Heading",
    "ListItem",
    "atx_heading",
    "code_fences",
    "code_mask",
    "find_sections",
    "heading_words",
    "headings",
    "list_items",
    "section_key",
    "split_name",
    "subsections",
]

#: Hyphen, en dash and em dash: a spaced one starts a heading's qualifier.
_DASHES = "-\u2013\u2014"

#: Heading texts (normalised, see :func:`section_key`) that mark each canonical section.
SECTION_SYNONYMS: Mapping[str, tuple[str, ...]] = {
    "methodology": ("methodology", "method", "process", "approach", "how it works"),
    "output_template": ("output template", "output format", "deliverable", "deliverables"),
    "quality_criteria": ("quality criteria", "quality checks", "quality check", "success criteria"),
    "behavioral_rules": ("behavioral rules", "behavioural rules", "rules", "guidelines"),
    "perspectives": ("perspectives", "sub-agents", "sub agents", "subagents", "hats", "roles"),
    "phases": ("phases", "steps", "stages", "workflow"),
    "examples": ("examples", "example"),
}
_LOOKUP = {synonym: key for key, synonyms in SECTION_SYNONYMS.items() for synonym in synonyms}

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_ITEM = on_first_use(r"^([ \t]*)(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$")
_RULE = on_first_use(r"^[ \t]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*[.)]?|[ivx]+[.)])\s+")
_BOLD_NAME = on_first_use(r"^(\*\*|__)(.+?)\1\s*[:\-–—]?\s*(.*)$")
_PLAIN_NAME = on_first_use(r"^([^:]{1,80}?)(?::|\s[-–—]\s)\s*(.+)$")


@dataclass(frozen=True)
class Heading:
    """An ATX heading of the body."""

    index: int
    """0-based line index in the text it was found in."""
    level: int
    """Number of ``#`` marks."""
    text: str
    """Heading text without marks and closing ``#``s."""


@dataclass(frozen=True)
class ListItem:
    """A top-level list item, with its continuation lines."""

    index: int
    """0-based line index of the item's first line."""
    text: str
    """The item's text: first line after the marker, then continuation lines, each stripped."""


def _fence_states(lines: list[str]) -> list[tuple[bool, str | None]]:
    """Per line: (inside or delimiting a fenced code block, the info string if it opens one)."""
    states: list[tuple[bool, str | None]] = []
    fence = ""
    for line in lines:
        match = _FENCE.match(line.rstrip("\r"))
        if fence:
            states.append((True, None))
            if (
                match
                and match.group(1)[0] == fence[0]
                and len(match.group(1)) >= len(fence)
                and not match.group(2).strip()
            ):
                fence = ""
        elif match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
            states.append((True, match.group(2).strip()))
        else:
            states.append((False, None))
    return states


def code_mask(lines: list[str]) -> list[bool]:
    """True for lines inside (or delimiting) a fenced code block."""
    return [inside for inside, _ in _fence_states(lines)]


def code_fences(lines: list[str]) -> tuple[tuple[int, str], ...]:
    """(0-based line index, info string) of each fenced code block's opening line."""
    return tuple(
        (index, info) for index, (_, info) in enumerate(_fence_states(lines)) if info is not None
    )


def headings(lines: list[str]) -> tuple[Heading, ...]:
    """Every ATX heading outside fenced code."""
    found = []
    for index, (line, in_code) in enumerate(zip(lines, code_mask(lines), strict=True)):
        parsed = None if in_code else atx_heading(line.rstrip("\r"))
        if parsed:
            found.append(Heading(index, parsed[0], parsed[1]))
    return tuple(found)


def atx_heading(line: str) -> tuple[int, str] | None:
    """``(level, text)`` of an ATX heading line (``## Text ##``), else None.

    Hand-written rather than a regular expression: skill text is untrusted, and
    the backtracking pattern this replaces took quadratic time on runs of spaces.
    """
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return None
    rest = stripped.lstrip("#")
    level = len(stripped) - len(rest)
    if not 1 <= level <= 6 or (rest and rest[0] not in " \t"):
        return None
    text = rest.strip(" \t")
    core = text.rstrip("#")
    if core != text and (not core or core[-1] in " \t"):  # a closing sequence: `## Text ##`
        text = core.rstrip(" \t")
    return level, text.strip()


def _without_qualifier(text: str) -> str:
    """``text`` up to its first ``:``, ``(`` or spaced dash ("Methodology - 4 pillars")."""
    for index, char in enumerate(text):
        if char in ":(":
            return text[:index].rstrip()
        if (
            char in _DASHES
            and 0 < index < len(text) - 1
            and text[index - 1].isspace()
            and text[index + 1].isspace()
        ):
            return text[: index - 1].rstrip()
    return text


def heading_words(heading: str) -> str:
    """A heading as section names are matched: lower case, without emphasis marks, leading
    numbering or symbols, a leading "the"/"our", or a qualifier after ``:``, `` - `` or ``(``
    ("Methodology: 4 pillars" is ``methodology``)."""
    text = re.sub(r"[*_`]", "", heading).strip().lower()
    text = re.sub(r"^[^a-z0-9]+", "", _NUMBERING.sub("", text))
    text = _without_qualifier(text)
    return re.sub(r"^(?:the|our)\s+", "", " ".join(text.split()))


def section_key(heading: str) -> str | None:
    """The canonical section key of a heading (see :func:`heading_words`), or None."""
    return _LOOKUP.get(heading_words(heading))


def _trimmed(lines: list[str]) -> str:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


def _extent(heads: tuple[Heading, ...], position: int, total: int) -> int:
    """Index of the line that ends the part under ``heads[position]``."""
    level = heads[position].level
    return next((h.index for h in heads[position + 1 :] if h.level <= level), total)


def find_sections(body: str, body_line: int) -> tuple[Section, ...]:
    """Recognised sections in document order; nested ones are reported too, and each keeps its
    subsections verbatim."""
    lines = body.split("\n")
    heads = headings(lines)
    found = []
    for position, head in enumerate(heads):
        key = section_key(head.text)
        if key is None:
            continue
        end = _extent(heads, position, len(lines))
        text = _trimmed(lines[head.index + 1 : end])
        found.append(
            Section(
                key=key, heading=head.text, level=head.level, line=body_line + head.index, text=text
            )
        )
    return tuple(found)


def subsections(text: str) -> tuple[tuple[Heading, str], ...]:
    """The top-level headings inside a section's text, each with its own text (trimmed,
    verbatim)."""
    lines = text.split("\n")
    heads = headings(lines)
    if not heads:
        return ()
    top = min(h.level for h in heads)
    parts = []
    for position, head in enumerate(heads):
        if head.level == top:
            end = _extent(heads, position, len(lines))
            parts.append((head, _trimmed(lines[head.index + 1 : end])))
    return tuple(parts)


def list_items(text: str) -> tuple[ListItem, ...]:
    """Top-level list items (``-``, ``*``, ``+``, ``1.``) outside code; deeper lines continue the
    item."""
    lines = text.split("\n")
    mask = code_mask(lines)
    items: list[ListItem] = []
    current: list[str] = []
    start, base = 0, -1
    pending_blank = False

    def close() -> None:
        if current:
            items.append(ListItem(start, "\n".join(current)))
            current.clear()

    for index, raw in enumerate(lines):
        line = raw.rstrip("\r").rstrip()
        indent = len(line) - len(line.lstrip())
        match = None if mask[index] or _RULE().match(line) else _ITEM().match(line)
        if match and (base < 0 or indent <= base + 1) and match.group(2):
            close()
            start, base, pending_blank = index, indent, False
            current.append(match.group(2).strip())
        elif not line:
            pending_blank = bool(current)
        elif current and not atx_heading(line) and (indent > base or not pending_blank):
            current.append(line.strip())
            pending_blank = False
        else:
            close()
            pending_blank = False
    close()
    return tuple(items)


def split_name(text: str) -> tuple[str, str]:
    """Split an item into (name, rest).

    The name is the bold lead ("**Name**: what it does"), else the part of the
    first line before ``:`` or `` - `` ("Name - what it does"), else the whole
    first line; the rest is what follows, continuation lines included.
    """
    first, _, more = text.partition("\n")
    name, rest = first, ""
    bold = _BOLD_NAME().match(first)
    plain = _PLAIN_NAME().match(first)
    if bold:
        name, rest = bold.group(2).strip().rstrip(":").strip(), bold.group(3).strip()
    elif plain:
        name, rest = plain.group(1).strip(), plain.group(2).strip()
    return name, "\n".join(part for part in (rest, more) if part)
