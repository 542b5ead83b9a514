"""Phase 1 refuses unusable SKILL.md input with a stable code, the failed check's name and a precise
location."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from builder.phases import skill_analysis
from builder.phases.skill_analysis import analyse
from builder.pipeline.contract import SkillSource
from builder.pipeline.errors import SkillError
from builder.skill import source as source_module
from builder.skill.frontmatter import MAX_ALIAS_EXPANSION, MAX_ALIASES, MAX_DEPTH
from builder.skill.model import AGENT_TYPES
from builder.skill.source import MAX_REFERENCE_BYTES, MAX_SKILL_BYTES, load_source, source_digest

PATH = "skills/bad/SKILL.md"
HEAD = "name: Sample\ndescription: Does one thing.\n"


def source(data: str | bytes, files: tuple[tuple[str, bytes], ...] = ()) -> SkillSource:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return SkillSource(path=PATH, data=raw, files=files, digest=source_digest(raw, files))


def refused(data: str | bytes, files: tuple[tuple[str, bytes], ...] = ()) -> SkillError:
    with pytest.raises(SkillError) as caught:
        analyse(source(data, files))
    return caught.value


def alias_chain(levels: int, per_level: int, base_items: int) -> str:
    """Each level is a list of ``per_level`` aliases to the level below (billion-laughs shape)."""
    lines = [f"l0: &l0 [{', '.join(['x'] * base_items)}]"]
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * per_level)}]")
    return "---\n" + HEAD + "\n".join(lines) + "\n---\n"


def nested_lists(depth: int) -> str:
    return "---\n" + HEAD + "deep: " + "[" * depth + "]" * depth + "\n---\n"


#: (id, SKILL.md text or bytes, code, line, column, words the message must contain)
BAD_INPUTS: list[tuple[str, str | bytes, str, int, int, tuple[str, ...]]] = [
    ("no front matter", "# Title\n\nText.\n", "S101", 1, 1, ("no front matter", "'---'")),
    ("empty file", "", "S101", 1, 1, ("no front matter",)),
    ("front matter not first", "\n---\nname: x\n---\n", "S101", 1, 1, ("must start",)),
    ("unclosed front matter", "---\nname: x\ndescription: y\n", "S101", 1, 1, ("never closed",)),
    ("list front matter", "---\n- a\n- b\n---\n", "S103", 2, 1, ("mapping", "a list")),
    ("scalar front matter", "---\njust words\n---\n", "S103", 2, 1, ("mapping", "'just words'")),
    ("empty front matter", "---\n---\nbody\n", "S103", 1, 1, ("empty",)),
    (
        "tab indentation",
        "---\n" + HEAD + "triggers:\n\t- a\n---\n",
        "S102",
        5,
        1,
        ("tab character",),
    ),
    (
        # A one-line value is read leniently (W103); one cut by a comment is not.
        "unquoted colon",
        "---\nname: x\ndescription: Note: this # breaks\n  more\n---\n",
        "S102",
        3,
        18,
        ("quotes",),
    ),
    (
        "unclosed flow list",
        "---\n" + HEAD + "triggers: [a, b\nversion: 1\n---\n",
        "S102",
        5,
        8,
        ("flow sequence", "line 4"),
    ),
    (
        "unterminated quote",
        "---\nname: 'open\ndescription: y\n---\n",
        "S102",
        3,
        15,
        ("end of stream",),
    ),
    (
        "bad indentation",
        "---\nname: x\ntriggers:\n  - a\n - b\n---\n",
        "S102",
        5,
        2,
        ("expected <block end>",),
    ),
    ("undefined alias", "---\n" + HEAD + "a: *nowhere\n---\n", "S102", 4, 4, ("undefined alias",)),
    ("control character", "---\nname: a\x07b\n---\n", "S102", 2, 8, ("U+0007",)),
    (
        "bad int",
        "---\n" + HEAD + "n: !!int twelve\n---\n",
        "S102",
        4,
        4,
        ("'twelve' is not an integer",),
    ),
    (
        "too many aliases",
        "---\n" + HEAD + "a: &a x\nb: [" + ", ".join(["*a"] * (MAX_ALIASES + 5)) + "]\n---\n",
        "S104",
        5,
        5 + 4 * MAX_ALIASES,
        (f"more than {MAX_ALIASES} aliases",),
    ),
    ("billion laughs", alias_chain(9, 9, 9), "S104", 7, 20, ("aliases",)),
    (
        "alias expansion",
        alias_chain(6, 3, 20),
        "S104",
        10,
        1,
        (f"more than {MAX_ALIAS_EXPANSION} values",),
    ),
    (
        "recursive alias",
        "---\n" + HEAD + "loop: &loop [1, *loop]\n---\n",
        "S104",
        4,
        7,
        ("recursive",),
    ),
    ("utf-16", "---\nname: x\n---\n".encode("utf-16"), "S105", 1, 1, ("UTF-16",)),
    (
        "latin-1 byte",
        b"---\nname: caf\xe9\ndescription: y\n---\n",
        "S105",
        2,
        10,
        ("byte offset 13", "0xe9"),
    ),
    (
        "latin-1 in body",
        b"---\nname: x\ndescription: y\n---\n\nna\xefve\n",
        "S105",
        6,
        3,
        ("byte offset 34",),
    ),
    (
        "nul byte",
        b"---\nname: a\x00b\ndescription: y\n---\n",
        "S106",
        2,
        8,
        ("NUL", "byte offset 11"),
    ),
    (
        "duplicate key",
        "---\n" + HEAD + "name: again\n---\n",
        "S109",
        4,
        1,
        ("duplicate key 'name'", "line 2"),
    ),
    (
        "python tag",
        "---\n" + HEAD + "x: !!python/object/apply:os.system [ls]\n---\n",
        "S110",
        4,
        4,
        ("not supported",),
    ),
    ("custom tag", "---\n" + HEAD + "x: !secret abc\n---\n", "S110", 4, 4, ("'!secret'",)),
    ("binary tag", "---\n" + HEAD + "x: !!binary aGk=\n---\n", "S110", 4, 4, ("binary",)),
    ("merge of a scalar", "---\n" + HEAD + "base:\n  <<: 5\n---\n", "S102", 5, 7, ("merge key",)),
    ("complex key", "---\n" + HEAD + "? [a, b]\n: c\n---\n", "S102", 4, 3, ("plain value",)),
    (
        "too deep",
        nested_lists(MAX_DEPTH + 5),
        "S111",
        4,
        6 + MAX_DEPTH,
        (f"deeper than {MAX_DEPTH}",),
    ),
    (
        "missing name",
        "---\ndescription: y\n---\n",
        "S201",
        1,
        1,
        ("missing required field 'name'",),
    ),
    (
        "missing description",
        "---\nname: x\n---\n",
        "S201",
        1,
        1,
        ("missing required field 'description'",),
    ),
    (
        "missing nested",
        "---\n" + HEAD + "tools:\n  custom_tools:\n    - name: t\n---\n",
        "S201",
        6,
        7,
        ("'function'", "tools.custom_tools.0"),
    ),
    (
        "blank description",
        "---\nname: x\ndescription: '  '\n---\n",
        "S202",
        3,
        1,
        ("must not be empty",),
    ),
    (
        "name not text",
        "---\nname: 12\ndescription: y\n---\n",
        "S202",
        2,
        1,
        ("expected text, found a number",),
    ),
    (
        "triggers wrong type",
        "---\n" + HEAD + "triggers: {a: 1}\n---\n",
        "S202",
        4,
        1,
        ("text or a list", "a mapping"),
    ),
    (
        "weight out of range",
        "---\n" + HEAD + "chains_to:\n  - target: jtbd\n    weight: 2\n---\n",
        "S202",
        6,
        5,
        ("above the maximum 1",),
    ),
    (
        "handoff typo",
        "---\n" + HEAD + "handoff:\n  retruns: [output]\n---\n",
        "S202",
        5,
        3,
        ("'retruns'", "did you mean 'returns'"),
    ),
    (
        "bad return behavior",
        "---\n" + HEAD + "handoff:\n  return_behavior: shout\n---\n",
        "S202",
        5,
        3,
        ("'shout'", "synthesize"),
    ),
    (
        "nested schema error",
        "---\n" + HEAD + "metadata:\n  mindrian:\n    sub_agents: [x]\n---\n",
        "S202",
        6,
        18,
        ("a mapping", "found text"),
    ),
    (
        "several problems counted",
        "---\nname: 1\ndescription: 2\n---\n",
        "S202",
        2,
        1,
        ("and 1 more problem",),
    ),
    ("name with slash", "---\nname: ../etc/passwd\ndescription: y\n---\n", "S203", 2, 1, ("'/'",)),
    (
        "name with backslash",
        "---\nname: 'C:\\evil'\ndescription: y\n---\n",
        "S203",
        2,
        1,
        ("'\\'",),
    ),
    ("name with dots", "---\nname: a..b\ndescription: y\n---\n", "S203", 2, 1, ("'..'",)),
    (
        "name empty after normalising",
        "---\nname: '!!!'\ndescription: y\n---\n",
        "S203",
        2,
        1,
        ("no letters or digits",),
    ),
    (
        "chain target with slash",
        "---\n" + HEAD + "chains_to: [a/b]\n---\n",
        "S203",
        4,
        13,
        ("chain target 'a/b'",),
    ),
    (
        "handoff id empty",
        "---\n" + HEAD + "handoff:\n  can_delegate_to: ['???']\n---\n",
        "S203",
        5,
        21,
        ("handoff.can_delegate_to",),
    ),
    (
        # A near-miss is a typo; a foreign type (wizard) builds with warning W101 instead.
        "misspelt type",
        "---\n" + HEAD + "type: operatr\n---\n",
        "S204",
        4,
        1,
        ("'operatr'", "did you mean 'operator'", ", ".join(AGENT_TYPES)),
    ),
    (
        "misspelt nested type",
        "---\n" + HEAD + "metadata:\n  mindrian:\n    type: guidd\n---\n",
        "S204",
        6,
        5,
        ("'guidd'", "did you mean 'guided'"),
    ),
    (
        "chains_to and chaining",
        "---\n" + HEAD + "chains_to: [a]\nchaining: [b]\n---\n",
        "S205",
        5,
        1,
        ("chaining", "chains_to (line 4)"),
    ),
    (
        "mcp_tools and tools.mcp_servers",
        "---\n" + HEAD + "mcp_tools: [{server: a}]\ntools:\n  mcp_servers: [{server: b}]\n---\n",
        "S205",
        6,
        3,
        ("tools.mcp_servers", "mcp_tools"),
    ),
    (
        "score min above max",
        "---\n" + HEAD + "scores:\n  dimensions:\n    - {name: a, min: 5, max: 1}\n---\n",
        "S206",
        6,
        7,
        ("min 5 above max 1",),
    ),
    (
        "overlapping bands",
        "---\n"
        + HEAD
        + "scores:\n  bands:\n    - {label: GO, min: 70, max: 100}\n    - {label: PIVOT, min: 50, "
        "max: 75}\n---\n",
        "S206",
        7,
        7,
        ("'PIVOT'", "overlaps", "'GO'"),
    ),
    (
        "duplicate step",
        "---\n" + HEAD + "phases: [draft, Draft]\n---\n",
        "S207",
        4,
        17,
        ("step 'Draft' appears twice", "line 4"),
    ),
    (
        "duplicate chain target",
        "---\n" + HEAD + "chains_to: [JTBD, jtbd]\n---\n",
        "S207",
        4,
        19,
        ("chain target 'jtbd'",),
    ),
    (
        "duplicate score",
        "---\n" + HEAD + "scores:\n  dimensions: [{name: a}, {name: a}]\n---\n",
        "S207",
        5,
        27,
        ("score 'a'",),
    ),
]


@pytest.mark.parametrize(
    "text, code, line, column, words",
    [case[1:] for case in BAD_INPUTS],
    ids=[case[0] for case in BAD_INPUTS],
)
def test_bad_input(
    text: str | bytes, code: str, line: int, column: int, words: tuple[str, ...]
) -> None:
    error = refused(text)
    check = "valid_yaml" if code.startswith("S1") else "required_fields"
    assert (error.code, error.location.path, error.location.line, error.location.column) == (
        code,
        PATH,
        line,
        column,
    ), error.render()
    assert error.message.startswith(f"{check}: "), error.message
    for word in words:
        assert word in error.message, error.message
    assert error.render().startswith(f"{PATH}:{line}:{column}: error[{code}]: {check}: ")


def test_every_phase1_code_is_exercised() -> None:
    codes = {case[2] for case in BAD_INPUTS}
    folder_codes = {"S100", "S107", "S108", "S112", "S113"}  # exercised below, with folder files
    documented = {
        line.split()[0]
        for line in (skill_analysis.__doc__ or "").splitlines()
        if re.match(r"S\d{3} ", line)
    }
    assert documented == codes | folder_codes


def test_skill_md_over_one_mebibyte() -> None:
    padding = "x" * (MAX_SKILL_BYTES + 1)
    error = refused("---\n" + HEAD + "---\n" + padding)
    assert (error.code, error.location.line) == ("S107", 0)
    assert str(MAX_SKILL_BYTES) in error.message
    assert error.message.startswith("within_limits: ")  # a size is not YAML (issue 38, 6)


def test_load_source_refuses_a_large_file_without_reading_it_all(tmp_path: Path) -> None:
    big = tmp_path / "SKILL.md"
    with big.open("wb") as handle:
        handle.truncate(MAX_SKILL_BYTES + 1)
    with pytest.raises(SkillError) as caught:
        load_source(big, "big/SKILL.md")
    assert (caught.value.code, caught.value.location.path) == ("S107", "big/SKILL.md")
    assert caught.value.message.startswith("within_limits: ")


def test_load_source_missing_file_and_folder_without_skill(tmp_path: Path) -> None:
    with pytest.raises(SkillError) as missing:
        load_source(tmp_path / "nope" / "SKILL.md", "nope/SKILL.md")
    assert (missing.value.code, missing.value.location.path) == ("S100", "nope/SKILL.md")
    assert "no such file" in missing.value.message
    with pytest.raises(SkillError) as empty_folder:
        load_source(tmp_path, "empty")
    assert (empty_folder.value.code, empty_folder.value.location.path) == ("S100", "empty/SKILL.md")
    assert "has no SKILL.md" in empty_folder.value.message


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read files without read permission")
def test_load_source_unreadable_file(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text("---\n" + HEAD + "---\n")
    skill.chmod(0)
    try:
        with pytest.raises(SkillError) as caught:
            load_source(skill)
        assert caught.value.code == "S100"
    finally:
        skill.chmod(0o644)


def test_folder_file_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "SKILL.md").write_text("---\n" + HEAD + "---\n")
    (tmp_path / "references").mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / "references" / name).write_text("# ref\n" * 10)
    monkeypatch.setattr(source_module, "MAX_FOLDER_FILES", 2)
    with pytest.raises(SkillError) as too_many:
        load_source(tmp_path)
    assert too_many.value.code == "S108" and "3 files" in too_many.value.message
    assert too_many.value.message.startswith("within_limits: ")
    monkeypatch.setattr(source_module, "MAX_FOLDER_FILES", 10)
    monkeypatch.setattr(source_module, "MAX_FOLDER_BYTES", 100)
    with pytest.raises(SkillError) as too_big:
        load_source(tmp_path)
    assert too_big.value.code == "S108"


def test_link_out_of_the_skill_folder(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("private")
    skill = tmp_path / "skill"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\n" + HEAD + "---\n")
    (skill / "scripts" / "leak.sh").symlink_to(secret)
    with pytest.raises(SkillError) as caught:
        load_source(skill)
    assert caught.value.code == "S112" and "leak.sh" in caught.value.message


def test_reference_over_one_mebibyte_names_its_own_file() -> None:
    """Repro: a 10 MB references/*.md was accepted (the folder limit is 16 MiB) and became a
    10 MB spec.yaml; the same bytes under scripts/ are not inlined and still build."""
    big = b"# big\n" + b"x" * MAX_REFERENCE_BYTES
    error = refused("---\n" + HEAD + "---\n", files=(("references/big.md", big),))
    assert (error.code, error.location.path) == ("S113", "skills/bad/references/big.md")
    assert error.render().startswith("skills/bad/references/big.md: error[S113]: within_limits: ")
    assert str(MAX_REFERENCE_BYTES) in error.message
    at_limit = (("references/big.md", big[:MAX_REFERENCE_BYTES]), ("scripts/big.md", big))
    (reference,) = analyse(source("---\n" + HEAD + "---\n", files=at_limit)).output.references
    assert len(reference.text) == MAX_REFERENCE_BYTES


def test_reference_that_is_not_utf8_names_its_own_file() -> None:
    error = refused("---\n" + HEAD + "---\n", files=(("references/notes.md", b"ok\n\xff\n"),))
    assert (error.code, error.location.path, error.location.line, error.location.column) == (
        "S105",
        "skills/bad/references/notes.md",
        2,
        1,
    )
    assert "byte offset 3" in error.message


def test_billion_laughs_is_stopped_by_either_guard_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # With the alias count lifted, the expansion cap still stops the classic bomb (bounded at 10 000
    # values).
    from builder.skill import frontmatter

    monkeypatch.setattr(frontmatter, "MAX_ALIASES", 1000)
    error = refused(alias_chain(9, 9, 9))
    assert error.code == "S104" and "values" in error.message
