"""Phase 1, skill analysis: SKILL.md bytes in, a validated :class:`SkillDefinition` out.

Checks: ``within_limits`` (SKILL.md, its references and its folder are within the size
limits of :mod:`builder.skill.source`), ``valid_yaml`` (the file is UTF-8 text with a YAML
mapping as front matter) and ``required_fields`` (the front matter satisfies
``builder/schemas/skill.schema.json`` and the rules the schema cannot say).
Unusable input raises :class:`SkillError`; its message starts with the check's
name and its code says which rule failed:

======  ===============  ===================================================
code    check            meaning
======  ===============  ===================================================
S100    valid_yaml       the file or folder cannot be read
S101    valid_yaml       no front matter (no opening or closing ``---``)
S102    valid_yaml       YAML syntax error
S103    valid_yaml       front matter empty or not a mapping
S104    valid_yaml       alias budget, alias expansion or recursive alias
S105    valid_yaml       not UTF-8 (the message gives the byte offset)
S106    valid_yaml       NUL byte
S107    within_limits    SKILL.md larger than 1 MiB
S108    within_limits    references/ + scripts/ over the file or byte limit
S109    valid_yaml       duplicate key
S110    valid_yaml       unsupported YAML tag
S111    valid_yaml       nesting too deep
S112    valid_yaml       a folder file links outside the skill folder
S113    within_limits    a references/*.md file larger than 1 MiB
S201    required_fields  a required field is missing
S202    required_fields  a value breaks the schema (wrong type, unknown key, range)
S203    required_fields  a name or id cannot be normalised (path separators, ``..``, nothing left)
S204    required_fields  unknown agent type (the message lists the five)
S205    required_fields  two spellings of one field at the same level (``chains_to`` + ``chaining``,
                         or an item's ``title`` and ``name`` with different values)
S206    required_fields  inconsistent scores (min above max, overlapping bands)
S207    required_fields  duplicate names (steps, sub-agents, scores, chain targets, references)
======  ===============  ===================================================

Warnings with a code (located, compiler style):

======  ===================================================================
W101    ``type`` is not a Mindrian type nor a near-miss of one (``fuzzer``):
        kept as ``metadata.type``, the type is inferred
W102    ``model`` has no ``provider:`` (Claude Code's ``sonnet``, ``inherit``):
        kept as ``metadata.model``, the configured default is used
W103    a plain value holds ``': '``, which strict YAML refuses: read as text
        (quote it, or run ``mindrian fmt``)
W104    a standard field has a shape the Agent Skills standard does not define
        (``compatibility`` as a mapping): kept as metadata under its own name
W105    ``description`` is longer than the Agent Skills limit (1,024 characters)
W120    an ``agents/*.md`` without front matter: named by its file, described by
        its first paragraph (:mod:`builder.skill.subagent`)
W121    a chain's stage list disagrees with its stage files (:mod:`builder.skill.chain`)
W123    an unknown front-matter key: kept as metadata (with "did you mean" when close)
W124    a Mindrian field at the top level and under ``metadata``: the top level wins
W125    the score bands do not cover every total the dimensions add up to
W106    (from :mod:`builder.skill.portability`) ``name`` differs from the skill's folder
W107    (from :mod:`builder.skill.portability`) ``name`` is not an Agent Skills name
======  ===================================================================

A ``type`` within edit distance 2 of a Mindrian type (``operater``) is a typo,
not a foreign taxonomy: it stays error S204, with "did you mean".

Without explicit ``triggers``, triggers are inferred from the skill's own words
(:mod:`builder.skill.triggers`) and each records its field and line.

Shorthands (:mod:`builder.skill.shorthands`: ``title`` for an item's ``name``, one
text for a one-item list) are rewritten to the canonical form before validation;
each rewrite is a decision naming the line it came from, and keys keep their lines.

Mindrian fields may be written at the top level or under ``metadata.mindrian``;
when both set a field the top level wins and a warning names both lines.
Sections of the body complete what the front matter leaves out: steps from a
phases section, sub-agents from a perspectives section, and rules from a
behavioural-rules section (appended after the front-matter rules).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
from collections.abc import Iterable, Sequence
from itertools import pairwise
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from builder.phases import phase_number
from builder.phases.outputs import Inputs, Outputs
from builder.pipeline.contract import CheckResult, PhaseHooks, PhaseResult, SkillSource
from builder.pipeline.errors import SkillError, SourceLocation
from builder.schemas.quick_check import surely_valid
from builder.skill.body import find_sections, headings, list_items, split_name, subsections
from builder.skill.chain_layout import CHAIN_KEYS, is_chain
from builder.skill.frontmatter import FrontMatter, KeyPath, decode_skill, parse_front_matter
from builder.skill.model import (
    AGENT_TYPES,
    MAX_ID_LENGTH,
    AgentType,
    ChainTarget,
    CustomToolRequest,
    FieldSpec,
    GlobalActionRequest,
    HandoffRequest,
    HostToolRequest,
    InferredValue,
    McpServerRequest,
    Reference,
    ScoreBand,
    ScoreDimension,
    ScriptFile,
    Section,
    SkillDefinition,
    StageList,
    StepSpec,
    SubAgentSpec,
    is_agent_type,
    python_identifier,
    shadowed_module,
    skill_id,
)
from builder.skill.portability import portability_warnings
from builder.skill.shorthands import Shorthand, ShorthandConflict, expanded, find_shorthands
from builder.skill.source import (
    LIMITS_CHECK,
    MAX_COPIED_BYTES,
    MAX_COPIED_FILE_BYTES,
    MAX_REFERENCE_BYTES,
    MAX_SKILL_BYTES,
)
from builder.skill.stages import find_stage_sequence
from builder.skill.subagent import implied_front_matter, is_subagent_note
from mindrian.agent_types import record_of

__all__ = [
    "MINDRIAN_KEYS",
    "NESTED_PREFIX",
    "PHASE",
    "STANDARD_KEYS",
    "TYPE_TYPO_DISTANCE",
    "SkillAnalysisPhase",
    "analyse",
    "has_standard_shape",
    "skill_schema",
]

_T = TypeVar("_T")

#: Agent Skills standard front-matter keys.
STANDARD_KEYS: tuple[str, ...] = (
    "name",
    "description",
    "license",
    "allowed-tools",
    "metadata",
    "compatibility",
)
#: Mindrian keys, accepted at the top level or under ``metadata.mindrian``.
MINDRIAN_KEYS: tuple[str, ...] = (
    "id", "type", "version", "model", "tone", "triggers", "problem_types", "good_for", "inputs",
    "outputs", "chains_to", "chaining", "mcp_tools", "tools", "behavioral_rules", "handoff",
    "sub_agents", "phases", "scores",
)  # fmt: skip
#: Where nested Mindrian fields live.
NESTED_PREFIX: KeyPath = ("metadata", "mindrian")
#: Agent Skills' documented limit on ``description``; longer ones still build but get a warning.
DESCRIPTION_LIMIT = 1024
#: A ``type`` this close (edit distance) to a Mindrian type is a typo, not a foreign taxonomy.
TYPE_TYPO_DISTANCE = 2

_SCRIPT_LANGUAGES = {
    ".py": "python",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
}
_JSON_TYPES = {
    "string": "text",
    "array": "a list",
    "object": "a mapping",
    "number": "a number",
    "integer": "a whole number",
    "boolean": "true or false",
    "null": "nothing",
}


@functools.cache
def skill_schema() -> dict[str, Any]:
    """The front-matter JSON Schema (``builder/schemas/skill.schema.json``)."""
    # Read beside this package rather than through importlib.resources, whose import costs
    # more than the quick check it feeds (mindrian validate of one skill).
    text = (
        Path(__file__).parents[1].joinpath("schemas/skill.schema.json").read_text(encoding="utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _validator() -> Any:
    # jsonschema is the slowest import of phase 1 (~50 ms); load and compile it once, on first use.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(skill_schema())


class _Doc:
    """Front matter plus what is needed to locate and report problems in it."""

    def __init__(self, fm: FrontMatter, path: str) -> None:
        self.fm = fm
        self.path = path
        self.warnings: list[str] = []
        self.decisions: list[str] = []
        self.foreign: dict[str, Any] = {}

    def location(self, key_path: Iterable[str | int]) -> SourceLocation:
        """Where the longest known prefix of ``key_path`` is; the opening ``---`` for the root."""
        parts = tuple(key_path)
        while parts and parts not in self.fm.positions:
            parts = parts[:-1]
        line, column = self.fm.positions.get(parts, (self.fm.open_line, 1))
        return SourceLocation(self.path, line, column)

    def line(self, key_path: KeyPath) -> int:
        return self.location(key_path).line

    def warn(self, code: str, key_path: Iterable[str | int], message: str) -> None:
        """Record a coded warning, located like an error (``PATH:LINE:COL: warning[W101]: …``)."""
        self.warn_at(code, self.location(key_path), message)

    def warn_at(self, code: str, location: SourceLocation, message: str) -> None:
        self.warnings.append(f"{location}: warning[{code}]: {message}")

    def fail(self, code: str, key_path: Iterable[str | int], message: str) -> SkillError:
        return SkillError(
            f"required_fields: {message}", location=self.location(key_path), code=code
        )

    def lookup(self, key_path: KeyPath) -> Any:
        value: Any = self.fm.data
        for part in key_path:
            if isinstance(part, int):
                if not isinstance(value, list) or part >= len(value):
                    return None
            elif not isinstance(value, dict) or part not in value:
                return None
            value = value[part]
        return value

    def has(self, key_path: KeyPath) -> bool:
        parent = self.lookup(key_path[:-1]) if len(key_path) > 1 else self.fm.data
        return isinstance(parent, dict) and key_path[-1] in parent

    def pick(self, *spellings: KeyPath) -> tuple[Any, KeyPath] | None:
        """The value of a Mindrian field given by any of its spellings; top level first, then
        ``metadata.mindrian``."""
        chosen: tuple[Any, KeyPath] | None = None
        for prefix in ((), NESTED_PREFIX):
            present = [(*prefix, *s) for s in spellings if self.has((*prefix, *s))]
            if len(present) > 1:
                first, second = present[0], present[1]
                raise self.fail(
                    "S205",
                    second,
                    f"{_dotted(second)} and {_dotted(first)} (line {self.line(first)}) say the "
                    "same thing; keep one",
                )
            if present and chosen is None:
                chosen = (self.lookup(present[0]), present[0])
            elif present and chosen is not None:
                self.warn(
                    "W124",
                    present[0],
                    f"{_dotted(present[0])} is ignored: {_dotted(chosen[1])} (line "
                    f"{self.line(chosen[1])}) is set at the top level and wins",
                )
        return chosen


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` naming the choice closest to ``word``, if one is close."""
    import difflib  # only a refusal or a warning pays for it

    hint = difflib.get_close_matches(word, choices, n=1, cutoff=0.8)
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def _dotted(key_path: Iterable[str | int]) -> str:
    return ".".join(str(p) for p in key_path) or "front matter"


