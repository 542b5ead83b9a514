"""``build --all`` finds the skills as ``Path.glob("**/SKILL.md")`` does, from one listing of each
folder."""

from __future__ import annotations

import os
from pathlib import Path

from builder.orchestration.batch import discover


def _globbed(root: Path) -> tuple[Path, ...]:
    found = (root / "skills").glob("**/SKILL.md")
    return tuple(sorted(found, key=lambda p: p.relative_to(root).as_posix()))


def test_discovery_finds_what_the_glob_finds(tmp_path: Path) -> None:
    root = tmp_path / "project"
    skills = root / "skills"
    for folder in ("b", "a", "a/nested", ".hidden", "plain/deeper/deepest", "SKILL.md"):
        (skills / folder).mkdir(parents=True, exist_ok=True)
    for folder in ("b", "a", "a/nested", ".hidden", "plain/deeper/deepest"):
        (skills / folder / "SKILL.md").write_text("---\nname: x\n---\n", encoding="utf-8")
    (skills / "plain" / "notes.md").write_text("", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text("", encoding="utf-8")
    os.symlink(outside, skills / "linked")  # a link to a folder outside the project: left out
    inside = root / "kept-elsewhere"
    inside.mkdir()
    (inside / "SKILL.md").write_text("", encoding="utf-8")
    os.symlink(inside, skills / "inside")  # a link to a folder inside the project: followed
    (skills / "dangling").mkdir()
    os.symlink(tmp_path / "missing", skills / "dangling" / "SKILL.md")  # leads nowhere
    (skills / "alias").mkdir()
    os.symlink(outside / "SKILL.md", skills / "alias" / "SKILL.md")  # leads to a file

    found = discover(root)

    # The glob follows no link to a folder; discovery follows those staying in the project.
    assert set(found) - set(_globbed(root)) == {skills / "inside" / "SKILL.md"}
    assert set(_globbed(root)) <= set(found)
    assert [p.relative_to(skills).as_posix() for p in found] == [
        ".hidden/SKILL.md",
        "SKILL.md",  # a folder named SKILL.md: the glob counts it too
        "a/SKILL.md",
        "a/nested/SKILL.md",
        "alias/SKILL.md",
        "b/SKILL.md",
        "inside/SKILL.md",
        "plain/deeper/deepest/SKILL.md",
    ]


def test_no_skills_folder_finds_nothing(tmp_path: Path) -> None:
    assert discover(tmp_path) == () == _globbed(tmp_path)
