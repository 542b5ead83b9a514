"""``mindrian init``: adds [tool.mindrian], skills/, generated/ and .gitignore lines, changing
nothing else; a second run changes nothing; what it cannot do is a located error."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from builder.codegen.init import GITIGNORE_LINES
from mindrian.project import find_project_root

USER_PYPROJECT = (
    '[project]\nname = "plugins"  # our own\nversion = "2"\n\n[tool.ruff]\nline-length = 120\n'
)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_init_adds_the_table_without_touching_the_rest(cli, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(USER_PYPROJECT, encoding="utf-8")
    (tmp_path / ".gitignore").write_text("dist/", encoding="utf-8")  # no final newline
    done = cli(["init"], tmp_path)
    assert done.code == 0, done.err
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    assert text.startswith(USER_PYPROJECT + "\n[tool.mindrian]\n")
    assert tomllib.loads(text)["tool"]["ruff"] == {"line-length": 120}
    assert find_project_root(tmp_path) == tmp_path
    assert (tmp_path / "skills").is_dir() and (tmp_path / "generated").is_dir()
    ignored = (tmp_path / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert ignored[0] == "dist/" and set(GITIGNORE_LINES) <= set(ignored)
    assert "mindrian new" in done.out and "mindrian build --all" in done.out


def test_init_is_idempotent(cli, tmp_path: Path) -> None:
    assert cli(["init"], tmp_path).code == 0
    before = _snapshot(tmp_path)
    again = cli(["init"], tmp_path)
    assert again.code == 0 and "already a mindrian project" in again.out
    assert _snapshot(tmp_path) == before


def test_init_creates_a_pyproject_holding_only_the_table(cli, tmp_path: Path) -> None:
    assert cli(["init", "repo"], tmp_path).code == 1  # no such folder
    (tmp_path / "repo").mkdir()
    assert cli(["init", "repo"], tmp_path).code == 0
    table = tomllib.loads((tmp_path / "repo" / "pyproject.toml").read_text(encoding="utf-8"))
    assert table == {"tool": {"mindrian": {}}}


def test_crlf_files_stay_crlf(cli, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_bytes(b'[project]\r\nname = "x"\r\n')
    assert cli(["init"], tmp_path).code == 0
    data = (tmp_path / "pyproject.toml").read_bytes()
    assert b"[tool.mindrian]\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"pyproject.toml": "a = 1\nb = = 2\n"}, "pyproject.toml:2:5: error[N003]"),
        ({"pyproject.toml": "tool = { black = {} }\n"}, "pyproject.toml: error[N003]"),
        ({"skills": "not a folder"}, "skills: error[N002]"),
        ({"generated": ""}, "generated: error[N002]"),
    ],
)
def test_init_refuses_what_it_would_have_to_clobber(
    cli, tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    before = _snapshot(tmp_path)
    done = cli(["init"], tmp_path)
    assert done.code == 1 and expected in done.err and "Traceback" not in done.err
    assert _snapshot(tmp_path) == before


def test_init_inside_a_project_refuses_naming_it(cli, tmp_path: Path) -> None:
    """Repro (issue 38, 4): ``init`` in ``skills/some-skill/`` made a nested project that then
    captured every command run there."""
    assert cli(["init"], tmp_path).code == 0
    inner = tmp_path / "skills" / "some-skill"
    inner.mkdir()
    refused = cli(["init"], inner)
    assert refused.code == 1
    assert refused.err == (
        f"{tmp_path.as_posix()}/pyproject.toml: error[N004]: . is inside the mindrian project "
        f"{tmp_path.as_posix()}, whose commands it would capture; run mindrian there, or give "
        "--nested to make a project here anyway\n"
    )
    assert not (inner / "pyproject.toml").exists() and find_project_root(inner) == tmp_path
    forced = cli(["init", "--nested"], inner)
    assert forced.code == 0 and find_project_root(inner) == inner
    assert cli(["init"], inner).code == 0  # a project itself: idempotent, not nested