# --- shorthands ------------------------------------------------------------------------------


def _expand_shorthands(doc: _Doc) -> None:
    """Replace ``doc.fm`` by its canonical form; each shorthand becomes a decision."""
    try:
        shorthands = find_shorthands(doc.fm.data)
    except ShorthandConflict as conflict:
        raise doc.fail(
            "S205",
            conflict.written,
            f"{_dotted(conflict.written)} and {_dotted(conflict.other)} (line "
            f"{doc.line(conflict.other)}) give different values; keep one",
        ) from None
    positions, raw = dict(doc.fm.positions), dict(doc.fm.raw)
    for shorthand in shorthands:
        doc.decisions.append(_shorthand_decision(doc, shorthand))
        if shorthand.wraps:
            positions[shorthand.canonical] = positions[shorthand.written]
        elif shorthand.nests:
            positions = _moved(positions, shorthand.written, shorthand.canonical)
            positions[shorthand.written] = positions[shorthand.canonical]
            positions.update(
                {(*p, "name"): v for p, v in positions.items() if _is_score_name(doc, p)}
            )
            raw = _moved(raw, shorthand.written, shorthand.canonical)
        elif shorthand.dropped:
            positions, raw = (
                _dropped(positions, shorthand.written),
                _dropped(raw, shorthand.written),
            )
        else:
            positions = _moved(positions, shorthand.written, shorthand.canonical)
            raw = _moved(raw, shorthand.written, shorthand.canonical)
    if shorthands:
        data = expanded(doc.fm.data, shorthands)
        doc.fm = dataclasses.replace(doc.fm, data=data, positions=positions, raw=raw)


