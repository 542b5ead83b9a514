"""Shorthands a skill author naturally writes, and the canonical front matter they stand for.

Two kinds, both in Mindrian fields only (at the top level or under ``metadata.mindrian``):

* **synonym item keys**: ``id`` or ``title`` for ``name``, and ``description``,
  ``role`` or ``prompt`` for ``instructions``, in the lists of mappings that have
  that key and not the synonym as a key of their own (:data:`ITEM_SYNONYMS`: a
  sub-agent's ``description`` is its instructions, an input's ``description`` is
  its description);
* **a bare text where a list is expected** (:data:`SINGLE_ITEM_LISTS`):
  ``chains_to: lean-canvas`` is ``chains_to: [lean-canvas]``;
* **a key beside a title** (:data:`KEYED_LISTS`): an item of ``phases`` or
  ``sub_agents`` with an ``id`` (a slug) and a different ``name`` (or ``title``) is
  the commonest way to write a key and a label. The name is the item's title, the
  one every later phase uses; the ``id`` is dropped, as a decision naming it;
* **a list of score names** (:data:`SCORE_LISTS`): ``scores: [clarity, depth]`` is
  ``scores: {dimensions: [{name: clarity}, {name: depth}]}``, each with the default
  range (0 to 1); a list of dimension mappings is read as ``dimensions`` too.

:func:`find_shorthands` locates them in the plain data phase 1 parses (or in
ruamel's round-trip data, for ``mindrian fmt``), without changing it;
:func:`expanded` is a copy in canonical form. Phase 1 rewrites them before
schema validation, so every later phase sees only the canonical form; the
generated packages' fidelity items read the skill's own text through
:func:`expanded` too; ``mindrian fmt`` rewrites the file. Where a synonym and the
canonical key (or two synonyms) give different values, nothing is guessed:
:class:`ShorthandConflict` names both.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from builder.skill.frontmatter import KeyPath
from mindrian.errors import MindrianError

__all__ = [
    "ITEM_SYNONYMS",
    "KEYED_LISTS",
    "SCORE_LISTS",
    "SINGLE_ITEM_LISTS",
    "Shorthand",
    "ShorthandConflict",
    "expanded",
    "find_shorthands",
    "nested_score",
]

_NAME: tuple[str, tuple[str, ...]] = ("name", ("id", "title"))
_INSTRUCTIONS: tuple[str, tuple[str, ...]] = ("instructions", ("description", "role", "prompt"))

#: Lists of mappings (paths from a Mindrian root, ``*`` for every item) and, for their
#: items, each canonical key with the synonyms that stand for it.
ITEM_SYNONYMS: Mapping[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]] = {
    ("inputs",): (_NAME,),
    ("outputs",): (_NAME,),
    ("tools", "custom_tools"): (_NAME,),
    ("sub_agents",): (_NAME, _INSTRUCTIONS),
    ("phases",): (_NAME, _INSTRUCTIONS),
    ("scores", "dimensions"): (_NAME,),
}

#: Lists (paths from a Mindrian root, ``*`` for every item) where one text means a
#: one-item list.
SINGLE_ITEM_LISTS: tuple[tuple[str, ...], ...] = (
    ("inputs",),
    ("outputs",),
    ("chains_to",),
    ("chaining",),
    ("behavioral_rules",),
    ("phases",),
    ("mcp_tools", "*", "tools"),
    ("tools", "mcp_servers", "*", "tools"),
    ("handoff", "receives"),
    ("handoff", "returns"),
    ("handoff", "can_delegate_to"),
    ("handoff", "can_be_called_by"),
)

#: Lists (paths from a Mindrian root) whose items may carry an ``id`` key beside a different
#: ``name``: the name is then the item's title and the id its key, not a second spelling.
KEYED_LISTS: tuple[tuple[str, ...], ...] = (("phases",), ("sub_agents",))

#: Mappings of dimensions (paths from a Mindrian root) that may be written as the list of
#: dimensions alone, and a name alone for a dimension with the default range.
SCORE_LISTS: tuple[tuple[str, ...], ...] = (("scores",),)

#: Where Mindrian fields may be written: the top level, then ``metadata.mindrian``.
_ROOTS: tuple[tuple[str, ...], ...] = ((), ("metadata", "mindrian"))


@dataclass(frozen=True)
class Shorthand:
    """One shorthand found in the front matter, and the canonical path it stands for."""

    written: KeyPath
    """Path as written: the synonym key (``phases.0.title``) or the bare text (``chains_to``)."""
    canonical: KeyPath
    """Path of the value in canonical form (``phases.0.name``, ``chains_to.0``)."""
    redundant: bool = False
    """The canonical key, or a synonym written earlier, gives the same value: this one is
    only dropped."""
    keyed: bool = False
    """An ``id`` beside a different name (:data:`KEYED_LISTS`): the item's key, dropped; the
    name is its title."""
    nests: bool = False
    """A list where a mapping of ``dimensions`` is expected (:data:`SCORE_LISTS`): the list
    becomes ``dimensions``, each bare name ``{name: …}``."""

    @property
    def wraps(self) -> bool:
        """A bare text that becomes a one-item list (else a synonym key to rename)."""
        return not self.nests and self.canonical[:-1] == self.written

    @property
    def dropped(self) -> bool:
        """The written key is removed, its value kept elsewhere (or a decision only)."""
        return self.redundant or self.keyed


class ShorthandConflict(MindrianError, ValueError):
    """A synonym and the canonical key (or two synonyms) of one item give different values."""

    def __init__(self, written: KeyPath, other: KeyPath) -> None:
        super().__init__(f"{_dotted(written)} and {_dotted(other)} give different values")
        self.written = written
        """The later spelling, where the error points."""
        self.other = other
        """The spelling it contradicts."""


def find_shorthands(data: Mapping[str, Any]) -> tuple[Shorthand, ...]:
    """Every shorthand in ``data``, bare texts first, each group in document order.

    Raises :class:`ShorthandConflict` where one item gives a value twice, differently.
    """
    found = [
        Shorthand(path, (*path, 0))
        for root in _ROOTS
        for pattern in SINGLE_ITEM_LISTS
        for path, value in _matches(data, (*root, *pattern))
        if isinstance(value, str)
    ]
    found += [
        Shorthand(path, (*path, "dimensions"), nests=True)
        for root in _ROOTS
        for pattern in SCORE_LISTS
        for path, value in _matches(data, (*root, *pattern))
        if isinstance(value, list)
    ]
    for root in _ROOTS:
        for pattern, synonyms in ITEM_SYNONYMS.items():
            keyed = pattern in KEYED_LISTS
            for path, value in _matches(data, (*root, *pattern, "*")):
                if isinstance(value, Mapping):
                    found.extend(_item_synonyms(path, value, synonyms, keyed=keyed))
    return tuple(found)


def expanded(data: Mapping[str, Any], shorthands: tuple[Shorthand, ...]) -> dict[str, Any]:
    """A copy of the plain data ``data`` with ``shorthands`` (found in it) in canonical form."""
    result = copy.deepcopy(dict(data))
    for shorthand in shorthands:
        parent: Any = result
        for part in shorthand.written[:-1]:
            parent = parent[part]
        key = shorthand.written[-1]
        if shorthand.wraps:
            parent[key] = [parent[key]]
        elif shorthand.nests:
            parent[key] = {"dimensions": [nested_score(item) for item in parent[key]]}
        elif shorthand.dropped:
            del parent[key]
        else:
            # Rebuilt rather than popped and added, so the key keeps its place in the item.
            renamed = {(shorthand.canonical[-1] if k == key else k): v for k, v in parent.items()}
            parent.clear()
            parent.update(renamed)
    return result


def nested_score(item: Any) -> Any:
    """A dimension as a mapping: a bare name becomes ``{name: …}`` (the default range)."""
    return {"name": item} if isinstance(item, str) else item


def _item_synonyms(
    path: KeyPath,
    item: Mapping[str, Any],
    synonyms: tuple[tuple[str, tuple[str, ...]], ...],
    *,
    keyed: bool,
) -> Iterator[Shorthand]:
    for canonical, spellings in synonyms:
        # In document order: a conflict is reported where the second spelling is written.
        given = [key for key in item if key == canonical or key in spellings]
        if keyed and canonical == "name" and _is_key(item, given):
            yield Shorthand((*path, "id"), (*path, canonical), keyed=True)
            given.remove("id")
        for key in given[1:]:
            if item[key] != item[given[0]]:
                raise ShorthandConflict((*path, key), (*path, given[0]))
        # The canonical key's value stands; without it, the first synonym's.
        kept = canonical if canonical in item else given[0] if given else None
        for key in given:
            if key != canonical:
                yield Shorthand((*path, key), (*path, canonical), redundant=key != kept)


def _is_key(item: Mapping[str, Any], given: list[str]) -> bool:
    """``id`` stands beside another name spelling with a different value."""
    return "id" in given and any(k != "id" and item[k] != item["id"] for k in given)


def _matches(data: Any, pattern: tuple[str, ...]) -> Iterator[tuple[KeyPath, Any]]:
    """(path, value) of every value at ``pattern``; ``*`` matches each item of a list."""
    if not pattern:
        yield (), data
        return
    head, rest = pattern[0], pattern[1:]
    if head == "*":
        children: list[tuple[str | int, Any]] = (
            list(enumerate(data)) if isinstance(data, list) else []
        )
    else:
        children = [(head, data[head])] if isinstance(data, Mapping) and head in data else []
    for key, child in children:
        for path, value in _matches(child, rest):
            yield (key, *path), value


def _dotted(path: KeyPath) -> str:
    return ".".join(str(p) for p in path)
