"""Chain folders (issue 27, item 5): ``CHAIN.md`` plus numbered stage files is one pipeline.

The shape is the Mindrian author's plugin (``pipelines/<name>/CHAIN.md`` beside ``01-…md``,
``02-…md``); the fixture ``tests/builder/fixtures/skills/chains/relay`` is a synthetic chain
of that shape. Each stage file is one phase, in the order of its number, named after its file,
with its whole body as the phase's instructions.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from build_factories import make_project

from builder.codegen.prompt_items import prompt_items
from builder.phases.architecture import decide_type
from builder.phases.skill_analysis import analyse
from builder.pipeline.errors import SkillError
from builder.skill.chain import chain_stage_bytes, skill_file, stage_files
from builder.skill.source import load_source

RELAY = Path(__file__).resolve().parents[1] / "fixtures" / "skills" / "chains" / "relay"
STAGES = ("01-gather.md", "02-weigh.md", "03-report.md")


@pytest.fixture
def chain(tmp_path: Path) -> Path:
    """A copy of the relay chain that a test may break."""
    return Path(shutil.copytree(RELAY, tmp_path / "relay"))


def _body(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("---\n", 2)[2].strip()


def _analyse(folder: Path):  # type: ignore[no-untyped-def]
    return analyse(load_source(folder, "pipelines/relay")).output


def _refusal(folder: Path) -> SkillError:
    with pytest.raises(SkillError) as refused:
        _analyse(folder)
    return refused.value


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_chain_folder_is_read_from_its_chain_file_with_its_stage_files(chain: Path) -> None:
    source = load_source(chain, "pipelines/relay")
    assert source.path == "pipelines/relay/CHAIN.md"
    assert source.data == (chain / "CHAIN.md").read_bytes()
    assert [name for name, _ in source.files] == list(STAGES)
    assert skill_file(chain) == chain / "CHAIN.md"


def test_a_skill_md_beside_a_chain_file_is_the_skill(chain: Path) -> None:
    (chain / "SKILL.md").write_text("---\nname: x\ndescription: d\n---\n", encoding="utf-8")
    source = load_source(chain, "pipelines/relay")
    assert source.path == "pipelines/relay/SKILL.md"
    assert source.files == ()  # stage files belong to a chain only


def test_each_stage_file_is_one_step_in_order_with_its_whole_body(chain: Path) -> None:
    definition = _analyse(chain)
    assert [s.name for s in definition.steps] == ["gather", "weigh", "report"]
    for step, name in zip(definition.steps, STAGES, strict=True):
        assert step.instructions == _body(chain / name)
        assert step.source == f"pipelines/relay/{name}"
        assert not step.waits_for_user
    assert definition.steps[0].line == 10  # the body's first line in 01-gather.md
    assert [(s.input_from, s.output_to) for s in definition.steps] == [
        (None, "weigh"),
        ("gather", "report"),
        ("weigh", None),
    ]
    assert definition.stage_files == tuple(f"pipelines/relay/{n}" for n in STAGES)
    assert definition.display_name == "Relay Review Pipeline"
    assert definition.metadata["stages"] == 3
    # The chain's own keys are understood, so they draw no "unknown key" warning.
    warnings = analyse(load_source(chain, "pipelines/relay")).warnings
    assert not [w for w in warnings if "'stages'" in w or "'display_name'" in w]
    assert "estimated_time" in " ".join(warnings)


def test_the_type_decision_is_a_pipeline_by_the_chain_folder_rule(chain: Path) -> None:
    decision = decide_type(_analyse(chain))
    assert (decision.type, decision.rule) == ("pipeline", "chain_folder")
    assert "01-gather.md, 02-weigh.md, 03-report.md" in decision.reason


def test_every_stage_body_is_a_part_item_of_its_phase(chain: Path) -> None:
    source = load_source(chain, "pipelines/relay")
    items = prompt_items(source.data, chain_stage_bytes(source))
    assert dict(items.parts) == {
        "gather": _body(chain / "01-gather.md"),
        "weigh": _body(chain / "02-weigh.md"),
        "report": _body(chain / "03-report.md"),
    }
    assert "## Stage Sequence" in items.skill  # CHAIN.md's body reaches every phase


def test_a_stage_with_crlf_line_ends_is_told_as_its_part_item_says(chain: Path) -> None:
    for name in STAGES:
        path = chain / name
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    source = load_source(chain, "pipelines/relay")
    parts = prompt_items(source.data, chain_stage_bytes(source)).parts
    steps = analyse(source).output.steps
    assert "\r\n" in steps[0].instructions
    assert {s.name: s.instructions for s in steps} == dict(parts)


def test_a_stage_file_changes_the_digest(chain: Path) -> None:
    before = load_source(chain).digest
    _edit(chain / "02-weigh.md", "at most 3", "at most 2")
    assert load_source(chain).digest != before


def test_stage_files_are_ordered_by_number_not_by_name() -> None:
    found = stage_files(["10-last.md", "2-second.md", "01-first.md", "README.md", "notes.txt"])
    assert [(s.number, s.name) for s in found] == [(1, "first"), (2, "second"), (10, "last")]


# -- located errors ------------------------------------------------------------------------


def test_a_missing_stage_file_names_the_gap(chain: Path) -> None:
    (chain / "02-weigh.md").unlink()
    error = _refusal(chain)
    assert error.code == "S220"
    assert error.location is not None and error.location.path == "pipelines/relay/03-report.md"
    assert "stage 2 is missing" in error.message and "01-gather.md" in error.message


def test_a_stage_numbered_twice_is_refused(chain: Path) -> None:
    shutil.copy(chain / "02-weigh.md", chain / "02-score.md")
    error = _refusal(chain)
    assert error.code == "S220"
    assert "numbered twice (02-score.md and 02-weigh.md)" in error.message


def test_a_stage_numbered_0_is_refused(chain: Path) -> None:
    (chain / "00-intro.md").write_text("---\nstage: 0\n---\nIntro.\n", encoding="utf-8")
    error = _refusal(chain)
    assert error.code == "S220"
    assert error.location is not None and error.location.path == "pipelines/relay/00-intro.md"
    assert "00-intro.md is numbered 0; stage files are numbered from 1" in error.message


def test_a_chain_without_stage_files_is_refused(chain: Path) -> None:
    for name in STAGES:
        (chain / name).unlink()
    error = _refusal(chain)
    assert error.code == "S220"
    assert error.location is not None and error.location.path == "pipelines/relay/CHAIN.md"


def test_a_stage_count_that_disagrees_with_the_files_is_located(chain: Path) -> None:
    _edit(chain / "CHAIN.md", "stages: 3", "stages: 4")
    error = _refusal(chain)
    assert error.code == "S221"
    assert error.location is not None
    assert (error.location.path, error.location.line) == ("pipelines/relay/CHAIN.md", 5)
    assert "stages: 4 but the folder holds 3 stage files" in error.message


def test_phases_in_a_chain_file_are_refused(chain: Path) -> None:
    _edit(chain / "CHAIN.md", "stages: 3\n", "stages: 3\nphases: [one]\n")
    error = _refusal(chain)
    assert error.code == "S221"
    assert error.location is not None and error.location.line == 6


def test_a_stage_of_another_chain_is_located(chain: Path) -> None:
    _edit(chain / "02-weigh.md", "chain: relay", "chain: thesis")
    error = _refusal(chain)
    assert error.code == "S222"
    assert error.location is not None
    assert (error.location.path, error.location.line) == ("pipelines/relay/02-weigh.md", 4)
    assert "chain: 'thesis'" in error.message


def test_a_stage_number_that_disagrees_with_the_file_name_is_located(chain: Path) -> None:
    _edit(chain / "03-report.md", "stage: 3", "stage: 4")
    error = _refusal(chain)
    assert error.code == "S222"
    assert error.location is not None
    assert (error.location.path, error.location.line) == ("pipelines/relay/03-report.md", 2)


@pytest.mark.parametrize(
    ("name", "old", "new", "line"),
    [
        ("02-weigh.md", "input_from: gather", "input_from: report", 5),
        ("02-weigh.md", "output_to: report", "output_to: gather", 6),
        ("01-gather.md", "input_from: null", "input_from: report", 5),
        ("03-report.md", "output_to: null", "output_to: gather", 5),
    ],
)
def test_a_link_to_a_stage_other_than_the_neighbour_is_located(
    chain: Path, name: str, old: str, new: str, line: int
) -> None:
    _edit(chain / name, old, new)
    error = _refusal(chain)
    assert error.code == "S223"
    assert error.location is not None
    assert (error.location.path, error.location.line) == (f"pipelines/relay/{name}", line)


def test_two_stages_of_one_name_are_refused(chain: Path) -> None:
    (chain / "03-report.md").rename(chain / "03-weigh.md")
    _edit(chain / "02-weigh.md", "output_to: report", "output_to: weigh")
    error = _refusal(chain)
    assert error.code == "S207"
    assert "'weigh' is given twice" in error.message


def test_a_stage_file_without_front_matter_is_located(chain: Path) -> None:
    (chain / "03-report.md").write_text("# Stage 3\n\nJust text.\n", encoding="utf-8")
    error = _refusal(chain)
    assert error.code == "S101"
    assert error.location is not None and error.location.path == "pipelines/relay/03-report.md"


# -- through phase 7 ---------------------------------------------------------------------


@pytest.mark.slow
def test_the_chain_builds_through_phase_7_as_one_pipeline(cli, tmp_path: Path) -> None:
    project = make_project(tmp_path, {})
    shutil.copytree(RELAY, project / "pipelines" / "relay")
    result = cli(["build", "pipelines/relay", "--jobs", "1", "--quiet"], project)
    assert result.code == 0, result.err
    spec = (project / "generated" / "relay" / "spec.yaml").read_text(encoding="utf-8")
    assert "type: pipeline\ntype_rule: chain_folder\n" in spec
    assert spec.count("  source: pipelines/relay/0") == 3


# -- the Stage Sequence list against the stage files ------------------------------------


def _stage_list_warnings(folder: Path) -> list[str]:
    result = analyse(load_source(folder, "pipelines/relay"))
    return [w for w in result.warnings if "warning[W121]" in w]


def test_a_stage_list_that_agrees_with_the_files_says_nothing(chain: Path) -> None:
    assert _stage_list_warnings(chain) == []


def test_a_listed_stage_without_a_file_is_located_at_its_item(chain: Path) -> None:
    _edit(chain / "CHAIN.md", "2. **weigh**", "2. **score**")
    assert _stage_list_warnings(chain) == [
        "pipelines/relay/CHAIN.md:24:1: warning[W121]: the 'Stage Sequence' list names "
        "'score', but no stage file does; add one or drop the item",
        "pipelines/relay/CHAIN.md:21:1: warning[W121]: the 'Stage Sequence' list leaves out "
        "the stage file 02-weigh.md; list it",
    ]


def test_stages_listed_out_of_order_are_located_at_the_list(chain: Path) -> None:
    _edit(chain / "CHAIN.md", "1. **gather**", "1. **weigh**")
    _edit(chain / "CHAIN.md", "2. **weigh**", "2. **gather**")
    assert _stage_list_warnings(chain) == [
        "pipelines/relay/CHAIN.md:21:1: warning[W121]: the 'Stage Sequence' list orders the "
        "stages weigh, gather, report; the stage files run gather, weigh, report, and the "
        "files' order is the pipeline's"
    ]
