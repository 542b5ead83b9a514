"""``generated/registry.yaml``: the committed, deterministic export of the registry.

The embedded database is a build artefact; this file is the reviewed source of truth
it can be rebuilt from.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from mindrian.atomic import atomic_write_text
from mindrian.graph.base import FrameworkRecord, Registry
from mindrian.graph.embedded import EmbeddedRegistry

__all__ = [
    "FORMAT_VERSION",
    "dump_registry_yaml",
    "load_registry_yaml",
    "parse_registry_yaml",
    "registry_from_yaml",
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
    records = tuple(sorted(source.export() if isinstance(source, Registry) else source, key=_id))
    if not records:
        return _dump({"format": FORMAT_VERSION, "frameworks": []})
    head = _dump({"format": FORMAT_VERSION}) + "frameworks:\n"
    text = head + "".join(_entry_text(_key(r)) for r in records)
    # Remembered as the text holds them: the body's prose is never written to it.
    _remember(text, tuple(replace(r, body="") for r in records))
    return text


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
def _entry_text(plain_json: str) -> str:
    """The lines of one framework under ``frameworks:`` (keyed by its JSON, which keeps order)."""
    return _dump([json.loads(plain_json)])


def _dump(data: object) -> str:
    return str(yaml.dump(data, Dumper=_Dumper, **_STYLE))


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper, except that strings holding a line break other than LF are
    double-quoted: the other styles fold a NEL, CR, U+2028 or U+2029 into a space or a LF, and
    registry.yaml must read back as exactly what the registry holds."""


_OTHER_BREAKS = frozenset("\r\x85\u2028\u2029")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if not _OTHER_BREAKS.isdisjoint(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


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
    """An embedded registry (in memory unless ``db_path``) holding what registry.yaml lists."""
    registry = EmbeddedRegistry(db_path)
    try:
        registry.register_many(load_registry_yaml(yaml_path))
    except BaseException:
        registry.close()
        raise
    return registry
