"""``mindrian new NAME --type T --dest DIR``, run in-process.

What it creates passes ``mindrian validate``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from build_factories import make_project

from builder.skill.model import AGENT_TYPES


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return make_project(tmp_path / "project", {})


@pytest.mark.parametrize(
    ("given", "agent_type"),
    [*((t, t) for t in AGENT_TYPES), ("GUIDED", "guided"), ("Role", "role")],
)
def test_new_skill_passes_validate(cli, project: Path, given: str, agent_type: str) -> None:
    created = cli(["new", "fresh-skill", "--type", given, "--dest", "drafts"], project)
    assert (created.code, created.out, created.err) == (
        0,
        "drafts/fresh-skill/SKILL.md\n",
        "",
    )
    checked = cli(["validate", "drafts/fresh-skill/SKILL.md"], project)
    assert (checked.code, checked.err) == (0, "")
    assert checked.out == f"ok drafts/fresh-skill/SKILL.md (fresh-skill, {agent_type})\n"


def test_default_destination_is_the_projects_skills_folder(cli, project: Path) -> None:
    (project / "sub").mkdir()
    created = cli(
        ["new", "pricing-check", "--description", "Checks a price list."],
        project / "sub",
    )
    assert (created.code, created.out) == (0, "skills/pricing-check/SKILL.md\n")
    checked = cli(["validate", "skills/pricing-check"], project)
    assert checked.out == "ok skills/pricing-check/SKILL.md (pricing-check, operator)\n"


def test_an_existing_folder_is_refused_with_exit_1_and_left_alone(cli, project: Path) -> None:
    assert cli(["new", "taken", "--dest", "drafts"], project).code == 0
    skill = project / "drafts/taken/SKILL.md"
    skill.write_text("mine\n", encoding="utf-8")
    again = cli(["new", "taken", "--type", "role", "--dest", "drafts"], project)
    assert (again.code, again.out) == (1, "")
    assert (
        again.err == "error[N001]: drafts/taken already exists; choose another name or remove it\n"
    )
    assert skill.read_text(encoding="utf-8") == "mine\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["new", "fine", "--type", "wizard"],
            "error[U011]: unknown agent type 'wizard'; expected one of " + ", ".join(AGENT_TYPES),
        ),
        (
            ["new", "Bad Name"],
            "error[U010]: skill name 'Bad Name' must be lowercase words",
        ),
        (["new", "../escape"], "error[U010]"),
        (["new", "fine", "--description", "two\nlines"], "error[U012]"),
        (["new"], "Missing argument 'NAME'"),
    ],
)
def test_bad_answers_are_usage_errors_and_create_nothing(
    cli, project: Path, args: list[str], message: str
) -> None:
    result = cli([*args, "--dest", "drafts"], project)
    assert result.code == 2
    assert message in result.err
    assert "Traceback" not in result.err
    assert not (project / "drafts").exists()


@pytest.mark.parametrize(("agent_type", "article"), [("operator", "an"), ("role", "a")])
def test_the_placeholder_description_names_the_type_with_its_article(
    cli, project: Path, agent_type: str, article: str
) -> None:
    """Repro: every new operator skill said 'Pricing check: a operator skill'."""
    assert cli(["new", "pricing-check", "--type", agent_type], project).code == 0
    text = (project / "skills" / "pricing-check" / "SKILL.md").read_text(encoding="utf-8")
    assert f"Pricing check: {article} {agent_type} skill." in text
