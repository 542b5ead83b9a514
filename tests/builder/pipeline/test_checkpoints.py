"""Checkpoint files: fixed key order, exact round trips, atomic replacement, lookups."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builder.pipeline import checkpoints as checkpoints_module
from builder.pipeline.checkpoints import (
    Checkpoint,
    CheckpointStore,
    parse_checkpoint,
    render_checkpoint,
)
from builder.pipeline.contract import CheckResult
from builder.pipeline.errors import PipelineError, SourceLocation
from builder.pipeline.serial import dump_yaml

KEYS = [
    "phase",
    "number",
    "builder_version",
    "input_digest",
    "output_digest",
    "passed",
    "checks",
    "warnings",
    "output",
]


def checkpoint(
    number: int = 1,
    phase: str = "skill_analysis",
    *,
    digest: str = "sha256:ab",
    passed: bool = True,
    **output,
) -> Checkpoint:
    return Checkpoint(
        phase=phase,
        number=number,
        builder_version="0.1.0",
        input_digest=digest,
        passed=passed,
        checks=(
            CheckResult("valid_yaml", True, "front matter parsed"),
            CheckResult(
                "required_fields",
                passed,
                "name is missing",
                SourceLocation("skills/x/SKILL.md", 2, 1),
            ),
        ),
        warnings=("no examples section",),
        output=output
        or {"id": "x", "body": "line one\nline two\n", "quote": "it's {{ raw }} \\ data"},
    )


def test_render_writes_keys_in_fixed_order_and_round_trips():
    original = checkpoint()
    text = render_checkpoint(original)
    top_level = [
        line.split(":", 1)[0]
        for line in text.splitlines()
        if line and not line.startswith((" ", "-"))
    ]
    assert top_level == KEYS
    assert parse_checkpoint(text, "x.yaml") == original
    assert "location:\n    path: skills/x/SKILL.md\n    line: 2\n    column: 1\n" in text


def test_a_checkpoint_s_text_is_its_head_s_dump_then_its_output_s():
    original = checkpoint()
    head = {key: value for key, value in _plain_of(original).items() if key != "output"}
    assert render_checkpoint(original) == dump_yaml(head, fast=True) + _whole(original.output)


def _plain_of(value: Checkpoint) -> dict:
    from builder.pipeline.checkpoints import _plain

    return _plain(value)


def test_write_is_byte_identical_and_reports_no_change(tmp_path: Path):
    store = CheckpointStore(tmp_path)
    assert store.write("x", checkpoint()).changed is True
    first = (tmp_path / "x" / "1-skill_analysis.yaml").read_bytes()
    assert store.write("x", checkpoint()).changed is False
    assert (tmp_path / "x" / "1-skill_analysis.yaml").read_bytes() == first
    assert b"\r" not in first


@pytest.mark.parametrize(
    "text",
    [
        "phase: [unclosed\n",
        "just a string\n",
        "phase: x\nnumber: 1\n",
        render_checkpoint(checkpoint()).replace("passed: true", "passed: maybe", 1),
    ],
    ids=["yaml-syntax", "not-a-mapping", "missing-keys", "wrong-type"],
)
def test_damaged_checkpoints_raise_a_pipeline_error_naming_the_file(text: str):
    with pytest.raises(PipelineError) as caught:
        parse_checkpoint(text, "cp/x/1-skill_analysis.yaml")
    assert caught.value.code == "P005"
    assert "cp/x/1-skill_analysis.yaml" in caught.value.message


def test_the_phase_1_index_names_agent_and_package_while_the_checkpoint_holds(tmp_path: Path):
    store = CheckpointStore(tmp_path)
    store.write("alpha", checkpoint(digest="sha256:aa", id="alpha", identifier="alpha_pkg"))
    found = store.identity("sha256:aa")
    assert found is not None and (found.agent_id, found.identifier) == ("alpha", "alpha_pkg")
    store.write("alpha", checkpoint(digest="sha256:a2", id="alpha", identifier="alpha_pkg"))
    assert store.identity("sha256:aa") is None  # the entry outlived the checkpoint it named
    assert store.find_agent(1, "skill_analysis", "sha256:a2") == "alpha"


def test_a_head_read_skips_the_output_but_still_detects_a_damaged_one(tmp_path: Path):
    store = CheckpointStore(tmp_path)
    store.write("x", checkpoint())
    head = store.read_head("x", 1, "skill_analysis")
    full = store.read("x", 1, "skill_analysis")
    assert head is not None and full is not None
    assert head.output is None and full.output["id"] == "x"
    assert head.output_digest == full.output_digest and head.checks == full.checks
    path = store.path("x", 1, "skill_analysis")
    path.write_text(path.read_text(encoding="utf-8").replace("line two", "line 2"), "utf-8")
    with pytest.raises(PipelineError) as caught:
        store.read_head("x", 1, "skill_analysis")
    assert "does not match its output_digest" in caught.value.message


def test_find_agent_matches_only_passing_checkpoints_with_the_digest(tmp_path: Path):
    store = CheckpointStore(tmp_path)
    store.write("alpha", checkpoint(digest="sha256:aa"))
    store.write("beta", checkpoint(digest="sha256:bb"))
    store.write("gamma", checkpoint(digest="sha256:cc", passed=False))
    assert store.find_agent(1, "skill_analysis", "sha256:bb") == "beta"
    assert store.find_agent(1, "skill_analysis", "sha256:cc") is None
    assert store.find_agent(1, "skill_analysis", "sha256:zz") is None


def test_remove_from_deletes_that_phase_and_later_ones_only(tmp_path: Path):
    store = CheckpointStore(tmp_path)
    for number, phase in enumerate(("skill_analysis", "architecture", "handoff_protocol"), 1):
        store.write("x", checkpoint(number, phase))
    store.remove_from("x", 2)
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == ["1-skill_analysis.yaml"]


def test_load_all_orders_by_phase_number(tmp_path: Path):
    store = CheckpointStore(tmp_path)
    store.write("x", checkpoint(3, "handoff_protocol"))
    store.write("x", checkpoint(1, "skill_analysis"))
    assert [c["number"] for c in store.load_all("x")] == [1, 3]
    assert list(store.load_all("x")[0]) == KEYS
    assert store.load_all("nobody") == ()


@pytest.mark.parametrize("agent_id", ["", "../escape", "a/b", "..", ".hidden", "a b"])
def test_unsafe_agent_ids_cannot_name_a_folder(tmp_path: Path, agent_id: str):
    with pytest.raises(PipelineError) as caught:
        CheckpointStore(tmp_path).path(agent_id, 1, "skill_analysis")
    assert caught.value.code == "P006"


def test_checkpoints_are_not_fsynced_and_any_truncation_of_one_is_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Written without fsync (they are rebuilt when damaged): a crash of the machine may leave
    a checkpoint or its index entry truncated, and each prefix must read as damaged (P005,
    which a build takes for "run the phase again") or as no entry, never as a checkpoint."""
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    store = CheckpointStore(tmp_path)

    store.write("x", checkpoint(digest="sha256:aa", id="x", identifier="x_pkg"))

    assert synced == []
    path = store.path("x", 1, "skill_analysis")
    whole = path.read_bytes()
    for end in range(len(whole)):
        path.write_bytes(whole[:end])
        for read in (store.read, store.read_head):
            with pytest.raises(PipelineError) as caught:
                read("x", 1, "skill_analysis")
            assert caught.value.code == "P005"
    path.write_bytes(whole)
    index = next((tmp_path / ".by-digest").iterdir())
    entry = index.read_bytes()
    for end in range(len(entry.rstrip())):  # the whole entry but its newline is the entry
        index.write_bytes(entry[:end])
        assert store.identity("sha256:aa") is None


