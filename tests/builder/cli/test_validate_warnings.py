"""``mindrian validate`` and ``build`` print the same warnings of phase 1, coded and located,
including where the Agent Skills specification is stricter than mindrian (issue 27, item 7;
issue 38, item 6)."""

from __future__ import annotations

from pathlib import Path

from build_factories import make_project, skill_text

from builder.phases.skill_analysis import analyse
from builder.pipeline.contract import SkillSource
from builder.skill.portability import portability_warnings


def test_a_foreign_type_is_w101_in_validate_as_in_build(cli, tmp_path: Path) -> None:
    text = skill_text("weird-skill").replace("type: operator", "type: weird")
    project = make_project(tmp_path, {"weird-skill": text})
    result = cli(["validate", "skills/weird-skill/SKILL.md"], project)
    assert result.code == 0
    assert result.out == "ok skills/weird-skill/SKILL.md (weird-skill, type inferred in phase 2)\n"
    assert result.err.startswith(
        "skills/weird-skill/SKILL.md:4:1: warning[W101]: type 'weird' is not a Mindrian agent type"
    )


def test_an_unknown_key_is_a_coded_located_warning(cli, tmp_path: Path) -> None:
    """Repro (issue 38, 6): ``unknown front-matter key 'cowork' on line 5`` had no code and no
    ``path:line:col``."""
    project = make_project(tmp_path, {"demo": skill_text("demo", colour="blue")})
    result = cli(["validate", "skills/demo/SKILL.md"], project)
    assert result.err == (
        "skills/demo/SKILL.md:5:1: warning[W123]: unknown front-matter key 'colour' is kept as "
        "metadata\n"
    )


def test_build_prints_the_warnings_validate_prints(cli, tmp_path: Path) -> None:
    """Repro (issue 38, 6): on 41 skills validate printed 49 warnings (W106, W107) and build one;
    with --format github neither printed them as annotations."""
    project = make_project(tmp_path, {"folder": skill_text("Other Name", colour="blue")})
    validated = cli(["validate", "skills/folder/SKILL.md", "--format", "github"], project)
    warnings = [line for line in validated.err.splitlines() if "warning[" in line]
    assert [line.split("warning[")[1][:4] for line in warnings] == ["W123", "W107", "W106"]
    args = ["build", "skills/folder", "--until", "skill_analysis", "--format", "github"]
    built = cli(args, project)
    assert built.code == 0, built.err
    assert [line for line in built.err.splitlines() if "warning[" in line] == warnings
    annotations = [line for line in built.out.splitlines() if line.startswith("::warning ")]
    assert annotations == [line for line in validated.out.splitlines() if line.startswith("::")]
    assert annotations[0] == (
        "::warning file=skills/folder/SKILL.md,line=5,col=1,title=W123::unknown front-matter "
        "key 'colour' is kept as metadata"
    )
    assert len(annotations) == 3


def test_where_the_specification_is_stricter(cli, tmp_path: Path) -> None:
    long = "x" * 1025
    project = make_project(tmp_path, {"folder": skill_text("Other Name", long)})
    result = cli(["validate", "skills/folder/SKILL.md"], project)
    assert result.code == 0
    codes = [line.split("warning[")[1][:4] for line in result.err.splitlines()]
    assert codes == ["W105", "W107", "W106"]
    assert "skills/folder/SKILL.md:2:1: warning[W106]: name 'Other Name' differs from its " in (
        result.err
    )
    assert "skills/folder/SKILL.md:3:1: warning[W105]: description is 1025 characters" in (
        result.err
    )
    quiet = cli(["validate", "skills/folder/SKILL.md", "--quiet"], project)
    assert (quiet.code, quiet.out, quiet.err) == (0, "", "")


def test_a_portable_skill_gets_no_warning(cli, tmp_path: Path) -> None:
    project = make_project(tmp_path, {"demo-skill": skill_text("demo-skill")})
    result = cli(["validate", "skills/demo-skill/SKILL.md"], project)
    assert (result.code, result.err) == (0, "")


def test_names_the_specification_refuses() -> None:
    def codes(name: str, path: str = "skills/x/SKILL.md") -> list[str]:
        text = f"---\nname: {name}\ndescription: d\n---\nBody.\n"
        definition = analyse(SkillSource(path, text.encode())).output
        return [w.split("warning[")[1][:4] for w in portability_warnings(definition)]

    assert codes("x") == []
    assert codes("a--b", "skills/a--b/SKILL.md") == ["W107"]
    assert codes("-a", "skills/-a/SKILL.md") == ["W107"]
    assert codes("a" * 65, f"skills/{'a' * 65}/SKILL.md") == ["W107"]
    assert codes("a" * 64, f"skills/{'a' * 64}/SKILL.md") == []
    # A loose file has no folder to match.
    assert codes("other", "notes/other.md") == []


def test_an_oversized_skill_is_refused_by_its_size_check_alike(cli, tmp_path: Path) -> None:
    """Repro (issue 38, 6): a 2 MB SKILL.md was refused as ``valid_yaml`` (S107), a check of the
    YAML, by validate and build alike; the check that refuses it is the size limit's."""
    big = skill_text("big") + ("x" * 99 + "\n") * 21_000
    project = make_project(tmp_path, {"big": big})
    size = len(big.encode())
    expected = (
        f"skills/big/SKILL.md: error[S107]: within_limits: SKILL.md is {size} bytes; "
        "the limit is 1048576 bytes"
    )
    for args in (["validate", "skills/big/SKILL.md"], ["build", "skills/big"], ["build", "--all"]):
        result = cli(args, project)
        assert result.code == 1, args
        assert expected in result.err.splitlines(), (args, result.err)
        github = cli([*args, "--format", "github"], project)
        assert github.code == 1, args
        assert (
            f"::error file=skills/big/SKILL.md,title=S107::{expected.split(': ', 2)[2]}"
            in github.out.splitlines()
        ), (args, github.out)
