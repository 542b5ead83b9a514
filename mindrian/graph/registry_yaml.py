"""``generated/registry.yaml``: the committed, deterministic export of the registry.

The embedded database is a build artefact; this file is the reviewed source of truth
it can be rebuilt from. The one field it leaves out, each framework's routing body, is
recomputed on loading from the ``spec.yaml`` of the framework's package beside it
(:func:`with_routing_bodies`), so a registry rebuilt on another machine ranks as the one
the build registered into.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import warnings
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from mindrian.atomic import atomic_write_text
from mindrian.errors import MindrianWarning
from mindrian.graph.base import FrameworkRecord, Registry
from mindrian.graph.embedded import EmbeddedRegistry
from mindrian.routing.text import body_prose
from mindrian.yaml_emit import SafeDumper

__all__ = [
    "FORMAT_VERSION",
    "RegistryLayout",
    "RoutingBodyWarning",
    "dump_registry_yaml",
    "laid_out_registry_yaml",
    "load_registry_yaml",
    "parse_registry_yaml",
    "registry_from_yaml",
    "splice_registry_yaml",
    "with_routing_bodies",
    "write_registry_yaml",
]

#: Bumped when the layout of registry.yaml changes.
FORMAT_VERSION = 1


def dump_registry_yaml(source: Registry | Iterable[FrameworkRecord]) -> str:
    """YAML text of every registered framework, sorted by id; same graph, same bytes.

    A build of N skills writes this file N times, each time with one entry
    changed: every entry's text is kept (:func:`_entry_text`), so writing costs
    only the changed entry, and the records are remembered under the text
    (:func:`parse_registry_yaml` of it then reads nothing).
    """
    return laid_out_registry_yaml(source)[0]


@dataclass(frozen=True)
class RegistryLayout:
    """Where each framework's entry lies in a registry.yaml text this module wrote: what
    :func:`splice_registry_yaml` needs to change entries without reading the others."""

    ids: tuple[str, ...]
    """The frameworks' ids in the order of their entries (sorted)."""
    sizes: tuple[int, ...]
    """The length in characters of each one's entry, in the same order."""


def laid_out_registry_yaml(
    source: Registry | Iterable[FrameworkRecord],
) -> tuple[str, RegistryLayout]:
    """:func:`dump_registry_yaml` and the layout of the text it gives."""
    records = tuple(sorted(source.export() if isinstance(source, Registry) else source, key=_id))
    entries = tuple(_record_text(r) for r in records)
    text = _join(entries)
    # Remembered as the text holds them: the body's prose is never written to it.
    _remember(text, tuple(_without_body(r) for r in records))
    return text, RegistryLayout(tuple(r.id for r in records), tuple(map(len, entries)))


def splice_registry_yaml(
    text: str,
    layout: RegistryLayout,
    put: Iterable[FrameworkRecord] = (),
    drop: Collection[str] = (),
) -> tuple[str, RegistryLayout]:
    """What :func:`laid_out_registry_yaml` gives for the frameworks of ``text`` with ``put``
    added (or replacing the entry of the same id), then ``drop`` removed, byte for byte, without
    reading or rendering any other entry: a one-skill change costs one entry, not the registry.

    ``text`` must be the very text ``layout`` was made for (callers compare digests); a
    layout that does not fit the text's length and head raises ValueError.
    """
    entries = dict(zip(layout.ids, _cut(text, layout), strict=True))
    for record in put:
        entries[record.id] = _record_text(record)
    for framework_id in drop:
        entries.pop(framework_id, None)
    ids = tuple(sorted(entries))
    kept = tuple(entries[i] for i in ids)
    return _join(kept), RegistryLayout(ids, tuple(map(len, kept)))


def _cut(text: str, layout: RegistryLayout) -> list[str]:
    """The entries' texts of ``text``, cut where ``layout`` says they lie."""
    if not layout.ids:
        if text != _join(()):
            raise ValueError("the layout lists no framework but the text is not an empty registry")
        return []
    ends = list(itertools.accumulate(layout.sizes, initial=len(_HEAD)))
    if len(layout.sizes) != len(layout.ids) or ends[-1] != len(text) or not text.startswith(_HEAD):
        raise ValueError("the layout does not describe this registry.yaml text")
    return [text[start:end] for start, end in itertools.pairwise(ends)]


