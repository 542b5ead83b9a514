"""``[tool.mindrian]`` that the build cannot use is one located U042 line and exit status 2,
before anything is built; a typo is refused rather than ignored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.orchestration.project import load_config
from builder.orchestration.serve_settings import ServeSettings, load_serve_settings

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
        ("[tool.mindrian]\nserve = true\n", "[tool.mindrian.serve] is a boolean"),
        ("[tool.mindrian.serve]\nhost-tools = 'yes'\n", "serve] host-tools is a string; write"),
        ("[tool.mindrian.serve]\nhost_tools = true\n", "unknown key 'host_tools' in [tool.m"),
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


@pytest.mark.parametrize(
    ("table", "host_tools"),
    [
        ("", False),
        ("[tool.mindrian.serve]\n", False),
        ("[tool.mindrian.serve]\nhost-tools = true\n", True),
    ],
)
def test_serve_settings_default_to_no_host_tools(
    project: Path, table: str, host_tools: bool
) -> None:
    (project / "pyproject.toml").write_text("[tool.mindrian]\n" + table, encoding="utf-8")
    assert load_serve_settings(project) == ServeSettings(host_tools=host_tools)


def test_serve_refuses_an_unusable_serve_table_before_anything(cli, project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[tool.mindrian.serve]\nhost-tools = 1\n", encoding="utf-8"
    )
    done = cli(["serve", "--model", "openai:gpt-4o"], project)
    assert done.code == 2, done.err
    assert done.err == (
        "pyproject.toml: error[U042]: the project configuration cannot be used: "
        "[tool.mindrian.serve] host-tools is an integer; write it as true or false\n"
    )
    assert not (project / ".mindrian").exists()
