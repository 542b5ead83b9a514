"""``--format github``: the same located problems as the human lines, as workflow commands."""

from __future__ import annotations

from pathlib import Path

import pytest
from build_factories import make_project

from builder.pipeline.annotations import Annotation, github_line
from builder.pipeline.errors import SourceLocation

UNCLOSED = "---\nname: broken\n"
MOVABLE = "---\nname: movable\ndescription: Moves fields.\ntype: operator\n---\n# Movable\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    root = make_project(tmp_path / "project", {})
    (root / "skills" / "broken").mkdir(parents=True)
    (root / "skills" / "broken" / "SKILL.md").write_text(UNCLOSED, encoding="utf-8")
    return root


def test_the_line_escapes_what_the_runner_would_split_on() -> None:
    where = SourceLocation("skills/a,b:c/SKILL.md", 3, 7)
    line = github_line(Annotation("S204", "100% bad\nsecond line", where))
    assert line == (
        "::error file=skills/a%2Cb%3Ac/SKILL.md,line=3,col=7,title=S204::100%25 bad%0Asecond line"
    )
    assert github_line(Annotation("D001", "drift")) == "::error title=D001::drift"
    assert github_line(Annotation("D001", "x", SourceLocation("f", 0, 4))) == (
        "::error file=f,title=D001::x"
    )


def test_validate_annotates_the_located_problem(cli, project: Path) -> None:
    human = cli(["validate", "skills/broken/SKILL.md"], project)
    github = cli(["validate", "--format", "github", "skills/broken/SKILL.md"], project)
    assert human.code == github.code == 1 and human.err == github.err
    (line,) = human.err.splitlines()
    place, _, rest = line.partition(": error[")
    path, row, col = place.split(":")
    code, _, message = rest.partition("]: ")
    assert github.out == f"::error file={path},line={row},col={col},title={code}::{message}\n"


def test_fmt_check_annotates_each_file_it_would_reformat(cli, project: Path) -> None:
    (project / "skills" / "movable").mkdir()
    (project / "skills" / "movable" / "SKILL.md").write_text(MOVABLE, encoding="utf-8")
    done = cli(["fmt", "--check", "--format", "github", "skills/movable"], project)
    assert done.code == 1
    assert done.out == (
        "::error file=skills/movable/SKILL.md,title=M002::mindrian fmt would reformat this "
        "file (run: mindrian fmt PATH)\n"
    )


def test_an_error_before_the_report_is_annotated_too(cli, project: Path) -> None:
    done = cli(["build", "--format", "github", "skills/missing/SKILL.md"], project)
    assert done.code != 0 and done.out.startswith("::error ")
    assert "title=" in done.out


def test_unknown_format_is_a_usage_error(cli, project: Path) -> None:
    done = cli(["check", "--format", "json"], project)
    assert done.code == 2 and "error[U041]" in done.err


@pytest.mark.parametrize("command", ["build", "register", "explain", "select"])
def test_format_json_is_the_json_flag(command: str) -> None:
    import typer

    from builder.cli.app import app

    group = typer.main.get_command(app)
    params = {p.name: p for p in group.commands[command].params}  # type: ignore[attr-defined]
    assert "json_out" in params and "report_format" in params


def test_select_format_json_prints_json(cli, project: Path) -> None:
    flag = cli(["select", "--trigger", "validate", "--json"], project)
    named = cli(["select", "--trigger", "validate", "--format", "json"], project)
    assert (named.code, named.out) == (flag.code, flag.out)
    assert named.out.lstrip().startswith(("[", "{"))
