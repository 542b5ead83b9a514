"""The files other repositories use: .pre-commit-hooks.yaml and the composite Action.

The Action's run step is ``ci/action.sh``; here it runs against a recording ``mindrian`` and
``gh`` (what it passes, where the diff goes, which status wins); the user-like install test
runs it against the real, installed mindrian.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from builder.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "ci" / "action.sh"


def _build_extra() -> list[str]:
    table = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(table["project"]["optional-dependencies"]["build"])


def test_hooks_run_real_commands_with_the_build_extra() -> None:
    import typer

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [h["id"] for h in hooks] == ["mindrian-fmt", "mindrian-validate", "mindrian-check"]
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    for hook in hooks:
        program, command, *_ = hook["entry"].split()
        assert program == "mindrian" and command in commands
        assert hook["language"] == "python"
        assert hook["additional_dependencies"] == _build_extra()
        re.compile(hook["files"])
    assert re.search(hooks[0]["files"], "skills/pws/SKILL.md")
    assert not re.search(hooks[0]["files"], "skills/pws/references/SKILL.md.bak")


def test_the_action_declares_and_documents_what_it_uses() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert all(spec.get("description") for spec in inputs.values())
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    used = set(re.findall(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", text))
    assert used == set(inputs), "every input is used and every used input declared"
    steps = action["runs"]["steps"]
    assert any('"${GITHUB_ACTION_PATH}[build]"' in s.get("run", "") for s in steps)
    assert any("ci/action.sh" in s.get("run", "") for s in steps)
    assert SCRIPT.stat().st_mode & stat.S_IXUSR


def _recorder(folder: Path, name: str, body: str) -> None:
    tool = folder / name
    tool.write_text(f'#!/bin/sh\necho "{name} $*" >> "$RECORD"\n{body}\n', encoding="utf-8")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def fake_tools(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _recorder(
        bin_dir,
        "mindrian",
        'case "$1" in\n'
        '  check) echo "::error file=generated/a/spec.yaml,title=D001::differs"; '
        'exit "${FAKE_CHECK_STATUS:-0}";;\n'
        '  diff) echo "## mindrian diff"; echo "| agent | change |"; '
        'exit "${FAKE_DIFF_STATUS:-0}";;\n'
        "esac",
    )
    _recorder(bin_dir, "gh", "exit 0")
    (tmp_path / "project").mkdir()
    return {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "RECORD": str(tmp_path / "record"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "MINDRIAN_DIRECTORY": str(tmp_path / "project"),
    }


def _run(env: dict[str, str], **inputs: str) -> tuple[int, str, list[str], str]:
    done = subprocess.run(
        ["bash", str(SCRIPT)], env={**env, **inputs}, capture_output=True, text=True, check=False
    )
    record = Path(env["RECORD"])
    calls = record.read_text(encoding="utf-8").splitlines() if record.exists() else []
    summary = Path(env["GITHUB_STEP_SUMMARY"])
    return (
        done.returncode,
        done.stdout,
        calls,
        summary.read_text(encoding="utf-8") if summary.exists() else "",
    )


def test_check_alone_annotates_and_fails_on_drift(fake_tools: dict[str, str]) -> None:
    status, out, calls, summary = _run(fake_tools, FAKE_CHECK_STATUS="1")
    assert (status, calls, summary) == (1, ["mindrian check --format github"], "")
    assert out.startswith("::error file=generated/a/spec.yaml")


def test_diff_goes_to_the_summary_and_the_pull_request(fake_tools: dict[str, str]) -> None:
    status, _, calls, summary = _run(
        fake_tools,
        MINDRIAN_DIFF="true",
        MINDRIAN_DIFF_BASE="abc123",
        MINDRIAN_DIFF_HEAD="def456",
        MINDRIAN_COMMENT="true",
        MINDRIAN_PR="7",
    )
    assert status == 0
    assert calls[:2] == ["mindrian check --format github", "mindrian diff abc123 def456"]
    assert re.fullmatch(r"gh pr comment 7 --body-file \S+", calls[2])
    assert summary == "## mindrian diff\n| agent | change |\n"


def test_drift_still_fails_after_the_diff_and_a_failed_diff_is_reported(
    fake_tools: dict[str, str],
) -> None:
    status, _, calls, _ = _run(
        fake_tools, FAKE_CHECK_STATUS="1", MINDRIAN_DIFF="true", MINDRIAN_CHECK="true"
    )
    assert status == 1 and calls == ["mindrian check --format github", "mindrian diff"]
    for name in ("RECORD", "GITHUB_STEP_SUMMARY"):
        Path(fake_tools[name]).unlink()
    status, out, calls, summary = _run(
        fake_tools, MINDRIAN_CHECK="false", MINDRIAN_DIFF="true", FAKE_DIFF_STATUS="3"
    )
    assert (status, calls, summary) == (3, ["mindrian diff"], "")
    assert "::error title=mindrian diff::" in out