def test_a_checkpoint_whose_last_warning_keeps_its_line_breaks_reads_back(tmp_path: Path):
    """A text ending in blank lines is a literal block that keeps them ("|+"), after which
    YAML ends a document with "...": as the head's last value, the output followed as a second
    document and every read of the checkpoint failed (P005)."""
    original = Checkpoint(
        phase="skill_analysis",
        number=1,
        builder_version="0.1.0",
        input_digest="sha256:ab",
        passed=True,
        checks=(CheckResult("valid_yaml", True, "parsed\n\n"),),
        warnings=("first", "ends in blank lines\n\n"),
        output={"id": "x", "body": "kept\n\n\n"},
    )
    store = CheckpointStore(tmp_path)
    store.write("x", original)
    text = store.path("x", 1, "skill_analysis").read_text(encoding="utf-8")
    assert "- |+\n  ends in blank lines\n\noutput:\n" in text  # no "..." between them
    assert store.read("x", 1, "skill_analysis") == original
    head = store.read_head("x", 1, "skill_analysis")
    assert head is not None and head.warnings == original.warnings


def _whole(plain: object) -> str:
    """What the output part of a checkpoint has always been: its one YAML dump."""
    return dump_yaml({"output": plain}, fast=True)


def test_each_entry_of_an_output_is_rendered_once_and_the_text_is_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Phases 2-5 each store the whole spec, an entry or two changed: the entries already
    rendered are not rendered again (YAML was a sixth of a pool worker's time), and the text
    is byte for byte the one dump of the whole output."""
    rendered: list[list[str]] = []

    def spy(data: dict[str, dict[str, object]], *, fast: bool = False) -> str:
        if "output" in data:  # not a checkpoint's head
            rendered.append(list(data["output"]))
        return dump_yaml(data, fast=fast)

    monkeypatch.setattr(checkpoints_module, "_ENTRY_TEXTS", {})
    monkeypatch.setattr(checkpoints_module, "dump_yaml", spy)
    architecture = {
        "id": "x",
        "instructions": {"text": "## Steps\n\n- one\n- two\n", "rules": ["be brief "]},
        "steps": [{"name": "a", "line": 3}, {"name": "b", "line": None}],
        "contract": {},
        "limit": 1,
    }
    handoff = {**architecture, "contract": {"receives": ["context"], "min_clarity": 0.5}}
    tools = {**handoff, "limit": True}  # equal to 1 for ==, not for YAML

    digests = [checkpoints_module.output_digest(p) for p in (architecture, handoff, tools)]

    assert rendered == [list(architecture), ["contract"], ["limit"]]
    assert digests == [_digest(_whole(p)) for p in (architecture, handoff, tools)]
    assert "  limit: true\n" in render_checkpoint(checkpoint(**tools))


def _digest(text: str) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


#: Text that YAML writes in every style: plain, quoted, literal blocks, escapes, anchors' marks.
_TEXT = st.lists(
    st.sampled_from(
        [*"ab -:#&*|>'\"\n\t\r\\{}[],?é", "\n\n", "\u2028", "\x85", "&id001", "*id001"]
    ),
    max_size=8,
).map("".join)
#: Text of lines that YAML writes as a literal block, ending in up to three line breaks ("|-",
#: "|" or "|+", after which a document ends with "...").
_BLOCK = st.builds(
    lambda lines, breaks: "\n".join(lines) + "\n" * breaks,
    st.lists(st.sampled_from(["a", "b c", "- d", "e: f", "#g"]), min_size=2, max_size=3),
    st.integers(0, 3),
)
_SCALARS = st.one_of(
    _TEXT,
    _BLOCK,
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
    st.none(),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)),
    max_leaves=12,
)
_KEYS = st.one_of(st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True), _TEXT)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(_KEYS, _VALUES, max_size=5), min_size=1, max_size=3))
def test_an_output_made_of_its_entries_texts_is_its_one_dump(outputs: list[dict]) -> None:
    """Whatever the outputs hold, each later one sharing entries with the ones before (in
    their order and the other way round), the output part of a checkpoint is exactly the one
    YAML dump of the output it always was."""
    shared: dict = {}
    for plain in outputs:
        shared = {**shared, **plain}  # later outputs keep the earlier entries, as phases do
        for output in (plain, shared, dict(reversed(shared.items()))):
            assert checkpoints_module._tail(output) == _whole(output)


@pytest.mark.parametrize(
    "kept",
    ["ends\n\n", "two\nlines\n\n\n", ["item", "ends\n\n"], {"deep": "ends\n\n"}],
    ids=["text", "more-breaks", "in-a-list", "in-a-mapping"],
)
def test_an_entry_ending_in_a_block_that_keeps_its_breaks_is_written_as_in_the_one_dump(
    kept: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text ending in blank lines is a literal block that keeps them ("|+"), and a document
    whose last scalar it is ends with "...": an entry rendered last, so with that mark, and then
    written before another, or rendered before another and then written last, must read as the
    one dump of its output does."""
    monkeypatch.setattr(checkpoints_module, "_ENTRY_TEXTS", {})
    alone, first, last = {"kept": kept}, {"kept": kept, "next": 1}, {"next": 1, "kept": kept}
    for output in (alone, first, last, alone):
        assert checkpoints_module._output_text(output) == _whole(output)
