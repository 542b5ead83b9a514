"""Triggers inferred from a standard skill's own words, for skills that declare none.

A skill written to the Agent Skills standard says when to use it in prose
(``description: Use when …``), sometimes in a host's extra field (Claude Code's
``when_to_use``) or in tags. Phase 1 turns those into triggers with
:func:`mindrian.routing.extract_terms`, the same function free-text selection
applies to a user's sentence, so an inferred trigger is spelled the way a
sentence that mentions it is read. Explicit ``triggers`` always win; this runs
only without them. Sources, in the order their terms are taken:

1. the words of ``name`` (``test-driven-development`` gives ``test``, ``driven``, ``development``);
2. ``tags``, ``keywords``, ``metadata.tags`` and ``metadata.keywords`` (a list or one string);
3. ``when_to_use``;
4. in ``description``: quoted phrases, then the text after each cue (``use when``,
   ``use this skill whenever``, ``triggers include``, ``when the user asks``, ``relevant for``…)
   up to the end of its sentence, then the rest of the description.

Words that describe invoking a skill rather than its subject (``skill``, ``user``,
``claude``, ``request``…) are dropped, as are repeats; at most
:data:`TRIGGER_LIMIT` triggers are kept. Each records the field and the line it
came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from builder.skill.model import InferredValue
from mindrian.routing import extract_terms

__all__ = ["INVOCATION_WORDS", "TRIGGER_LIMIT", "infer_triggers"]

#: Most triggers inferred for one skill: enough to name its subject, few enough to stay specific.
TRIGGER_LIMIT = 12

#: Words about invoking a skill, not about what it is for; they would select every skill alike.
INVOCATION_WORDS: frozenset[str] = frozenset(
    """
    skill user claude codex agent assistant llm ai model request ask asked mention mentioned
    need needed help helps provide provided task thing something anything everything way kind
    sort any whenever trigger include including using used
    """.split()
)

_CUES = re.compile(
    r"\b(?:use(?:\s+(?:this|it|this\s+skill))?\s+(?:when(?:ever)?|for|if|to|any\s+time)"
    r"|triggers?(?:\s+(?:include|on|when))?\s*:?"
    r"|when\s+(?:the\s+)?users?\s+(?:asks?|wants?|requests?|needs?|says?|mentions?)"
    r"|relevant\s+(?:for|when)"
    r"|should\s+be\s+used\s+when)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n\s*\n")
_QUOTED = re.compile(r"(?<!\w)[\"'\u2018\u201c]([^\"'\u2019\u201d\n]{2,60})[\"'\u2019\u201d](?!\w)")


def infer_triggers(
    data: Mapping[str, Any], line_of: Callable[[tuple[str, ...]], int]
) -> tuple[InferredValue, ...]:
    """Triggers from ``name``, tags, ``when_to_use`` and ``description``; see the module docstring.

    ``data`` is the front matter as plain data; ``line_of`` gives the line of a key path.
    """
    found: dict[str, InferredValue] = {}
    for key_path, text in _texts(data):
        for term in extract_terms(text, limit=64):
            if term not in INVOCATION_WORDS and term not in found:
                found[term] = InferredValue(term, ".".join(key_path), line_of(key_path))
            if len(found) == TRIGGER_LIMIT:
                return tuple(found.values())
    return tuple(found.values())


def _texts(data: Mapping[str, Any]) -> Iterable[tuple[tuple[str, ...], str]]:
    """(key path, text) pairs in the order their terms are taken."""
    name = data.get("name")
    if isinstance(name, str):
        yield ("name",), name.replace("-", " ").replace("_", " ")
    given = data.get("metadata")
    metadata: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    for key_path, value in (
        (("tags",), data.get("tags")),
        (("keywords",), data.get("keywords")),
        (("metadata", "tags"), metadata.get("tags")),
        (("metadata", "keywords"), metadata.get("keywords")),
    ):
        for item in _strings(value):
            yield key_path, item
    when = data.get("when_to_use")
    if isinstance(when, str):
        yield ("when_to_use",), when
    description = data.get("description")
    if isinstance(description, str):
        for text in _description_parts(description):
            yield ("description",), text


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split(","))
    if isinstance(value, list):
        return tuple(item for item in value if isinstance(item, str))
    return ()


def _description_parts(text: str) -> tuple[str, ...]:
    """Quoted phrases, then the clause after each cue, then the whole text (up to the cap)."""
    quoted = [m.group(1) for m in _QUOTED.finditer(text)]
    clauses = []
    for cue in _CUES.finditer(text):
        end = _SENTENCE_END.search(text, cue.end())
        clauses.append(text[cue.end() : end.start() if end else len(text)])
    return (*quoted, *clauses, text)