def _is_score_name(doc: _Doc, key_path: KeyPath) -> bool:
    """A bare score name, by its path in canonical form (``scores.dimensions.0``)."""
    if len(key_path) < 2 or key_path[-2] != "dimensions" or not isinstance(key_path[-1], int):
        return False
    written = doc.lookup((*key_path[:-2], key_path[-1]))
    return isinstance(written, str)


def _shorthand_decision(doc: _Doc, shorthand: Shorthand) -> str:
    written, canonical = _dotted(shorthand.written), _dotted(shorthand.canonical)
    line = doc.line(shorthand.written)
    if shorthand.wraps:
        return f"{written} (line {line}) is one text, read as a one-item list"
    if shorthand.nests:
        return (
            f"{written} (line {line}) is a list, read as {canonical}; a bare name is a score "
            "with the default range, 0 to 1"
        )
    if shorthand.keyed:
        title = doc.lookup(shorthand.canonical) or doc.lookup((*shorthand.written[:-1], "title"))
        return (
            f"{written} (line {line}) {doc.lookup(shorthand.written)!r} is the item's key and "
            f"its name {title!r} its title: later phases use the title"
        )
    if shorthand.redundant:
        return f"{written} (line {line}) repeats {canonical}'s value and is dropped"
    return f"{written} (line {line}) is read as {canonical}"


def _moved(table: dict[KeyPath, _T], old: KeyPath, new: KeyPath) -> dict[KeyPath, _T]:
    """``table`` with the paths under ``old`` moved under ``new``."""
    size = len(old)
    return {(new + p[size:] if p[:size] == old else p): v for p, v in table.items()}


def _dropped(table: dict[KeyPath, _T], old: KeyPath) -> dict[KeyPath, _T]:
    return {p: v for p, v in table.items() if p[: len(old)] != old}


# --- what strict YAML or the standard would refuse ------------------------------------------

#: Standard fields the schema gives one shape, and that shape in words; anything else a host
#: may accept is kept as metadata (W104) instead of refusing the skill.
_STANDARD_SHAPES: tuple[tuple[str, str], ...] = (
    ("license", "text"),
    ("compatibility", "text"),
    ("allowed-tools", "text, or a list of texts"),
)


def _lenient_notes(doc: _Doc) -> None:
    """Warn about values read leniently; keep odd-shaped standard fields as metadata."""
    for quoted in doc.fm.quoted:
        doc.warn_at(
            "W103",
            SourceLocation(doc.path, quoted.line, quoted.column),
            f"{quoted.key}: the value holds ': ' unquoted, which strict YAML refuses; it is read "
            f'as text. Quote it ({quoted.key}: "…") or run mindrian fmt',
        )
    for key, shape in _STANDARD_SHAPES:
        value = doc.fm.data.get(key)
        if value is None or has_standard_shape(key, value):
            continue
        doc.foreign[key] = value
        doc.warn(
            "W104",
            (key,),
            f"{key} is {_shape_found(doc, key, value)}; the Agent Skills standard defines it "
            f"as {shape}, so it is kept as metadata.{key} and not used",
        )
        doc.fm = dataclasses.replace(
            doc.fm, data={k: v for k, v in doc.fm.data.items() if k != key}
        )


def _shape_found(doc: _Doc, key: str, value: Any) -> str:
    """What ``value`` is; for a list, its first item that is not text and that item's line."""
    odd = (
        [i for i, item in enumerate(value) if not isinstance(item, str)]
        if isinstance(value, list)
        else []
    )
    if not odd:
        return _kind(value)
    # ``- Bash (or fallback: Read)`` is a mapping in YAML: the ': ' made it one.
    return f"a list whose item on line {doc.line((key, odd[0]))} is {_kind(value[odd[0]])}"


def has_standard_shape(key: str, value: Any) -> bool:
    """Whether a standard field's value has a shape phase 1 uses (else it is kept as metadata)."""
    if key not in dict(_STANDARD_SHAPES) or isinstance(value, str):
        return True
    return (
        key == "allowed-tools"
        and isinstance(value, list)
        and all(isinstance(item, str) for item in value)
    )


# --- schema validation ------------------------------------------------------------------------


#: Largest magnitude of a number in front matter: beyond it floats lose whole numbers,
#: and a YAML integer such as 1e400 written out in digits cannot become a float at all.
NUMBER_LIMIT = 2**53


