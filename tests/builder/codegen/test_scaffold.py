"""``mindrian new``: the copier skeleton of every type passes phase 1 and keeps the answers as
data."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.codegen.scaffold import new_skill
from builder.pipeline.errors import ScaffoldError, UsageError
from builder.skill.model import AGENT_TYPES
from mindrian.agent_types import record_of


def _analyse(path: Path):
    from builder.phases.skill_analysis import analyse
    from builder.skill.source import load_source

    result = analyse(load_source(path))
    failed = [f"{c.name}: {c.reason}" for c in result.checks if not c.passed]
    assert not failed, failed
    assert not result.warnings, result.warnings
    return result.output


#: What phase 1 must find in each skeleton (a type's record names its own).
EXPECTED_SHAPE = {
    "operator": lambda d: d.section("quality_criteria") is not None,
    "role": lambda d: len(d.behavioral_rules) >= 2,
    "collaborative": lambda d: len(d.sub_agents) == 2,
    "pipeline": lambda d: len(d.steps) == 3 and not any(s.waits_for_user for s in d.steps),
    "guided": lambda d: len(d.steps) == 3 and all(s.waits_for_user for s in d.steps),
}


@pytest.mark.parametrize("agent_type", AGENT_TYPES)
def test_skeleton_of_every_type_passes_phase_one(tmp_path: Path, agent_type: str) -> None:
    path = new_skill(f"sample-{agent_type}", agent_type, tmp_path)
    assert path == tmp_path / f"sample-{agent_type}" / "SKILL.md"
    definition = _analyse(path)
    assert definition.id == f"sample-{agent_type}"
    assert definition.type == agent_type
    assert definition.section("methodology") is not None
    assert EXPECTED_SHAPE[record_of(agent_type).scaffold](definition)


@pytest.mark.parametrize(
    "description",
    [
        'Says "hi": {{ name }} {% if x %} and # not a comment',
        "Back\\slash C:\\Users\\me and ünïcödé 😀",
        '\'single\' and """triple""" quotes',
    ],
)
def test_description_is_kept_verbatim(tmp_path: Path, description: str) -> None:
    path = new_skill("odd-text", "operator", tmp_path, description=description)
    assert _analyse(path).description == description


def test_default_description_names_the_skill(tmp_path: Path) -> None:
    definition = _analyse(new_skill("quick-check", "pipeline", tmp_path))
    assert definition.description.startswith("Quick check: a pipeline skill.")


@pytest.mark.parametrize(
    ("name", "agent_type", "description", "code"),
    [
        ("Bad Name", "operator", None, "U010"),
        ("../escape", "operator", None, "U010"),
        ("fine", "wizard", None, "U011"),
        ("fine", "operator", "two\nlines", "U012"),
        ("fine", "operator", "   ", "U012"),
    ],
)
def test_bad_answers_are_refused(
    tmp_path: Path, name: str, agent_type: str, description: str | None, code: str
) -> None:
    with pytest.raises(UsageError) as caught:
        new_skill(name, agent_type, tmp_path, description=description)
    assert caught.value.code == code
    assert list(tmp_path.iterdir()) == []


def test_existing_folder_is_never_overwritten(tmp_path: Path) -> None:
    path = new_skill("taken", "role", tmp_path)
    path.write_text("mine\n", encoding="utf-8")
    with pytest.raises(ScaffoldError) as caught:
        new_skill("taken", "operator", tmp_path)
    assert caught.value.code == "N001"
    assert path.read_text(encoding="utf-8") == "mine\n"


def test_skeleton_is_deterministic(tmp_path: Path) -> None:
    first = new_skill("same", "collaborative", tmp_path / "a").read_bytes()
    second = new_skill("same", "collaborative", tmp_path / "b").read_bytes()
    assert first == second
    assert b"\r" not in first
    # The model script of the README's first run is written beside it (issue 38, 7).
    assert sorted(p.name for p in (tmp_path / "a" / "same").iterdir()) == [
        "SKILL.md",
        "model-script.yaml",
    ]


@pytest.mark.parametrize("agent_type", ["operator", "role", "collaborative", "pipeline", "guided"])
def test_the_model_script_beside_the_skill_loads_and_repeats(
    tmp_path: Path, agent_type: str
) -> None:
    from mindrian.model_choice import load_script

    new_skill("try-it", agent_type, tmp_path)
    script = load_script(tmp_path / "try-it" / "model-script.yaml")
    assert script.repeat and script.answers


@pytest.mark.parametrize("name", ["pricing-01", "go-no-go", "switch-on-off", "null-check"])
def test_every_word_of_the_name_is_a_trigger_as_text(tmp_path: Path, name: str) -> None:
    """A word YAML reads as a number, a boolean or null (``01``, ``no``, ``on``, ``null``) was
    written bare, and the skeleton ``new`` made failed its own phase 1 (S202: expected text)."""
    path = new_skill(name, "operator", tmp_path)
    assert _analyse(path).triggers[: len(name.split("-"))] == tuple(name.split("-"))
