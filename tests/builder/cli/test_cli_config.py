"""``[tool.mindrian]`` that the build cannot use is one located U042 line and exit status 2,
before anything is built; a typo is refused rather than ignored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.orchestration.project import load_config

SKILL = "---\nname: tiny\ndescription: A tiny skill for configuration tests.\n---\n\nBody.\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "skills" / "tiny").mkdir(parents=True)
    (tmp_path / "skills" / "tiny" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("pyproject", "expected"),
    [
        ("[tool.mindrian\nx = 1\n", "pyproject.toml:1:15: error[U042]: "),
        ("[tool.mindrian]\nmodels = 'openai:gpt-4o'\n", "[tool.mindrian.models] is a string"),
        ("[tool.mindrian.models]\noperator = 5\n", "operator is an integer"),
        ("[tool.mindrian.models]\noperater = 'openai:gpt-4o'\n", "unknown agent type 'operater'"),
        ("[tool.mindrian]\nmodles = { operator = 'openai:gpt-4o' }\n", "unknown key 'modles'"),
        ("[tool.mindrian]\nmcp = 'x'\n", "[tool.mindrian.mcp] is a string"),
        ("[tool]\nmindrian = 3\n", "[tool.mindrian] is an integer"),
        ("tool = 3\n", "[tool] is an integer"),
    ],
)
@pytest.mark.parametrize("command", [["build", "--all"], ["check"]])
def test_an_unusable_configuration_is_one_located_line(
    cli, project: Path, pyproject: str, expected: str, command: list[str]
) -> None:
    (project / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    done = cli(command, project)
    assert done.code == 2, done.err
    assert expected in done.err and "error[U042]" in done.err, done.err
    assert "internal error" not in done.err and "Traceback" not in done.err
    assert not (project / "generated").exists()


def test_the_json_report_carries_the_code_and_place(cli, project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.mindrian]\nx = [1,\n", encoding="utf-8")
    done = cli(["build", "--all", "--json"], project)
    error = json.loads(done.out)["error"]
    assert done.code == 2 and error["code"] == "U042"
    assert error["location"]["path"] == "pyproject.toml" and error["location"]["line"] == 3


def test_a_usable_table_keeps_its_models_and_catalog(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[tool.mindrian.models]\nrole = 'openai:gpt-4o'\n[tool.mindrian.mcp.x]\nurl = 'u'\n",
        encoding="utf-8",
    )
    config = load_config(project)
    assert config.models["role"] == "openai:gpt-4o" and config.mcp_catalog == {"x": {"url": "u"}}