def _non_finite(value: Any, key_path: KeyPath = ()) -> tuple[KeyPath, Any] | None:
    """The first number that is NaN, infinite or beyond :data:`NUMBER_LIMIT`, with its path."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or abs(value) > NUMBER_LIMIT):
        return key_path, value
    if isinstance(value, int) and abs(value) > NUMBER_LIMIT:
        return key_path, value
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        found = _non_finite(item, (*key_path, key))
        if found:
            return found
    return None


def _check_numbers(doc: _Doc) -> None:
    """Phase 1 accepts finite numbers of sensible size only; later phases never meet NaN or inf."""
    found = _non_finite(doc.fm.data)
    if found:
        key_path, value = found
        shown = (
            repr(value) if isinstance(value, float) else f"a {len(str(abs(value)))}-digit number"
        )
        raise doc.fail(
            "S211",
            key_path,
            f"{_dotted(key_path)}: {shown} is not a finite number of at most {NUMBER_LIMIT:.0e}",
        )


def _validate(doc: _Doc) -> None:
    # Most front matter is valid: the quick check answers without importing jsonschema, which
    # is asked only to find and word the errors (or when the quick check cannot tell).
    if surely_valid(skill_schema(), doc.fm.data):
        return
    errors = sorted(
        _validator().iter_errors(doc.fm.data),
        key=lambda e: (
            doc.location(e.absolute_path).line,
            doc.location(e.absolute_path).column,
            e.message,
        ),
    )
    if not errors:
        return
    from jsonschema.exceptions import best_match

    error = best_match([errors[0]])
    code, key_path, message = _describe(error)
    more = (
        f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
        if len(errors) > 1
        else ""
    )
    raise doc.fail(code, key_path, f"{_dotted(key_path)}: {message}{more}")


def _describe(error: Any) -> tuple[str, KeyPath, str]:
    """(code, path, message) for one jsonschema error, worded for a skill author."""
    path: KeyPath = tuple(error.absolute_path)
    value, kind, expected = error.instance, error.validator, error.validator_value
    if kind == "required":
        missing = next((k for k in expected if k not in value), expected[0])
        where = f" in {_dotted(path)}" if path else ""
        return "S201", path, f"missing required field {missing!r}{where}"
    if kind == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = next((k for k in value if k not in allowed), "")
        return (
            "S202",
            (*path, extra),
            f"unknown key {extra!r}{_did_you_mean(extra, allowed)}; allowed keys: "
            f"{', '.join(allowed)}",
        )
    if kind == "type":
        wanted = expected if isinstance(expected, list) else [expected]
        return (
            "S202",
            path,
            f"expected {' or '.join(_JSON_TYPES[t] for t in wanted)}, found {_kind(value)}",
        )
    if kind == "anyOf":
        options = [
            _JSON_TYPES.get(e.validator_value, "")
            for e in error.context
            if e.validator == "type" and not e.path
        ]
        options = [o for o in dict.fromkeys(options) if o]
        return (
            "S202",
            path,
            f"expected {' or '.join(options) or 'another form'}, found {_kind(value)}",
        )
    if kind in ("minLength", "pattern") and isinstance(value, str):
        return "S202", path, "must not be empty"
    if kind == "enum":
        return "S202", path, f"{value!r} is not one of: {', '.join(map(str, expected))}"
    if kind in ("minimum", "maximum"):
        return (
            "S202",
            path,
            f"{value} is {'below the minimum' if kind == 'minimum' else 'above the maximum'} "
            f"{expected}",
        )
    return "S202", path, error.message[:300]


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "a mapping"


# --- building the definition ------------------------------------------------------------------


def _normalised(doc: _Doc, value: str, key_path: KeyPath, what: str) -> str:
    try:
        return skill_id(value)
    except ValueError as exc:
        raise doc.fail("S203", key_path, f"{what} {value!r} {exc}") from None


def _words(value: Any) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value or []
    return tuple(item.strip() for item in items if item.strip())


def _allowed_tools(value: Any) -> tuple[str, ...]:
    """A list as is; a string split at commas, or at blanks outside parentheses.

    Parentheses keep ``Bash(git log:*)`` one entry.
    """
    if not isinstance(value, str):
        return tuple(value or ())
    parts, current, depth = [], "", 0
    separators = "," if "," in value else " \t\n"
    for char in value:
        depth += (char == "(") - (char == ")")
        if char in separators and depth <= 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return tuple(p.strip() for p in parts if p.strip())


def _type(doc: _Doc) -> AgentType | None:
    """The explicit type; None for a foreign one (kept as metadata, warned) or none at all."""
    found = doc.pick(("type",))
    if found is None:
        return None
    value, key_path = found
    normalised = value.strip().lower()
    if is_agent_type(normalised):
        return normalised
    distance, nearest = min((_edit_distance(normalised, t), t) for t in AGENT_TYPES)
    if distance <= TYPE_TYPO_DISTANCE:
        raise doc.fail(
            "S204",
            key_path,
            f"unknown type {value!r} (did you mean {nearest!r}?); "
            f"valid types are: {', '.join(AGENT_TYPES)}",
        )
    doc.foreign["type"] = value
    doc.warn(
        "W101",
        key_path,
        f"type {value!r} is not a Mindrian agent type; it is kept as metadata.type and the type is "
        f"inferred. To choose one, set metadata.mindrian.type to one of: {', '.join(AGENT_TYPES)}",
    )
    doc.decisions.append(
        f"type {value!r} (line {doc.line(key_path)}) is foreign: "
        "kept as metadata, the type is left to inference"
    )
    return None


def _model(doc: _Doc) -> str | None:
    """The explicit ``provider:model_id``; a host's alias (``sonnet``) is kept as metadata."""
    found = doc.pick(("model",))
    if found is None:
        return None
    value, key_path = found
    if ":" in value:
        return str(value)
    doc.foreign["model"] = value
    doc.warn(
        "W102",
        key_path,
        f"model {value!r} is not of the form provider:model_id (another host's alias?); it is "
        "kept as metadata.model and the type's default model is used. To choose one, set "
        "metadata.mindrian.model, e.g. anthropic:claude-sonnet-4-5",
    )
    return None


