"""``build --all`` finds the skills as ``Path.glob("**/SKILL.md")`` does, from one listing of each
folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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


def test_a_link_back_to_a_folder_above_is_not_followed(tmp_path: Path) -> None:
    """Followed, it would never end; the folder is found once, through its own path."""
    root = tmp_path / "project"
    deep = root / "skills" / "group" / "inner"
    deep.mkdir(parents=True)
    (deep / "SKILL.md").write_text("", encoding="utf-8")
    os.symlink(root / "skills" / "group", deep / "up")  # back to a folder above
    os.symlink(deep, root / "skills" / "group" / "again")  # a second way to the same folder
    (root / "skills" / "real").mkdir()
    os.symlink(tmp_path / "project" / "skills", root / "skills" / "real" / "top")

    found = [p.relative_to(root).as_posix() for p in discover(root)]

    assert found == [
        "skills/group/again/SKILL.md",
        "skills/group/inner/SKILL.md",
    ]


def test_a_tree_without_links_resolves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A no-op of many skills lists thousands of folders; resolving each stats every part of
    its path, and only a link needs it."""
    root = tmp_path / "project"
    for k in range(5):
        (root / "skills" / f"s{k}" / "references" / "deep").mkdir(parents=True)
        (root / "skills" / f"s{k}" / "SKILL.md").write_text("", encoding="utf-8")
    resolved: list[str] = []
    real = os.path.realpath

    def realpath(path: str) -> str:
        resolved.append(path)
        return real(path)

    monkeypatch.setattr(os.path, "realpath", realpath)

    assert len(discover(root)) == 5
    assert len(resolved) == 2  # the project and its skills folder
