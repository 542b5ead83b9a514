"""The files that travel with a skill: which are read, their modes, the copy limits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from builder.skill.package_files import skill_files
from builder.skill.source import MAX_COPIED_FILE_BYTES, folder_names, load_source

BODY = """\
---
name: demo
description: d
---

Fill in [the form](forms.md#top) and see `examples/` and `notes/deep/` but not `missing.md`,
`../outside.md`, `/etc/passwd` or `.hidden/x`.
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    files = {
        "SKILL.md": BODY,
        "forms.md": "form\n",
        "unlinked.md": "never read\n",
        "references/guide.md": "# Guide\n",
        "scripts/run.sh": "#!/bin/sh\n",
        "assets/logo.svg": "<svg/>\n",
        "templates/page.html": "<html/>\n",
        "examples/one.md": "one\n",
        "notes/deep/a.txt": "a\n",
        "notes/top.txt": "not linked\n",
        ".hidden/x": "hidden\n",
        "assets/__pycache__/c.pyc": "cache\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "scripts/run.sh").chmod(0o755)
    (tmp_path / "outside.md").write_text("secret\n")
    return root


def test_the_parts_and_what_skill_md_links_to_are_read(folder: Path) -> None:
    source = load_source(folder / "SKILL.md", "demo/SKILL.md")
    assert [name for name, _ in source.files] == [
        "assets/logo.svg",
        "examples/one.md",
        "forms.md",
        "notes/deep/a.txt",
        "references/guide.md",
        "scripts/run.sh",
        "templates/page.html",
    ]
    assert folder_names(folder / "SKILL.md", "demo/SKILL.md") == tuple(n for n, _ in source.files)
    assert source.executables == ("scripts/run.sh",)
    assert source.left_out == ()
    copied = skill_files(source)
    assert copied[0].name == "SKILL.md" and copied[0].data == BODY.encode()
    assert [f.name for f in copied if f.executable] == ["scripts/run.sh"]


def test_the_executable_bit_is_part_of_the_digest(folder: Path) -> None:
    before = load_source(folder / "SKILL.md").digest
    (folder / "scripts/run.sh").chmod(0o644)
    after = load_source(folder / "SKILL.md")
    assert after.executables == () and after.digest != before


def test_a_link_leading_out_of_the_folder_is_not_followed(folder: Path) -> None:
    (folder / "forms.md").unlink()
    (folder / "forms.md").symlink_to(folder.parent / "outside.md")
    source = load_source(folder / "SKILL.md")
    assert "forms.md" not in dict(source.files)


def test_a_name_in_backticks_too_long_for_a_file_name_is_no_file(folder: Path) -> None:
    """A long token in prose (a key, base64) is looked up like any name: nothing there, not an
    F001 ENAMETOOLONG that failed validate and build."""
    skill = folder / "SKILL.md"
    skill.write_text(BODY + f"\nThe key is `{'A' * 300}` and `{'B' * 200}/{'C' * 300}.md`.\n")
    source = load_source(skill, "demo/SKILL.md")
    names = [name for name, _ in source.files]
    assert "forms.md" in names and not any(name.startswith(("A", "B")) for name in names)


def test_a_file_over_the_copy_limit_is_left_out_unread(folder: Path) -> None:
    (folder / "assets/big.bin").write_bytes(b"\0" * (MAX_COPIED_FILE_BYTES + 1))
    source = load_source(folder / "SKILL.md")
    assert source.left_out == (("assets/big.bin", MAX_COPIED_FILE_BYTES + 1),)
    assert "assets/big.bin" not in dict(source.files)


def test_what_is_left_out_is_part_of_the_digest(folder: Path) -> None:
    before = load_source(folder / "SKILL.md").digest
    (folder / "assets/big.bin").write_bytes(b"\0" * (MAX_COPIED_FILE_BYTES + 1))
    assert load_source(folder / "SKILL.md").digest != before


def test_phase_1_warns_w122_at_each_file_left_out(folder: Path) -> None:
    from builder.phases.skill_analysis import analyse

    (folder / "assets/big.bin").write_bytes(b"\0" * (MAX_COPIED_FILE_BYTES + 1))
    result = analyse(load_source(folder / "SKILL.md", "skills/demo/SKILL.md"))
    (warning,) = [w for w in result.warnings if "W122" in w]
    assert warning.startswith(
        "skills/demo/assets/big.bin: warning[W122]: assets/big.bin (1048577 bytes) is left out "
        "of the package"
    )


def test_a_name_the_folder_cannot_hold_is_not_looked_up(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A no-op lists every skill's folder: a name in backticks whose first part is not in the
    folder's listing (most: code, options, identifiers) costs no look-up of its own; one that
    may be there in another letter case (a case-insensitive file system) still does."""
    skill = folder / "SKILL.md"
    skill.write_text(BODY + "\nRun `make_report` with `--dry-run`; see `Forms.md`.\n")
    looked: list[str] = []
    lstat = os.lstat

    def spy(path: str | os.PathLike[str]) -> os.stat_result:
        looked.append(os.fspath(path)[len(os.fspath(folder)) + 1 :])
        return lstat(path)

    monkeypatch.setattr(os, "lstat", spy)
    names = folder_names(skill, "demo/SKILL.md")

    assert "forms.md" in names and "Forms.md" not in names  # this file system tells case
    assert sorted(looked) == ["Forms.md", "examples", "forms.md", "notes/deep"]