def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions)."""
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            )
        previous = current
    return previous[-1]


def _triggers(doc: _Doc) -> tuple[tuple[str, ...], tuple[InferredValue, ...]]:
    """The explicit triggers; without them, the inferred ones and their provenance."""
    found = doc.pick(("triggers",))
    if found is not None:
        return _words(found[0]), ()
    from builder.skill.triggers import infer_triggers  # its patterns only when none are given

    inferred = infer_triggers(doc.fm.data, doc.line)
    if inferred:
        sources = ", ".join(f"{t.value} ({t.field}, line {t.line})" for t in inferred)
        doc.decisions.append(f"triggers inferred (the skill sets none): {sources}")
    return tuple(t.value for t in inferred), inferred


def _version(doc: _Doc) -> str:
    found = doc.pick(("version",))
    if found is None:
        return "0.1.0"
    value, key_path = found
    # A YAML number loses its spelling (1.10 == 1.1); keep the text as written.
    return value if isinstance(value, str) else doc.fm.raw.get(key_path, str(value))


def _fields(doc: _Doc, key: str) -> tuple[FieldSpec, ...]:
    found = doc.pick((key,))
    if found is None:
        return ()
    items, key_path = found
    specs = tuple(
        FieldSpec(name=item)
        if isinstance(item, str)
        else FieldSpec(item["name"], item.get("description", ""), item.get("required", False))
        for item in items
    )
    _unique(doc, [(s.name, (*key_path, i)) for i, s in enumerate(specs)], key)
    return specs


def _chains(doc: _Doc) -> tuple[ChainTarget, ...]:
    found = doc.pick(("chains_to",), ("chaining",))
    if found is None:
        return ()
    items, key_path = found
    chains = []
    for i, item in enumerate(items):
        raw_target = item if isinstance(item, str) else item["target"]
        weight = (
            None if isinstance(item, str) or item.get("weight") is None else float(item["weight"])
        )
        target = _normalised(doc, raw_target, (*key_path, i), "chain target")
        chains.append(ChainTarget(target=target, weight=weight, line=doc.line((*key_path, i))))
    _unique(doc, [(c.target, (*key_path, i)) for i, c in enumerate(chains)], "chain target")
    return tuple(chains)


def _good_for(doc: _Doc, problem_types: tuple[str, ...]) -> dict[str, float]:
    found = doc.pick(("good_for",))
    if found is None:
        return {}
    rated, key_path = found
    for name in rated:
        if name not in problem_types:
            listed = ", ".join(problem_types) or "none"
            raise doc.fail(
                "S208",
                (*key_path, name),
                f"good_for rates {name!r}, which is not one of the problem_types ({listed})",
            )
    return {name: float(rated[name]) for name in sorted(rated)}


def _mcp_servers(doc: _Doc) -> tuple[McpServerRequest, ...]:
    found = doc.pick(("mcp_tools",), ("tools", "mcp_servers"))
    if found is None:
        return ()
    items, key_path = found
    return tuple(
        McpServerRequest(
            server=item["server"],
            tools=tuple(item.get("tools", ())),
            required=item.get("required", True),
            line=doc.line((*key_path, i)),
        )
        for i, item in enumerate(items)
    )


def _custom_tools(doc: _Doc) -> tuple[CustomToolRequest, ...]:
    found = doc.pick(("tools", "custom_tools"))
    if found is None:
        return ()
    items, key_path = found
    return tuple(
        CustomToolRequest(
            item["name"], item["function"], item.get("description", ""), doc.line((*key_path, i))
        )
        for i, item in enumerate(items)
    )


def _global_actions(doc: _Doc) -> tuple[GlobalActionRequest, ...]:
    found = doc.pick(("tools", "global_actions"))
    if found is None:
        return ()
    items, key_path = found
    return tuple(
        GlobalActionRequest(
            item["action"], item["tool"], item.get("description", ""), doc.line((*key_path, i))
        )
        for i, item in enumerate(items)
    )


def _host_tools(doc: _Doc) -> tuple[HostToolRequest, ...] | None:
    found = doc.pick(("tools", "host"))
    if found is None:
        return None
    items, key_path = found
    return tuple(HostToolRequest(item, doc.line((*key_path, i))) for i, item in enumerate(items))


def _handoff(doc: _Doc) -> HandoffRequest | None:
    found = doc.pick(("handoff",))
    if found is None:
        return None
    block, key_path = found

    def ids(key: str) -> tuple[str, ...]:
        return tuple(
            _normalised(doc, name, (*key_path, key, i), f"handoff.{key} entry")
            for i, name in enumerate(block.get(key, ()))
        )

    default_return_to = block.get("default_return_to")
    return HandoffRequest(
        receives=tuple(block.get("receives", ())),
        returns=tuple(block.get("returns", ())),
        min_clarity=None if block.get("min_clarity") is None else float(block["min_clarity"]),
        can_delegate_to=ids("can_delegate_to"),
        can_be_called_by=ids("can_be_called_by"),
        default_return_to=None
        if default_return_to is None
        else _normalised(
            doc, default_return_to, (*key_path, "default_return_to"), "handoff.default_return_to"
        ),
        return_behavior=block.get("return_behavior"),
        line=doc.line(key_path),
    )


def _named_parts(doc: _Doc, section: Section) -> list[tuple[str, str, int]]:
    """(name, text, line) for each subsection, else for each list item, of a body section."""
    first = _text_line(doc, section)
    parts = subsections(section.text)
    if parts:
        return [(head.text, text, first + head.index) for head, text in parts]
    named = []
    for item in list_items(section.text):
        name, rest = split_name(item.text)
        named.append((name, rest, first + item.index))
    return named


def _text_line(doc: _Doc, section: Section) -> int:
    """Line of SKILL.md where a section's (trimmed) text starts."""
    lines = doc.fm.body.split("\n")
    index = section.line - doc.fm.body_line + 1
    while index < len(lines) and not lines[index].strip():
        index += 1
    return doc.fm.body_line + index


