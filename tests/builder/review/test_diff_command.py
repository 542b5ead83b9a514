"""``mindrian diff`` on small hand-made repositories: agents added, removed, renamed or without a
package; the verdict; Markdown quoting; errors as one clean line with exit status 1."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

PYPROJECT = '[project]\nname = "demo"\n\n[tool.mindrian]\n'


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _spec(agent_id: str, skill: str, **fields: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "id": agent_id,
        "source_path": f"skills/{skill}/SKILL.md",
        "type": "operator",
        "model": {"provider": "anthropic", "model_id": "claude-sonnet-4-5", "temperature": 0.3},
        "triggers": ["plan"],
        "chains_to": [{"target": "other", "weight": 0.5}],
        "scores": [{"name": "fit", "minimum": 0.0, "maximum": 10.0}],
        "handoff": {"receives": {"min_clarity": 0.6}, "routing": {}, "supports": ["delegate"]},
    }
    spec.update(fields)
    return spec


def _write_agent(root: Path, spec: dict[str, Any], prompt: str) -> None:
    folder = root / "generated" / str(spec["id"]).replace("-", "_")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    (folder / "instructions.md").write_text(f"<!--\n  header\n-->\n{prompt}\n", encoding="utf-8")
    skill = root / str(spec["source_path"])
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text(f"---\nname: x\n---\n\n{prompt}\n", encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository (branch main) with one committed agent, ``alpha``."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    _git(root, "init", "--quiet", "--initial-branch=main")
    _write_agent(root, _spec("alpha", "alpha"), "Plan the work.")
    _git(root, "add", "-A")
    _git(root, "commit", "--quiet", "-m", "alpha")
    return root


Run = Callable[..., Any]


def _json(cli: Run, root: Path, *args: str) -> dict[str, Any]:
    result = cli(["diff", *args, "--format", "json"], root)
    assert result.code == 0, result.err
    data: dict[str, Any] = json.loads(result.out)
    return data


def test_nothing_changed_prints_the_verdict_only(cli: Run, repo: Path) -> None:
    result = cli(["diff"], repo)
    assert result.code == 0, result.err
    assert result.out.splitlines()[0] == "**No agent changed.**"
    assert "###" not in result.out


def test_a_changed_agent_gets_one_section_and_the_verdict_names_its_aspects(
    cli: Run, repo: Path
) -> None:
    _write_agent(repo, _spec("beta", "beta"), "Beta.")
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "beta")
    _write_agent(repo, _spec("alpha", "alpha", triggers=["plan", "roadmap"]), "Plan the work.")
    result = cli(["diff", "HEAD"], repo)
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "**1 agent changed: routing; no schema change.**"
    assert '### `alpha` (`"skills/alpha/SKILL.md"`)' in lines
    assert '- routing: trigger `"roadmap"` added' in lines
    assert not any("beta" in line for line in lines)  # unchanged: no section


def test_prompt_lines_are_quoted_with_their_skill_line(cli: Run, repo: Path) -> None:
    _write_agent(repo, _spec("alpha", "alpha"), "Plan the work `carefully`.")
    report = _json(cli, repo, "HEAD")
    (agent,) = report["agents"]
    (change,) = agent["changes"]
    assert change == {
        "aspect": "prompt",
        "kind": "changed",
        "field": "prompt line",
        "name": "",
        "old": "Plan the work.",
        "new": "Plan the work `carefully`.",
        "line": 5,
    }
    shown = cli(["diff", "HEAD"], repo).out
    # A backtick of the skill cannot close the code span it is quoted in.
    assert '`"Plan the work \\u0060carefully\\u0060."`' in shown


def test_added_removed_renamed_and_unbuilt_agents(cli: Run, repo: Path) -> None:
    _write_agent(repo, _spec("gone", "gone"), "Gone.")
    _write_agent(repo, _spec("old-name", "named"), "Named.")
    _write_agent(repo, _spec("broken", "broken"), "Broken.")
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "more")
    _git(repo, "rm", "-r", "--quiet", "generated/gone", "skills/gone", "generated/broken")
    _git(repo, "mv", "generated/old_name", "generated/new_name")
    spec = yaml.safe_load((repo / "generated/new_name/spec.yaml").read_text(encoding="utf-8"))
    (repo / "generated/new_name/spec.yaml").write_text(
        yaml.safe_dump({**spec, "id": "new-name"}), encoding="utf-8"
    )
    _write_agent(repo, _spec("fresh", "fresh"), "Fresh.")
    report = _json(cli, repo, "HEAD")
    statuses = {a["agent"]: a["status"] for a in report["agents"]}
    assert statuses == {
        "broken": "unbuilt",
        "fresh": "added",
        "gone": "removed",
        "new-name": "renamed",
    }
    (renamed,) = [a for a in report["agents"] if a["status"] == "renamed"]
    assert [(c["field"], c["old"], c["new"]) for c in renamed["changes"]] == [
        ("id", "old-name", "new-name")
    ]
    assert report["verdict"] == (
        "1 agent changed: identity; 1 agent added; 1 agent removed; 1 agent without a package "
        "(the skill does not build, or was not built); no schema change."
    )


def test_a_new_skill_that_does_not_build_is_named(cli: Run, repo: Path) -> None:
    skill = repo / "skills" / "broken" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: [unclosed\n---\n", encoding="utf-8")
    report = _json(cli, repo)
    assert [(a["agent"], a["status"]) for a in report["agents"]] == [
        ("skills/broken/SKILL.md", "unbuilt")
    ]


def test_the_default_base_is_the_merge_base_with_main(cli: Run, repo: Path) -> None:
    _git(repo, "checkout", "--quiet", "-b", "feature")
    _write_agent(repo, _spec("alpha", "alpha", scores=[]), "Plan the work.")
    _git(repo, "commit", "--quiet", "-am", "no scores")
    report = _json(cli, repo)
    assert report["base"].startswith("merge base with main (")
    assert report["head"] == "working tree"
    assert report["verdict"] == "1 agent changed: schema; schema changed."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["diff", "no-such-rev"], "error[V002]: unknown revision 'no-such-rev'"),
        (["diff", "HEAD", "nope"], "error[V002]: unknown revision 'nope'"),
    ],
)
def test_an_unknown_revision_is_one_line_and_exit_1(
    cli: Run, repo: Path, args: list[str], message: str
) -> None:
    result = cli(args, repo)
    assert result.code == 1
    assert result.out == ""
    assert result.err.strip().splitlines() == [message]


def test_outside_a_git_repository_is_one_line_and_exit_1(cli: Run, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    result = cli(["diff"], tmp_path)
    assert result.code == 1
    assert result.err.strip().splitlines() == [f"error[V001]: not a git repository: {tmp_path}"]


def test_hidden_folders_under_generated_are_not_packages(cli: Run, repo: Path) -> None:
    staged = repo / "generated" / ".mindrian" / "staging" / "alpha"
    staged.mkdir(parents=True)
    spec = _spec("alpha", "alpha", type="role")
    (staged / "spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    assert _json(cli, repo)["agents"] == []


WORKFLOW = """digraph demo {{
  start [shape=Mdiamond];
  {nodes}
  exit [shape=Msquare];
  {edges}
}}
"""


def test_workflow_nodes_and_edges_and_tools(cli: Run, repo: Path) -> None:
    folder = repo / "generated" / "alpha"
    (folder / "workflow.dot").write_text(
        WORKFLOW.format(nodes='a [prompt="Ask.", shape=box];', edges="start -> a;\n  a -> exit;"),
        encoding="utf-8",
    )
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "workflow")
    (folder / "workflow.dot").write_text(
        WORKFLOW.format(
            nodes='a [prompt="Ask.", shape=box];\n  b [prompt="Check.", shape=box];',
            edges="start -> a;\n  a -> b;\n  b -> exit;",
        ),
        encoding="utf-8",
    )
    server = {"name": "files", "required": False, "tools": ["read"]}
    _write_agent(repo, _spec("alpha", "alpha", tools={"mcp_servers": [server]}), "Plan the work.")
    report = _json(cli, repo, "HEAD")
    (agent,) = report["agents"]
    assert {(c["aspect"], c["kind"], c["field"], c["name"]) for c in agent["changes"]} == {
        ("tools", "added", "MCP server", "files"),
        ("workflow", "added", "node", "b"),
        ("workflow", "added", "edge", "a -> b"),
        ("workflow", "added", "edge", "b -> exit"),
        ("workflow", "removed", "edge", "a -> exit"),
    }
    assert report["verdict"] == "1 agent changed: tools and workflow; no schema change."


def test_format_is_markdown_or_json(cli: Run, repo: Path) -> None:
    result = cli(["diff", "--format", "xml"], repo)
    assert result.code == 2
    assert "error[U041]: --format 'xml': this command prints markdown, json" in result.err


def test_an_error_with_format_json_is_a_json_object_on_stdout(cli: Run, repo: Path) -> None:
    result = cli(["diff", "nope", "--format", "json"], repo)
    assert result.code == 1
    assert json.loads(result.out)["error"]["code"] == "V002"


def test_an_edited_skill_not_yet_rebuilt_is_named_with_the_fix(cli: Run, repo: Path) -> None:
    """Repro (issue 38, 5): after editing a SKILL.md, ``mindrian diff`` said "No agent changed"
    with no hint that the package had not been rebuilt."""
    skill = repo / "skills" / "alpha" / "SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8") + "\nAlso plan the budget.\n")
    result = cli(["diff", "HEAD"], repo)
    assert result.code == 0, result.err
    assert result.out.splitlines()[:5] == [
        "**No agent changed.**",
        "",
        "Agents at `working tree` compared with `HEAD`.",
        "",
        "Edited but not rebuilt: `skills/alpha/SKILL.md`; run `mindrian build --all` to see what "
        "the edit changes.",
    ]
    assert _json(cli, repo, "HEAD")["not_rebuilt"] == ["skills/alpha/SKILL.md"]


def _host(grant: list[str], allow: list[str]) -> dict[str, Any]:
    reasons = [{"tool": t, "reason": f"allowed-tools names {t}"} for t in grant]
    return {"host": {"grant": grant, "allow": allow, "reasons": reasons}}


def test_a_new_grant_or_pre_approval_is_a_permission_change(cli: Run, repo: Path) -> None:
    _write_agent(repo, _spec("alpha", "alpha", tools=_host(["Bash"], ["Bash(git:*)"])), "Plan.")
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "bash")
    tools = _host(["Bash", "Write"], ["Bash(git status:*)", "Write"])
    _write_agent(repo, _spec("alpha", "alpha", tools=tools), "Plan.")
    report = _json(cli, repo, "HEAD")
    (agent,) = report["agents"]
    assert {
        (c["kind"], c["field"], c["name"]) for c in agent["changes"] if c["aspect"] == "permissions"
    } == {
        ("added", "host tool", "Write"),
        ("added", "pre-approved", "Write"),
        ("added", "pre-approved", "Bash(git status:*)"),
        ("removed", "pre-approved", "Bash(git:*)"),
    }
    assert report["verdict"] == (
        "1 agent changed: permissions; no schema change; permission change: alpha gets "
        '`"Write"`, alpha pre-approves `"Bash(git status:*)"` and alpha pre-approves `"Write"`.'
    )
    narrowed = _host(["Bash"], [])
    _write_agent(repo, _spec("alpha", "alpha", tools=narrowed), "Plan.")
    assert _json(cli, repo, "HEAD")["verdict"] == (
        "1 agent changed: permissions; no schema change."
    )
