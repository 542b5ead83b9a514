"""registry.yaml: deterministic export, atomic write, rebuild of the embedded database."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from golden_files import Golden
from graph_factories import INJECTION, SIX, framework

from mindrian.graph import (
    EmbeddedRegistry,
    FrameworkRecord,
    RegistryLayout,
    RegistryYamlError,
    dump_registry_yaml,
    laid_out_registry_yaml,
    load_registry_yaml,
    parse_registry_yaml,
    registry_from_yaml,
    registry_yaml,
    splice_registry_yaml,
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


@pytest.mark.parametrize(
    ("data", "line", "column", "problem"),
    [
        (b"- a\n", 1, 1, "the file is a list, not a mapping of format: 1 and frameworks"),
        (b"42\n", 1, 1, "the file is a number (42)"),
        (b"format: 1\nframeworks: a\n", 2, 13, "frameworks is a string ('a'), not a list"),
        (b"format: 1\nframeworks:\n- id: x\n", 3, 3, "frameworks[0] has no name"),
        (
            b"format: 1\nframeworks:\n- {id: x, name: X, type: role, problem_types: [1]}\n",
            3,
            48,
            "frameworks[0].problem_types[0] is a number (1), not a string",
        ),
        (
            b"format: 1\nframeworks:\n"
            b"- {id: x, name: X, type: role, good_for: [{problem_type: p}]}\n",
            3,
            43,
            "frameworks[0].good_for[0] has no confidence",
        ),
        (
            b"format: 1\nframeworks:\n- {id: x, name: X, type: role}\n"
            b"- {id: x, name: Y, type: role}\n",
            4,
            8,
            "framework 'x' is listed twice (first frameworks[0])",
        ),
        (b"format: 1\n\xc3\x28\n", 2, 1, "not UTF-8 text: byte 0xc3"),
        (b"format: 1\nframeworks: [\n", 3, 1, "not YAML"),
    ],
)
def test_a_file_that_is_no_registry_is_refused_at_the_fault(
    tmp_path: Path, data: bytes, line: int, column: int, problem: str
) -> None:
    path = tmp_path / "registry.yaml"
    path.write_bytes(data)
    with pytest.raises(RegistryYamlError) as refused:
        load_registry_yaml(path)
    assert (refused.value.line, refused.value.column) == (line, column)
    assert refused.value.message.startswith(problem), refused.value.message


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="format"):
        parse_registry_yaml("format: 99\nframeworks: []\n")


def _whole_document(records: tuple[FrameworkRecord, ...]) -> str:
    """registry.yaml as one YAML dump of the whole document (how it was first written)."""
    document = {"format": 1, "frameworks": [r.to_plain() for r in sorted(records, key=_by_id)]}
    return str(
        yaml.dump(
            document,
            Dumper=registry_yaml._Dumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=4096,
        )
    )


def _by_id(record: FrameworkRecord) -> str:
    return record.id


AWKWARD = (
    "",
    "é \u2028 \x85 'single' \"double\" : # not a comment",
    "- looks like a list item",
    "yes",
    "x" * 5000,
    "line one\nline two",
)


@pytest.mark.parametrize("count", [0, 1, len(SIX), 60])
def test_the_entry_by_entry_dump_writes_the_whole_documents_bytes(count: int) -> None:
    records = tuple(
        replace(
            SIX[i % len(SIX)],
            id=f"{SIX[i % len(SIX)].id}-{i}",
            description=AWKWARD[i % len(AWKWARD)],
        )
        for i in range(count)
    )
    assert dump_registry_yaml(records) == _whole_document(records)


def test_a_text_this_process_wrote_parses_to_its_records_and_a_new_text_is_read() -> None:
    written = dump_registry_yaml(SIX)
    first = sorted(SIX, key=_by_id)
    assert parse_registry_yaml(written) == tuple(first)
    edited = written.replace(f"name: {first[0].name}\n", "name: renamed\n", 1)
    assert edited != written
    assert parse_registry_yaml(edited)[0].name == "renamed"


@pytest.mark.parametrize(
    "text", ["a b\x85", "trig\x85ger", "line1\nli\x85ne2", "a\rb", "c\u2028", "d\u2029e"]
)
def test_line_breaks_other_than_lf_read_back_as_written(text: str) -> None:
    """Repro: a NEL in a description came back as a space, so registry.yaml no longer matched
    the registry and the next build of any other skill was refused (R007)."""
    record = replace(SIX[0], description=text, triggers=(text,))
    written = dump_registry_yaml([record])
    registry_yaml._KNOWN.clear()  # read the text, not what this process remembers of it
    assert parse_registry_yaml(written) == (record,)


def _numbered(count: int, start: int = 0) -> tuple[FrameworkRecord, ...]:
    return tuple(
        replace(
            SIX[i % len(SIX)],
            id=f"{SIX[i % len(SIX)].id}-{i}",
            description=AWKWARD[i % len(AWKWARD)],
        )
        for i in range(start, start + count)
    )


@pytest.mark.parametrize("count", [0, 1, len(SIX), 60])
def test_a_splice_writes_what_a_full_rewrite_writes_for_adds_changes_and_removals(
    count: int,
) -> None:
    before = _numbered(count)
    text, layout = laid_out_registry_yaml(before)
    assert (text, layout) == laid_out_registry_yaml(reversed(before))
    changed = tuple(replace(r, name=f"{r.name} (edited)", triggers=("new",)) for r in before[::7])
    added = _numbered(3, start=count)
    removed = {r.id for r in before[1::5]} | {"never-registered"}
    after = {r.id: r for r in before if r.id not in removed}
    after.update({r.id: r for r in (*changed, *added) if r.id not in removed})
    spliced = splice_registry_yaml(text, layout, put=(*changed, *added), drop=removed)
    assert spliced == laid_out_registry_yaml(after.values())
    assert spliced[0] == _whole_document(tuple(after.values()))
    assert parse_registry_yaml(spliced[0]) == tuple(sorted(after.values(), key=_by_id))


def test_removing_every_entry_by_splicing_gives_the_empty_registry() -> None:
    text, layout = laid_out_registry_yaml(SIX)
    emptied = splice_registry_yaml(text, layout, drop={r.id for r in SIX})
    assert emptied == laid_out_registry_yaml(()) == (_whole_document(()), RegistryLayout((), ()))


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: text + "# appended\n",
        lambda text: text[:-1],
        lambda text: "#" + text[1:],
        lambda text: _whole_document(()),
    ],
)
def test_a_layout_that_does_not_fit_the_text_is_refused(edit: Any) -> None:
    text, layout = laid_out_registry_yaml(SIX)
    with pytest.raises(ValueError, match="layout"):
        splice_registry_yaml(edit(text), layout, put=SIX[:1])