def _sub_agents(doc: _Doc, sections: tuple[Section, ...]) -> tuple[SubAgentSpec, ...]:
    found = doc.pick(("sub_agents",))
    if found is not None:
        items, key_path = found
        agents = tuple(
            SubAgentSpec(i["name"], i["instructions"], doc.line((*key_path, n)))
            for n, i in enumerate(items)
        )
        _unique(doc, [(a.name, (*key_path, n)) for n, a in enumerate(agents)], "sub-agent")
        return agents
    section = next((s for s in sections if s.key == "perspectives"), None)
    if section is None:
        return ()
    return tuple(
        SubAgentSpec(name, text or name, line) for name, text, line in _named_parts(doc, section)
    )


def _steps(
    doc: _Doc, sections: tuple[Section, ...], agent_type: str | None
) -> tuple[tuple[StepSpec, ...], StageList | None]:
    """The steps, from ``phases``, else a prose stage sequence, else a phases section; with the
    stage list when they come from one."""
    # A guided skill pauses at every step unless a step says otherwise.
    waits = agent_type is not None and record_of(agent_type).steps_wait
    found = doc.pick(("phases",))
    if found is not None:
        items, key_path = found
        steps = tuple(
            StepSpec(item, "", waits, doc.line((*key_path, n)))
            if isinstance(item, str)
            else StepSpec(
                item["name"],
                item.get("instructions", ""),
                item.get("waits_for_user", waits),
                doc.line((*key_path, n)),
            )
            for n, item in enumerate(items)
        )
        _unique(doc, [(s.name, (*key_path, n)) for n, s in enumerate(steps)], "step")
        return steps, None
    sequence = find_stage_sequence(doc.fm.body, doc.fm.body_line)
    if sequence is not None:
        doc.decisions.append(sequence.decision)
        steps = tuple(dataclasses.replace(s, waits_for_user=waits) for s in sequence.steps)
        return steps, sequence.listed
    section = next((s for s in sections if s.key == "phases"), None)
    if section is None:
        return (), None
    return tuple(
        StepSpec(name, text, waits, line) for name, text, line in _named_parts(doc, section)
    ), None


def _chain_steps(source: SkillSource, doc: _Doc) -> tuple[StepSpec, ...]:
    """The steps of a chain folder: its stage files, which leave no room for ``phases``."""
    phases = doc.pick(("phases",))
    if phases is not None:
        raise doc.fail(
            "S221",
            phases[1],
            "a chain's steps are its numbered stage files; remove phases from CHAIN.md",
        )
    from builder.skill.chain import chain_steps, stage_list_findings  # only a chain reads these

    steps = chain_steps(source, doc.fm)
    for line, message in stage_list_findings(doc.fm, steps):
        doc.warn_at("W121", SourceLocation(source.path, line, 1), message)
    doc.decisions.append(
        f"{len(steps)} steps from the chain's stage files, in their order: "
        + ", ".join(PurePosixPath(s.source).name for s in steps)
    )
    return steps


def _rules(doc: _Doc, sections: tuple[Section, ...]) -> tuple[str, ...]:
    found = doc.pick(("behavioral_rules",))
    rules = list(found[0]) if found else []
    section = next((s for s in sections if s.key == "behavioral_rules"), None)
    if section is not None:
        rules.extend(item.text for item in list_items(section.text))
    return tuple(rules)


def _scores(doc: _Doc) -> tuple[tuple[ScoreDimension, ...], tuple[ScoreBand, ...]]:
    found = doc.pick(("scores",))
    if found is None:
        return (), ()
    block, key_path = found
    dims_path, bands_path = (*key_path, "dimensions"), (*key_path, "bands")
    dimensions = []
    for i, item in enumerate(block.get("dimensions", ())):
        low, high = float(item.get("min", 0.0)), float(item.get("max", 1.0))
        _ordered(doc, low, high, (*dims_path, i), f"score {item['name']!r}")
        dimensions.append(ScoreDimension(item["name"], low, high, item.get("description", "")))
    _unique(doc, [(d.name, (*dims_path, i)) for i, d in enumerate(dimensions)], "score")
    bands = []
    for i, item in enumerate(block.get("bands", ())):
        _ordered(
            doc, float(item["min"]), float(item["max"]), (*bands_path, i), f"band {item['label']!r}"
        )
        bands.append(
            (ScoreBand(item["label"], float(item["min"]), float(item["max"])), (*bands_path, i))
        )
    _unique(doc, [(b.label, p) for b, p in bands], "band")
    bands.sort(key=lambda pair: (-pair[0].minimum, -pair[0].maximum))
    for (upper, _), (lower, where) in pairwise(bands):
        if lower.maximum >= upper.minimum:
            raise doc.fail(
                "S206",
                where,
                f"band {lower.label!r} ({lower.minimum:g}–{lower.maximum:g}) overlaps band "
                f"{upper.label!r} "
                f"({upper.minimum:g}–{upper.maximum:g}); a total must earn exactly one verdict",
            )
    if dimensions and bands:
        total_min, total_max = (
            sum(d.minimum for d in dimensions),
            sum(d.maximum for d in dimensions),
        )
        if bands[-1][0].minimum > total_min or bands[0][0].maximum < total_max:
            doc.warn(
                "W125",
                bands_path,
                f"score bands cover {bands[-1][0].minimum:g}–{bands[0][0].maximum:g} but the "
                "dimensions add up to "
                f"{total_min:g}–{total_max:g}; some totals get no verdict",
            )
    return tuple(dimensions), tuple(b for b, _ in bands)


def _ordered(doc: _Doc, low: float, high: float, key_path: KeyPath, what: str) -> None:
    if low > high:
        raise doc.fail("S206", key_path, f"{what} has min {low:g} above max {high:g}")


