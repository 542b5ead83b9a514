"""``generated/registry.yaml``: the committed, deterministic export of the registry.

The embedded database is a build artefact; this file is the reviewed source of truth
it can be rebuilt from.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

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
    """YAML text of every registered framework, sorted by id; same graph, same bytes."""
    records = source.export() if isinstance(source, Registry) else tuple(source)
    document = {
        "format": FORMAT_VERSION,
        "frameworks": [r.to_plain() for r in sorted(records, key=lambda r: r.id)],
    }
    return yaml.safe_dump(
        document,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=4096,
    )


def parse_registry_yaml(text: str) -> tuple[FrameworkRecord, ...]:
    """Framework records from registry.yaml text."""
    document = yaml.safe_load(text) or {}
    if document.get("format") != FORMAT_VERSION:
        raise ValueError(f"registry.yaml format {document.get('format')!r} is not {FORMAT_VERSION}")
    return tuple(FrameworkRecord.from_plain(item) for item in document.get("frameworks") or ())


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
