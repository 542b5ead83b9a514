"""registry.yaml: deterministic export, atomic write, rebuild of the embedded database."""

from __future__ import annotations

from pathlib import Path

import pytest
from golden_files import Golden
from graph_factories import INJECTION, SIX, framework

from mindrian.graph import (
    EmbeddedRegistry,
    dump_registry_yaml,
    load_registry_yaml,
    parse_registry_yaml,
    registry_from_yaml,
    write_registry_yaml,
)

GOLDEN = Path(__file__).parent / "golden" / "registry.yaml"


def test_dump_matches_golden_file(golden: Golden) -> None:
    with EmbeddedRegistry(None) as registry:
        registry.register_many(reversed(SIX))
        golden.check(GOLDEN, dump_registry_yaml(registry))


def test_dump_does_not_depend_on_registration_order() -> None:
    assert dump_registry_yaml(SIX) == dump_registry_yaml(reversed(SIX))


def test_round_trip_rebuilds_the_same_graph(tmp_path: Path) -> None:
    records = (*SIX, framework("hostile", name=INJECTION, triggers=(INJECTION,)))
    path = tmp_path / "generated" / "registry.yaml"
    write_registry_yaml(records, path)
    assert load_registry_yaml(path) == tuple(sorted(records, key=lambda r: r.id))
    with registry_from_yaml(path, tmp_path / "db" / "registry.lbug") as rebuilt:
        assert dump_registry_yaml(rebuilt) == path.read_text(encoding="utf-8")
        assert rebuilt.select(["scqa"], ["ill-defined"], ["pws"])[0].id == "minto"


def test_write_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text("old", encoding="utf-8")
    write_registry_yaml(SIX, path)
    assert path.read_bytes() == dump_registry_yaml(SIX).encode("utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["registry.yaml"]


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="format"):
        parse_registry_yaml("format: 99\nframeworks: []\n")