def _unique(doc: _Doc, named: list[tuple[str, KeyPath]], what: str) -> None:
    seen: dict[str, KeyPath] = {}
    for name, key_path in named:
        key = name.strip().lower()
        if key in seen:
            raise doc.fail(
                "S207",
                key_path,
                f"{what} {name!r} appears twice (first on line {doc.line(seen[key])})",
            )
        seen[key] = key_path


def _metadata(doc: _Doc) -> dict[str, Any]:
    """Front-matter entries the model does not cover: ``metadata`` content, unknown keys, unknown
    nested keys."""
    data = doc.fm.data
    metadata = data.get("metadata")
    given: dict[str, Any] = metadata if isinstance(metadata, dict) else {}
    result = {k: v for k, v in given.items() if k != "mindrian"}
    nested = given.get("mindrian") or {}
    extra_nested = {k: v for k, v in nested.items() if k not in MINDRIAN_KEYS}
    if extra_nested:
        result["mindrian"] = extra_nested
    known = (*STANDARD_KEYS, *MINDRIAN_KEYS)
    # A chain's own keys are understood (phase 1 reads them) and kept as metadata without a warning.
    understood = CHAIN_KEYS if is_chain(doc.path) else ()
    for key, value in data.items():
        if key in known:
            continue
        if key in understood:
            result[key] = value
            continue
        doc.warn(
            "W123",
            (key,),
            f"unknown front-matter key {key!r} is kept as metadata{_did_you_mean(key, known)}",
        )
        if key in result:
            doc.warn(
                "W124",
                (key,),
                f"top-level {key!r} replaces metadata.{key} (line {doc.line(('metadata', key))})",
            )
        result[key] = value
    result.update(doc.foreign)
    return result


def _references(source: SkillSource, doc: _Doc) -> tuple[Reference, ...]:
    folder = PurePosixPath(source.path).parent
    references = []
    for name, data in source.files:
        path = PurePosixPath(name)
        if path.parts[0] != "references" or path.suffix.lower() not in (".md", ".markdown"):
            continue
        if len(data) > MAX_REFERENCE_BYTES:
            raise SkillError(
                f"{LIMITS_CHECK}: {name} is {len(data)} bytes; the limit for a reference is "
                f"{MAX_REFERENCE_BYTES} bytes",
                location=SourceLocation((folder / name).as_posix()),
                code="S113",
            )
        text = decode_skill(data, (folder / name).as_posix())
        element = PurePosixPath(*path.parts[1:]).with_suffix("").as_posix().replace("/", "-")
        try:
            element_id = skill_id(element)
        except ValueError as exc:
            raise SkillError(
                f"required_fields: reference file name {element!r} {exc}",
                location=SourceLocation((folder / name).as_posix()),
                code="S203",
            ) from None
        heads = headings(text.split("\n"))
        title = next((h.text for h in heads if h.text), element_id)
        references.append(Reference(element_id, name, title, text, _sha256(data)))
    seen: dict[str, str] = {}
    for reference in references:
        if reference.name in seen:
            raise SkillError(
                f"required_fields: reference {reference.path!r} has the same element id "
                f"{reference.name!r} as {seen[reference.name]!r}",
                location=SourceLocation((folder / reference.path).as_posix()),
                code="S207",
            )
        seen[reference.name] = reference.path
    return tuple(references)


def _left_out(source: SkillSource, doc: _Doc) -> None:
    """Warn W122 for each file that travels with the skill but is over the copy limits."""
    folder = PurePosixPath(source.path).parent
    for name, size in source.left_out:
        doc.warn_at(
            "W122",
            SourceLocation((folder / name).as_posix()),
            f"{name} ({size} bytes) is left out of the package: a file beside references/ and "
            f"scripts/ may have {MAX_COPIED_FILE_BYTES} bytes, and such files "
            f"{MAX_COPIED_BYTES} bytes together",
        )


def _scripts(source: SkillSource) -> tuple[ScriptFile, ...]:
    return tuple(
        ScriptFile(
            name, _SCRIPT_LANGUAGES.get(PurePosixPath(name).suffix.lower(), "other"), _sha256(data)
        )
        for name, data in source.files
        if PurePosixPath(name).parts[0] == "scripts"
    )


def _sha256(data: bytes) -> str:
    import hashlib  # only a skill with references or scripts pays for OpenSSL's start

    return hashlib.sha256(data).hexdigest()


#: A ``name`` that is a folder slug (the Agent Skills form), not a title.
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def _display_name(doc: _Doc, name: str) -> str:
    """``metadata.mindrian.name``; else a chain's ``display_name``; else the body's first heading
    when ``name`` is a slug."""
    key_path = (*NESTED_PREFIX, "name")
    given = doc.lookup(key_path)
    if isinstance(given, str) and given.strip():
        doc.decisions.append(
            f"display name {given.strip()!r} from {_dotted(key_path)} (line {doc.line(key_path)})"
        )
        return given.strip()
    titled = doc.fm.data.get("display_name")
    if is_chain(doc.path) and isinstance(titled, str) and titled.strip():
        doc.decisions.append(
            f"display name {titled.strip()!r} from the chain's display_name (line "
            f"{doc.line(('display_name',))})"
        )
        return titled.strip()
    heads = headings(doc.fm.body.split("\n"))
    # Only a title: a first heading of level 1 (``# Overview`` under ``## …`` is not one).
    if not _SLUG.fullmatch(name) or not heads or heads[0].level != 1 or not heads[0].text:
        return name
    doc.decisions.append(
        f"display name {heads[0].text!r} from the body's first heading (line "
        f"{doc.fm.body_line + heads[0].index}): name {name!r} is a folder slug"
    )
    return heads[0].text


