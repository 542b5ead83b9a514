"""What a generated package's tests check the model is told, read straight from SKILL.md.

The items are taken from the skill's own bytes, not from the AgentSpec phases
2-5 built, so a builder that drops or rewrites part of the skill cannot also
drop the check: the description, the tone, every front-matter rule, and every
body line that carries words (rules, sections, output template, quality
criteria). Each part's own instructions (perspectives, phases, steps) are
collected when the front matter states them (a chain's stage files: each body),
and so are the score ranges the schema sent to the model must declare. JSON
examples of the body are collected too, for the output-schema check of phase 6.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from builder.skill.lenient_yaml import load_leniently
from builder.skill.shorthands import ShorthandConflict, expanded, find_shorthands

__all__ = ["PromptItems", "prompt_items"]

#: Front-matter keys whose entries are the parts of a multi-part agent.
_PART_KEYS = ("sub_agents", "phases", "steps")


@dataclass(frozen=True)
class PromptItems:
    """The skill's text that must reach the model."""

    skill: tuple[str, ...]
    """Items every model acting for the skill must be told, in document order, each once."""
    parts: Mapping[str, str]
    """Part name → its own instructions, as the front matter states them."""
    scores: Mapping[str, tuple[float, float]]
    """Score name → (minimum, maximum), as the front matter states them."""
    synthesizer: str = ""
    """The perspective the front matter names to write a team's synthesis ("" for none)."""


def _split(text: str) -> tuple[str, str]:
    """(front-matter YAML, body); a file phase 1 accepted has both delimiters, or none when it
    is a subagent whose front matter its text implies (then a later ``---`` is a rule)."""
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return "", text
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    return "", text


def _fields(front: Any) -> dict[str, Any]:
    """Top-level fields, with those under ``metadata.mindrian`` where the top level lacks them,
    shorthands written canonically (``title`` as ``name``)."""
    if not isinstance(front, dict):
        return {}
    try:
        front = expanded(front, find_shorthands(front))
    except ShorthandConflict:  # phase 1 refuses the skill; nothing to check
        return {}
    metadata = front.get("metadata")
    nested = metadata.get("mindrian") if isinstance(metadata, dict) else None
    merged = dict(nested) if isinstance(nested, dict) else {}
    merged.update(front)
    return merged


def _in_markdown(items: tuple[str, ...]) -> tuple[str, ...]:
    # instructions.md has LF line endings (a CR becomes LF there), so what it carries does too;
    # the description travels in spec.yaml, which keeps a CR.
    return tuple(i.replace("\r\n", "\n").replace("\r", "\n") for i in items)


def _text_items(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value.strip(),) if value.strip() else ()
    if isinstance(value, list):
        return tuple(v.strip() for v in value if isinstance(v, str) and v.strip())
    return ()


def _parts(fields: Mapping[str, Any]) -> dict[str, str]:
    parts: dict[str, str] = {}
    for key in _PART_KEYS:
        for entry in fields.get(key) or ():
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                text = entry.get("instructions") or entry.get("description") or ""
                if isinstance(text, str) and text.strip():
                    parts[entry["name"]] = text.strip()
    return parts


def _stage_parts(stages: Iterable[tuple[str, bytes]]) -> dict[str, str]:
    parts = {}
    for name, data in stages:
        # Line endings kept: the phase is told its stage body as written (spec.yaml keeps CR).
        body = _split(data.decode("utf-8-sig"))[1].strip()
        if body:
            parts[name] = body
    return parts


def _scores(fields: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    declared = fields.get("scores")
    entries = declared.get("dimensions") if isinstance(declared, dict) else declared
    ranges: dict[str, tuple[float, float]] = {}
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        low, high = entry.get("min", entry.get("minimum")), entry.get("max", entry.get("maximum"))
        if isinstance(low, (int, float)) and isinstance(high, (int, float)):
            ranges[entry["name"]] = (float(low), float(high))
    return ranges


def prompt_items(data: bytes, stages: Iterable[tuple[str, bytes]] = ()) -> PromptItems:
    """The items of a SKILL.md (its raw bytes), and of a chain's stage files: (name, raw bytes)
    of each, whose whole body is that phase's own instructions."""
    front_text, body = _split(data.decode("utf-8-sig").replace("\r\n", "\n"))
    # Read as phase 1 reads it: a plain value holding ': ' is text (warning W103 there).
    front = load_leniently(front_text, yaml.safe_load, 2)[0] if front_text.strip() else None
    fields = _fields(front)
    found: list[str] = []
    found += _text_items(fields.get("description"))
    found += _in_markdown(_text_items(fields.get("tone")))
    found += _in_markdown(_text_items(fields.get("behavioral_rules")))
    # A line of only punctuation (fences, table rules) says nothing the model could miss.
    found += [line.strip() for line in body.split("\n") if any(c.isalnum() for c in line)]
    # `mindrian fmt` keeps `synthesizer` under plain `metadata`, where phase 2 reads it.
    metadata = front.get("metadata") if isinstance(front, dict) else None
    synthesizer = fields.get("synthesizer") or (
        metadata.get("synthesizer") if isinstance(metadata, dict) else None
    )
    return PromptItems(
        skill=tuple(dict.fromkeys(found)),
        parts=_parts(fields) | _stage_parts(stages),
        scores=_scores(fields),
        synthesizer=synthesizer.strip() if isinstance(synthesizer, str) else "",
    )
