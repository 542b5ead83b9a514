"""Generated package names cannot shadow modules, and fit in a folder name."""

from __future__ import annotations

import pytest

from builder.phases.skill_analysis import analyse
from builder.pipeline.contract import SkillSource
from builder.pipeline.errors import SkillError
from builder.skill.model import MAX_ID_LENGTH
from builder.skill.source import source_digest

PATH = "skills/x/SKILL.md"


def analysed(name: str) -> SkillSource:
    raw = f"---\ndescription: Does one thing.\nname: {name}\n---\n".encode()
    return SkillSource(path=PATH, data=raw, files=(), digest=source_digest(raw, ()))


@pytest.mark.parametrize(
    ("name", "owner"),
    [
        ("anthropic", "distribution 'anthropic'"),
        ("typer", "distribution 'typer'"),
        ("jinja2", "distribution 'Jinja2'"),
        ("black", "distribution 'black'"),
        ("pip", "distribution 'pip'"),
        ("Black", "distribution 'black'"),
    ],
)
def test_a_name_that_would_shadow_an_installed_module_is_refused(name: str, owner: str) -> None:
    with pytest.raises(SkillError) as caught:
        analyse(analysed(name))
    error = caught.value
    assert error.code == "S209"
    assert error.location is not None and error.location.line == 3
    assert owner in error.message and "rename the skill" in error.message


@pytest.mark.parametrize(
    ("name", "identifier"),
    [("sitecustomize", "sitecustomize_"), ("usercustomize", "usercustomize_"), ("test", "test_")],
)
def test_start_up_hooks_and_test_are_renamed(name: str, identifier: str) -> None:
    assert analyse(analysed(name)).output.identifier == identifier


def test_a_name_too_long_for_a_folder_is_refused_at_its_line() -> None:
    with pytest.raises(SkillError) as caught:
        analyse(analysed("n" * 300))
    assert caught.value.code == "S210"
    assert caught.value.location is not None and caught.value.location.line == 3
    assert str(MAX_ID_LENGTH) in caught.value.message


def test_an_ordinary_name_keeps_its_identifier() -> None:
    assert analyse(analysed("pws-validation")).output.identifier == "pws_validation"