def _identifier(doc: _Doc, normalised_id: str) -> str:
    """The package name of the skill; refused when too long or when it would shadow a module."""
    if len(normalised_id) > MAX_ID_LENGTH:
        raise doc.fail(
            "S210",
            ("name",),
            f"name: the id {normalised_id[:40]!r}... is {len(normalised_id)} characters; "
            f"at most {MAX_ID_LENGTH} fit in a folder name",
        )
    identifier = python_identifier(normalised_id)
    hidden = shadowed_module(identifier)
    if hidden:
        raise doc.fail(
            "S209",
            ("name",),
            f"name: the package {identifier!r} would shadow {hidden} for every program "
            "that has the output folder on its path; rename the skill",
        )
    return identifier


def _definition(source: SkillSource, doc: _Doc) -> SkillDefinition:
    data = doc.fm.data
    # ``id`` lets a skill keep its agent id when ``name`` must match its folder (Agent Skills).
    explicit_id = doc.pick(("id",))
    normalised_id = (
        _normalised(doc, explicit_id[0], explicit_id[1], "id")
        if explicit_id
        else _normalised(doc, data["name"], ("name",), "name")
    )
    agent_type = _type(doc)
    sections = find_sections(doc.fm.body, doc.fm.body_line)
    dimensions, bands = _scores(doc)
    tone, model = doc.pick(("tone",)), _model(doc)
    problem_types = doc.pick(("problem_types",))
    triggers, inferred_triggers = _triggers(doc)
    chain = is_chain(source.path)
    steps, stage_list = (
        (_chain_steps(source, doc), None) if chain else _steps(doc, sections, agent_type)
    )
    if len(data["description"]) > DESCRIPTION_LIMIT:
        doc.warn(
            "W105",
            ("description",),
            f"description is {len(data['description'])} characters; the Agent Skills format allows "
            f"{DESCRIPTION_LIMIT}, so other hosts may refuse the skill",
        )
    return SkillDefinition(
        id=normalised_id,
        identifier=_identifier(doc, normalised_id),
        name=data["name"],
        description=data["description"],
        display_name=_display_name(doc, data["name"]),
        source_path=source.path,
        source_digest=source.digest,
        type=agent_type,
        version=_version(doc),
        license=data.get("license"),
        compatibility=data.get("compatibility"),
        allowed_tools=_allowed_tools(data.get("allowed-tools")),
        model=model,
        tone=tone[0] if tone else None,
        triggers=triggers,
        inferred_triggers=inferred_triggers,
        problem_types=_words(problem_types[0]) if problem_types else (),
        good_for=_good_for(doc, _words(problem_types[0]) if problem_types else ()),
        inputs=_fields(doc, "inputs"),
        outputs=_fields(doc, "outputs"),
        chains_to=_chains(doc),
        mcp_servers=_mcp_servers(doc),
        custom_tools=_custom_tools(doc),
        global_actions=_global_actions(doc),
        host_tools=_host_tools(doc),
        behavioral_rules=_rules(doc, sections),
        handoff=_handoff(doc),
        sub_agents=_sub_agents(doc, sections),
        steps=steps,
        scores=dimensions,
        score_bands=bands,
        sections=sections,
        body=doc.fm.body,
        body_line=doc.fm.body_line,
        references=_references(source, doc),
        scripts=_scripts(source),
        metadata=_metadata(doc),
        field_lines={_dotted(p): line for p, (line, _) in doc.fm.positions.items()},
        decisions=tuple(doc.decisions),
        stage_files=tuple(s.source for s in steps) if chain else (),
        stage_list=stage_list,
    )


def analyse(source: SkillSource) -> PhaseResult[SkillDefinition]:
    """Parse and validate one skill; raise SkillError (with code and location) when it is
    unusable."""
    if len(source.data) > MAX_SKILL_BYTES:
        raise SkillError(
            f"{LIMITS_CHECK}: SKILL.md is {len(source.data)} bytes; the limit is "
            f"{MAX_SKILL_BYTES} bytes",
            location=SourceLocation(source.path),
            code="S107",
        )
    text = decode_skill(source.data, source.path)
    implied = None
    if is_subagent_note(source.path, text):
        fm, implied = implied_front_matter(text, source.path)
    else:
        fm = parse_front_matter(text, source.path)
    doc = _Doc(fm, source.path)
    if implied:
        doc.warnings.append(implied)
    # Before anything is set aside as metadata: a kept field must be digestible too.
    _check_numbers(doc)
    _lenient_notes(doc)
    _expand_shorthands(doc)
    _validate(doc)
    definition = _definition(source, doc)
    _left_out(source, doc)
    checks = (
        CheckResult(
            LIMITS_CHECK,
            True,
            f"SKILL.md {len(source.data)} bytes, {len(source.files)} folder files "
            f"({sum(len(data) for _, data in source.files)} bytes), references at most "
            f"{MAX_REFERENCE_BYTES} bytes each",
        ),
        CheckResult(
            "valid_yaml",
            True,
            f"front matter parsed: {len(fm.data)} keys (lines {fm.open_line}–{fm.close_line})",
        ),
        CheckResult(
            "required_fields",
            True,
            f"name and description present; schema satisfied (id {definition.id}, "
            f"{len(definition.sections)} recognised sections, {len(definition.references)} "
            "references)",
        ),
    )
    # Where other hosts are stricter: every command that runs phase 1 says so alike.
    warnings = (*doc.warnings, *portability_warnings(definition))
    return PhaseResult(output=definition, checks=checks, warnings=tuple(dict.fromkeys(warnings)))


class SkillAnalysisPhase(PhaseHooks[Outputs, SkillDefinition]):
    """Phase 1: read the skill's bytes, produce its SkillDefinition."""

    name = "skill_analysis"
    number = phase_number(name)
    checks = (LIMITS_CHECK, "valid_yaml", "required_fields")
    output_type = SkillDefinition

    def run(self, inputs: Inputs) -> PhaseResult[SkillDefinition]:
        """Analyse ``inputs.source`` (nothing else is read)."""
        return analyse(inputs.source)


#: The phase object the runner loads.
PHASE = SkillAnalysisPhase()
