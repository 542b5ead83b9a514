"""The Skills extension's catalog: which files a skill serves, from where, and what it refuses."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from pathlib import Path

import pytest

from mindrian.graph import FrameworkRecord, write_registry_yaml
from mindrian.mcp.skills import MAX_SKILL_FILES, SkillCatalog, catalog_of_project
from mindrian.project import ProjectPaths

SKILL_MD = (
    b"---\nname: alpha\ndescription: Does alpha things.\ncreated: 2026-01-02\n---\n\n# Alpha\n"
)


def _project(root: Path, skills: dict[str, bytes]) -> ProjectPaths:
    """A project whose registered agents have these SKILL.md files (in their package's skill/)."""
    (root / "pyproject.toml").write_text("[tool.mindrian]\n", encoding="utf-8")
    records = []
    for name, text in skills.items():
        package = root / "generated" / name.replace("-", "_")
        folder = package / "skill"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_bytes(text)
        (package / "spec.yaml").write_text(
            f"id: {name}\nidentifier: {name.replace('-', '_')}\ntype: operator\n"
            f"source_path: skills/{name}/SKILL.md\n",
            encoding="utf-8",
        )
        records.append(
            FrameworkRecord(
                id=name,
                name=name,
                type="operator",
                description="d",
                version="1.0.0",
                source_digest=f"sha256:{name}",
            )
        )
    write_registry_yaml(tuple(records), root / "generated" / "registry.yaml")
    return ProjectPaths(root)


def _paths(catalog: SkillCatalog) -> dict[str, list[str]]:
    return {s.name: [f.path for f in s.files] for s in catalog.skills}


def test_every_file_of_the_skill_folder_is_served_sorted_with_its_digest(tmp_path: Path) -> None:
    project = _project(tmp_path, {"alpha": SKILL_MD})
    folder = tmp_path / "generated" / "alpha" / "skill"
    (folder / "references").mkdir()
    (folder / "references" / "guide.md").write_bytes(b"guide\r\n")
    (folder / "assets").mkdir()
    (folder / "assets" / "logo.bin").write_bytes(bytes(range(256)))
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"junk")

    (skill,) = catalog_of_project(project).skills
    assert [f.path for f in skill.files] == ["SKILL.md", "assets/logo.bin", "references/guide.md"]
    entry = skill.entry()
    assert entry["uri"] == "skill://alpha/SKILL.md"
    # Verbatim front matter, as JSON: the date is its ISO string.
    assert entry["frontmatter"] == {
        "name": "alpha",
        "description": "Does alpha things.",
        "created": "2026-01-02",
    }
    logo = entry["resources"][1]
    assert logo == {
        "uri": "skill://alpha/assets/logo.bin",
        "digest": "sha256:" + hashlib.sha256(bytes(range(256))).hexdigest(),
        "size": 256,
    }
    assert catalog_of_project(project) == catalog_of_project(project)


def test_the_package_copy_is_served_and_the_source_tree_is_not_needed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    project = _project(tmp_path, {"alpha": SKILL_MD, "beta": SKILL_MD.replace(b"alpha", b"beta")})
    source = tmp_path / "skills" / "alpha"
    source.mkdir(parents=True)
    (source / "SKILL.md").write_bytes(b"---\nname: alpha\ndescription: the source\n---\n")
    (source / "extra.md").write_text("only in the source", encoding="utf-8")
    shutil.rmtree(tmp_path / "generated" / "beta" / "skill")  # built before the copy existed
    with caplog.at_level(logging.WARNING, logger="mindrian.mcp"):
        (skill,) = catalog_of_project(project).skills
    assert [f.path for f in skill.files] == ["SKILL.md"]
    assert skill.files[0].content == SKILL_MD
    assert "beta not served: its package has no skill/" in caplog.text


def test_links_that_leave_the_skill_are_not_followed(tmp_path: Path) -> None:
    project = _project(tmp_path, {"alpha": SKILL_MD})
    folder = tmp_path / "generated" / "alpha" / "skill"
    secret = tmp_path / "secret.txt"
    secret.write_text("do not serve", encoding="utf-8")
    os.symlink(secret, folder / "leak.txt")
    os.symlink(tmp_path, folder / "up")
    (folder / "inside.md").write_text("inside", encoding="utf-8")
    os.symlink(folder / "inside.md", folder / "alias.md")

    (skill,) = catalog_of_project(project).skills
    assert [f.path for f in skill.files] == ["SKILL.md", "alias.md", "inside.md"]


def test_a_skill_over_the_file_limit_is_not_served_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    beta = SKILL_MD.replace(b"alpha", b"beta")
    project = _project(tmp_path, {"alpha": SKILL_MD, "beta": beta})
    many = tmp_path / "generated" / "beta" / "skill" / "many"
    many.mkdir()
    for index in range(MAX_SKILL_FILES):
        (many / f"{index}.txt").write_text("x", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="mindrian.mcp"):
        catalog = catalog_of_project(project)
    assert list(_paths(catalog)) == ["alpha"]
    assert "beta not served" in caplog.text and "512" in caplog.text


@pytest.mark.parametrize(
    "text",
    [
        b"# no front matter\n",
        b"---\nname: Not A Name\ndescription: d\n---\n",
        b"---\nname: ../up\ndescription: d\n---\n",
        b"---\nname: alpha\n---\n",
        b"---\n- a list\n---\n",
    ],
)
def test_a_skill_without_a_usable_name_and_description_is_not_served(
    tmp_path: Path, text: bytes
) -> None:
    project = _project(tmp_path, {"alpha": text})
    assert catalog_of_project(project).skills == ()


def test_cursors_page_the_catalog_and_a_foreign_cursor_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path, {"alpha": SKILL_MD})
    catalog = catalog_of_project(project)
    page = catalog.page(None)
    assert [s.name for s in page.skills] == ["alpha"] and page.next_cursor is None
    for cursor in ("1", "-1", "abc", "9" * 40, "0"):
        with pytest.raises(ValueError, match="invalid cursor"):
            catalog.page(cursor)