def _join(entries: tuple[str, ...]) -> str:
    """The whole document from its entries' texts (sorted by id)."""
    if not entries:
        return _dump({"format": FORMAT_VERSION, "frameworks": []})
    return _HEAD + "".join(entries)


#: How registry.yaml is written; an entry alone, as a one-item list, gets the same lines.
_STYLE: dict[str, Any] = {
    "sort_keys": False,
    "allow_unicode": True,
    "default_flow_style": False,
    "width": 4096,
}


def _id(record: FrameworkRecord) -> str:
    return record.id


def _key(record: FrameworkRecord) -> str:
    return json.dumps(record.to_plain(), sort_keys=False, ensure_ascii=False)


@functools.lru_cache(maxsize=65536)
def _without_body(record: FrameworkRecord) -> FrameworkRecord:
    return replace(record, body="")


@functools.lru_cache(maxsize=65536)
def _record_text(record: FrameworkRecord) -> str:
    """:func:`_entry_text` of a record: a batch passes the same record objects again (the
    previous export with one entry replaced), which this finds without serialising them."""
    return _entry_text(_key(record))


@functools.lru_cache(maxsize=65536)
def _entry_text(plain_json: str) -> str:
    """The lines of one framework under ``frameworks:`` (keyed by its JSON, which keeps order)."""
    return _dump([json.loads(plain_json)])


def _dump(data: object) -> str:
    return str(yaml.dump(data, Dumper=_Dumper, **_STYLE))


class _Dumper(SafeDumper):
    """PyYAML's safe dumper, except that strings holding a line break other than LF are
    double-quoted: the other styles fold a NEL, CR, U+2028 or U+2029 into a space or a LF, and
    registry.yaml must read back as exactly what the registry holds."""


_OTHER_BREAKS = frozenset("\r\x85\u2028\u2029")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if not _OTHER_BREAKS.isdisjoint(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)

#: The lines before the first entry of a registry that lists any framework.
_HEAD = _dump({"format": FORMAT_VERSION}) + "frameworks:\n"


#: Records by the sha256 of a text this process wrote or read, newest last (a few kept).
_KNOWN: dict[str, tuple[FrameworkRecord, ...]] = {}


def _remember(text: str, records: tuple[FrameworkRecord, ...]) -> None:
    _KNOWN[hashlib.sha256(text.encode("utf-8")).hexdigest()] = records
    while len(_KNOWN) > 4:
        del _KNOWN[next(iter(_KNOWN))]


def parse_registry_yaml(text: str) -> tuple[FrameworkRecord, ...]:
    """Framework records from registry.yaml text."""
    known = _KNOWN.get(hashlib.sha256(text.encode("utf-8")).hexdigest())
    if known is not None:
        return known
    # libyaml's parser when installed: the same data as PyYAML's, ten times faster.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    document = yaml.load(text, Loader=loader) or {}
    if document.get("format") != FORMAT_VERSION:
        raise ValueError(f"registry.yaml format {document.get('format')!r} is not {FORMAT_VERSION}")
    records = tuple(FrameworkRecord.from_plain(item) for item in document.get("frameworks") or ())
    _remember(text, records)
    return records


def load_registry_yaml(path: str | Path) -> tuple[FrameworkRecord, ...]:
    """Framework records from a registry.yaml file."""
    return parse_registry_yaml(Path(path).read_text(encoding="utf-8"))


def write_registry_yaml(source: Registry | Iterable[FrameworkRecord], path: str | Path) -> None:
    """Write registry.yaml atomically (temp file in the same folder, then os.replace)."""
    atomic_write_text(path, dump_registry_yaml(source))


def registry_from_yaml(
    yaml_path: str | Path, db_path: str | Path | None = None
) -> EmbeddedRegistry:
    """An embedded registry (in memory unless ``db_path``) holding what registry.yaml lists,
    with the routing bodies of the packages beside it (:func:`with_routing_bodies`)."""
    registry = EmbeddedRegistry(db_path)
    try:
        records = load_registry_yaml(yaml_path)
        registry.register_many(with_routing_bodies(records, yaml_path))
    except BaseException:
        registry.close()
        raise
    return registry


