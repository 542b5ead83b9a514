"""A skill folder that is a link (issue 38, 1): followed when it leads inside the project, left
out with a located warning when it leads outside, and never retired while its source exists;
validate, build PATH, build --all and check agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from build_factories import make_pipeline, make_project, skill_text


def _linked(tmp_path: Path) -> Path:
    """A project with a skill of its own, one linked from inside it (library/) and one linked
    from outside it."""
    (tmp_path / "project").mkdir()
    project = make_project(tmp_path / "project", {"own-skill": skill_text("own-skill")})
    for where, name in ((project / "library", "inner-skill"), (tmp_path / "outside", "far-skill")):
        (where / name).mkdir(parents=True)
        (where / name / "SKILL.md").write_text(skill_text(name), encoding="utf-8")
    (project / "skills" / "inner-skill").symlink_to(project / "library" / "inner-skill")
    (project / "skills" / "far-skill").symlink_to(tmp_path / "outside" / "far-skill")
    return project


_WARNING = (
    "skills/far-skill: warning[W126]: links to a folder outside the project, so its skill is "
    "not built (and no package is retired for it); move the skill into the project or link to "
    "a folder inside it\n"
)


def test_build_all_follows_links_inside_and_warns_of_links_outside(cli, tmp_path: Path) -> None:
    """Repro: ``build --all`` skipped a linked skill folder without a word."""
    project = _linked(tmp_path)
    built = cli(["build", "--all", "--until", "skill_analysis", "--json"], project)
    assert built.code == 0, built.err
    paths = [b["path"] for b in json.loads(built.out)["builds"]]
    assert paths == ["skills/inner-skill/SKILL.md", "skills/own-skill/SKILL.md"]
    assert _WARNING in built.err


@pytest.mark.parametrize("command", ["validate", "build"])
def test_naming_a_skill_linked_from_outside_is_refused_as_build_all_leaves_it_out(
    cli, tmp_path: Path, command: str
) -> None:
    """Repro: ``validate`` and ``build skills/linked-skill`` accepted what ``build --all``
    skipped, so ``check`` then found drift."""
    project = _linked(tmp_path)
    outside = (tmp_path / "outside" / "far-skill").resolve().as_posix()
    refused = cli([command, "skills/far-skill/SKILL.md"], project)
    assert refused.code == 1
    assert refused.err == (
        f"skills/far-skill: error[S114]: skills/far-skill links to {outside}, outside the "
        "project: build --all leaves it out, so it is not built here either\n"
    )
    inner = ["skills/inner-skill/SKILL.md"] + (["--until", "skill_analysis"] * (command == "build"))
    assert cli([command, *inner], project).code == 0


def test_a_skill_linked_from_outside_is_never_retired(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repro: the next ``build --all`` printed ``removed linked-skill: its skill is gone`` and
    deleted the package although the skill was there."""
    monkeypatch.setattr("builder.orchestration.runner.load_phase", make_pipeline().load)
    retired: list[object] = []
    monkeypatch.setattr(
        "builder.orchestration.batch.retire_removed", lambda *args: retired.append(args) or ()
    )
    project = _linked(tmp_path)
    built = cli(["build", "--all"], project)
    assert built.code == 0, built.err
    assert retired == [] and _WARNING in built.err
    (project / "skills" / "far-skill").unlink()
    assert cli(["build", "--all"], project).code == 0
    assert len(retired) == 1  # with no link out of the project, retiring goes on


@pytest.mark.parametrize("command", ["validate", "build"])
def test_a_skill_named_by_a_path_outside_the_project_is_built_as_before(
    cli, tmp_path: Path, command: str
) -> None:
    """Repro: ``build ../outside/far-skill/SKILL.md`` from the project was refused as a link
    (S114): the path was compared before its ``..`` was folded."""
    project = _linked(tmp_path)
    named = ["../outside/far-skill/SKILL.md"] + (
        ["--until", "skill_analysis"] * (command == "build")
    )
    done = cli([command, *named], project)
    assert done.code == 0, done.err
