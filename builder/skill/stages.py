"""A stage sequence written as prose in one SKILL.md: a numbered list of stages, a section each.

The Mindrian author writes a staged method either as a chain folder
(:mod:`builder.skill.chain`) or inside one file, as a "Stage Sequence" list
naming the stages followed by a section per stage. Many more skills number the
steps of one method ("1. Read the error", "2. Reproduce it") without meaning
separate stages, so the rule asks for two independent signs before it infers a
pipeline, and infers nothing when either is missing or ambiguous:

1. **A list that says it is a stage sequence.** A heading named for stages —
   "Stage Sequence", "Stage Order", "Phase Sequence", "Stages", "Phases",
   "Pipeline", "Pipeline Stages", "The Five Stages" (case, emphasis, leading
   numbering and a ``:``/``(``/`` - `` qualifier ignored) — whose own text (before
   any subheading) is a numbered list of at least two items and nothing but
   numbered items. "Steps", "Workflow" and "Process" do not count: they are the
   words of one method's steps.
2. **One section per listed stage.** For each item, in order, exactly one
   heading elsewhere in the body names that stage ("Stage 2: Abstract",
   "Phase 2 - abstract", "2. Abstract", "Abstract", or "Stage 2" alone); a
   number in the heading must be the stage's place in the list. The matched
   headings share one level, follow the list's order and each has text.

Each stage becomes one step: its name as listed, its instructions its section's
text verbatim, its line where that text starts. The body itself still reaches
the prompt whole; the steps only add the pipeline's phases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from builder.pipeline.patterns import on_first_use
from builder.skill.body import Heading, heading_words, headings, list_items
from builder.skill.model import StageList, StepSpec

__all__ = [
    "ListedStages",
    "StageSequence",
    "find_stage_sequence",
    "listed_stages",
    "same_stage",
]

_COUNT = r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
#: Normalised headings of a stage list (see :func:`builder.skill.body.heading_words`).
_LIST_HEADING = re.compile(
    rf"(?:{_COUNT}\s+)?(?:pipeline\s+)?(?:stages|phases)"
    r"|(?:stage|phase)\s+(?:sequence|order|overview)"
    r"|pipeline(?:\s+(?:sequence|overview))?"
)
_NUMBERED = on_first_use(r"^[ \t]{0,3}\d{1,9}[.)][ \t]")
#: "Stage 2", "Phase 2", "Step 2" or "2" at a heading's start, and what separates it from a name.
_HEADING_NUMBER = on_first_use(
    r"^(?:(?:stage|phase|step)\s+)?(\d{1,9})(?:\s*[:.)\-\u2013\u2014]\s*|\s+|$)"
)
_BOLD_LEAD = on_first_use(r"^(\*\*|__)(.+?)\1")
#: Where a listed stage's name ends: a colon, a spaced dash or arrow, or an opening parenthesis.
_NAME_END = on_first_use(r":|\s(?:--|-|\u2013|\u2014|->|\u2192)\s|\s?\(")


@dataclass(frozen=True)
class StageSequence:
    """Steps inferred from a stage list and the section each stage has."""

    steps: tuple[StepSpec, ...]
    """One step per listed stage, in the list's order."""
    listed: StageList
    """The list's heading and line."""
    decision: str
    """The sentence ``explain`` shows: the list, and the section found for each stage."""


@dataclass(frozen=True)
class ListedStages:
    """A stage list as written: its heading and the stages it names."""

    listed: StageList
    """The list's heading and line."""
    names: tuple[tuple[str, int], ...]
    """Each listed stage's name and the 1-based line of its item, in the list's order."""


def _comparable(text: str) -> str:
    """``text`` as names are compared: no emphasis, lower case, dashes and underscores as
    spaces, single spaces, no punctuation at the ends."""
    text = re.sub(r"[*`]", "", text).replace("_", " ").replace("-", " ").lower()
    return " ".join(text.split()).strip(" .:;,!?")


def _listed_name(item: str) -> str:
    """The stage an item names: its bold lead, else its first line up to a colon, spaced dash,
    arrow or parenthesis."""
    first = item.split("\n", 1)[0].strip()
    bold = _BOLD_LEAD().match(first)
    if bold:
        return bold.group(2).strip().rstrip(":").strip()
    end = _NAME_END().search(first)
    return (first[: end.start()] if end else first).strip()