class RoutingBodyWarning(MindrianWarning):
    """Frameworks loaded from registry.yaml that rank without their body: no package of
    theirs beside it, or one whose spec.yaml no longer agrees with the registered record."""

    code = "W701"


#: The spec.yaml keys that registry.yaml also holds: a package whose values differ is not
#: the build that registry.yaml records, so its body would not be either.
_SHARED_KEYS = ("name", "type", "description", "version", "triggers", "problem_types")

#: How many frameworks a RoutingBodyWarning names before it only counts the rest.
_NAMED_IN_WARNING = 5


def with_routing_bodies(
    records: Iterable[FrameworkRecord], yaml_path: str | Path
) -> tuple[FrameworkRecord, ...]:
    """``records`` of the registry.yaml at ``yaml_path``, each with its routing body
    recomputed from its package's ``spec.yaml`` in the same folder.

    The body is :func:`~mindrian.routing.text.body_prose` of the spec's instruction
    blocks, what phase 5 stores at registration. A framework without a package there, or
    whose spec.yaml disagrees with its record (:data:`_SHARED_KEYS`), keeps no body, and one
    :class:`RoutingBodyWarning` names each such framework and why: its selection scores
    would differ from the registering machine's, which must not pass unnoticed.
    """
    packages = Path(yaml_path).parent
    specs, problems = _specs_by_id(packages)
    found: list[FrameworkRecord] = []
    for record in records:
        spec = specs.get(record.id)
        problem = _stale(record, spec[1]) if spec is not None else "no package beside it"
        if spec is not None and problem is None:
            found.append(replace(record, body=_spec_body(spec[1])))
            continue
        where = spec[0].as_posix() if spec is not None else None
        problems.append(f"{record.id}: {problem}" + (f" ({where})" if where else ""))
        found.append(replace(record, body=""))
    if problems:
        _warn(Path(yaml_path), problems)
    return tuple(found)


def _specs_by_id(packages: Path) -> tuple[dict[str, tuple[Path, Mapping[str, Any]]], list[str]]:
    """Each package's (spec.yaml path, contents) by framework id, and the unreadable ones."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    specs: dict[str, tuple[Path, Mapping[str, Any]]] = {}
    unreadable: list[str] = []
    for path in sorted(packages.glob("*/spec.yaml")):
        try:
            spec = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            unreadable.append(f"{path.as_posix()}: unreadable ({' '.join(str(error).split())})")
            continue
        if isinstance(spec, Mapping) and isinstance(spec.get("id"), str):
            specs[spec["id"]] = (path, spec)
    return specs, unreadable


def _stale(record: FrameworkRecord, spec: Mapping[str, Any]) -> str | None:
    plain = record.to_plain()
    differ = [key for key in _SHARED_KEYS if spec.get(key) != plain[key]]
    if differ:
        return f"its spec.yaml differs from registry.yaml in {', '.join(differ)}"
    instructions = spec.get("instructions")
    blocks = instructions.get("blocks") if isinstance(instructions, Mapping) else None
    if not isinstance(blocks, list) or not all(
        isinstance(b, Mapping) and isinstance(b.get("text"), str) for b in blocks
    ):
        return "its spec.yaml has no instructions.blocks texts"
    return None


def _spec_body(spec: Mapping[str, Any]) -> str:
    return body_prose(block["text"] for block in spec["instructions"]["blocks"])


def _warn(yaml_path: Path, problems: list[str]) -> None:
    named = "; ".join(problems[:_NAMED_IN_WARNING])
    more = len(problems) - _NAMED_IN_WARNING
    rest = f"; and {more} more" if more > 0 else ""
    message = (
        "ranked without the body of their skill (selection may differ from the registering "
        f"build until it is registered again): {named}{rest}"
    )
    warnings.warn(RoutingBodyWarning(yaml_path.as_posix(), message), stacklevel=3)