def _heading_stage(text: str) -> tuple[int | None, str]:
    """(number, name) a heading gives a stage: "Stage 2: Abstract" is (2, "abstract")."""
    # A closing parenthesis qualifies the name ("Search (dual-mode)"), as in the list.
    plain = _comparable(re.sub(r"\s*\([^()]*\)\s*$", "", text))
    number = _HEADING_NUMBER().match(plain)
    if number is None:
        return None, plain
    return int(number.group(1)), _comparable(plain[number.end() :])


def _matches(head: Heading, place: int, name: str) -> bool:
    number, named = _heading_stage(head.text)
    if number is not None and number != place:
        return False
    # "Stage 2" alone is the second stage's section; any name it gives must be the stage's.
    return named == _comparable(name) or (not named and number is not None)


def _section_text(lines: list[str], heads: tuple[Heading, ...], position: int) -> tuple[str, int]:
    """(trimmed text under ``heads[position]``, index of its first line)."""
    head = heads[position]
    end = next((h.index for h in heads[position + 1 :] if h.level <= head.level), len(lines))
    start = head.index + 1
    while start < end and not lines[start].strip():
        start += 1
    stop = end
    while stop > start and not lines[stop - 1].strip():
        stop -= 1
    return "\n".join(lines[start:stop]), start


def _stage_list(
    lines: list[str], heads: tuple[Heading, ...]
) -> tuple[int, list[tuple[str, int]]] | None:
    """(position in ``heads`` of the stage list's heading, each listed name with the 0-based
    index of its line), if there is a stage list."""
    for position, head in enumerate(heads):
        if not _LIST_HEADING.fullmatch(heading_words(head.text)):
            continue
        following = heads[position + 1] if position + 1 < len(heads) else None
        own = lines[head.index + 1 : following.index if following else len(lines)]
        items = list_items("\n".join(own))
        numbered = all(_NUMBERED().match(own[item.index]) for item in items)
        names = [(_listed_name(item.text), head.index + 1 + item.index) for item in items]
        if len(items) >= 2 and numbered and all(name for name, _ in names):
            return position, names
    return None


def listed_stages(body: str, body_line: int) -> ListedStages | None:
    """The body's stage list (a numbered list under a heading named for stages), if it has one."""
    lines = body.split("\n")
    heads = headings(lines)
    found = _stage_list(lines, heads)
    if found is None:
        return None
    position, names = found
    head = heads[position]
    return ListedStages(
        StageList(heading=head.text, line=body_line + head.index),
        tuple((name, body_line + index) for name, index in names),
    )


def same_stage(listed: str, named: str) -> bool:
    """Whether a listed stage and a stage's name (a file's, ``explore-domains``) are one."""
    return _comparable(listed) == _comparable(named)


def find_stage_sequence(body: str, body_line: int) -> StageSequence | None:
    """The pipeline a body's stage list and stage sections describe, or None (see the module)."""
    lines = body.split("\n")
    heads = headings(lines)
    found = _stage_list(lines, heads)
    if found is None:
        return None
    list_position, listed = found
    names = [name for name, _ in listed]
    if len({_comparable(n) for n in names}) != len(names):
        return None
    chosen: list[int] = []
    for place, name in enumerate(names, start=1):
        candidates = [
            p for p, h in enumerate(heads) if p != list_position and _matches(h, place, name)
        ]
        if len(candidates) != 1:
            return None
        chosen.append(candidates[0])
    if chosen != sorted(chosen) or len({heads[p].level for p in chosen}) != 1:
        return None
    steps = []
    for name, position in zip(names, chosen, strict=True):
        text, start = _section_text(lines, heads, position)
        if not text:
            return None
        steps.append(StepSpec(name=name, instructions=text, line=body_line + start))
    heading = heads[list_position]
    where = StageList(heading=heading.text, line=body_line + heading.index)
    sections = ", ".join(f"{heads[p].text!r} (line {body_line + heads[p].index})" for p in chosen)
    decision = (
        f"{len(steps)} steps from the numbered stage list under {heading.text!r} (line "
        f"{where.line}), each stage with a section of its own: {sections}"
    )
    return StageSequence(tuple(steps), where, decision)
