"""``mindrian run``: generated agents by id from the command line, offline with scripted models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from http_server import ROOT
from model_scripts import GOOD_PWS, write_script

pytestmark = pytest.mark.slow  # mindrian serve / run processes


def mindrian_run(
    *args: str, state: Path, stdin: str = "", cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """``mindrian run ARGS`` in a subprocess with its agent state under ``state``."""
    return subprocess.run(
        [sys.executable, "-m", "builder", "run", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "MINDRIAN_STATE_DIR": str(state),
        },
    )


def test_the_example_script_prints_a_scorecard_and_exits_0(tmp_path: Path) -> None:
    done = mindrian_run(
        "pws-validation",
        "Validate: a marketplace for used lab equipment",
        "--model",
        "scripted:examples/pws.yaml",
        state=tmp_path,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == GOOD_PWS["json"]["output"].rstrip("\n") + "\n"


def test_a_schema_breaking_answer_exits_1_with_a_clear_message(tmp_path: Path) -> None:
    done = mindrian_run(
        "pws-validation",
        "Validate it",
        "--model",
        "scripted:examples/pws-schema-breaking.yaml",
        state=tmp_path,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        "error: pws-validation: output did not match schema: PwsValidationOutput: "
        "scores.problem: Input should be less than or equal to 25; scores.people: Field required\n"
    )


def test_an_agent_refuses_a_problem_stated_as_unclear(tmp_path: Path) -> None:
    done = mindrian_run(
        "pws-validation",
        "Validate",
        "--clarity",
        "0.2",
        "--model",
        "scripted:examples/pws.yaml",
        state=tmp_path,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        "error: pws-validation: needs_clarification: problem clarity 0.20 is below the 0.6"
    )


def test_json_prints_the_handoff_result(tmp_path: Path) -> None:
    done = mindrian_run(
        "pws-validation",
        "Validate",
        "--json",
        "--model",
        "scripted:examples/pws.yaml",
        state=tmp_path,
    )
    result = json.loads(done.stdout)
    assert done.returncode == 0
    assert result["success"] is True
    assert result["from_agent"] == "pws-validation"
    pillars = GOOD_PWS["json"]["scores"]
    assert {name: result["scores"][name] for name in pillars} == pillars
    assert result["output_format"] == "structured"


def test_works_from_a_subfolder_of_the_project(tmp_path: Path) -> None:
    done = mindrian_run(
        "pws-validation",
        "Validate",
        "--model",
        f"scripted:{ROOT / 'examples' / 'pws.yaml'}",
        state=tmp_path,
        cwd=ROOT / "skills",
    )
    assert done.returncode == 0, done.stderr


def test_an_unknown_agent_is_an_error_naming_the_registered_ones(tmp_path: Path) -> None:
    done = mindrian_run("no-such-agent", "hello", state=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("error[X001]: no registered agent 'no-such-agent' (registered: ")


@pytest.mark.parametrize("session", ["../../escape", "a/b", "", ".hidden", "x" * 129])
@pytest.mark.parametrize("agent_id", ["deep-research", "larry"])  # a pipeline, a role agent
def test_a_session_id_that_is_no_plain_id_is_a_usage_error(
    tmp_path: Path, session: str, agent_id: str
) -> None:
    """Repro: a pipeline ended in 'error: deep-research: ValueError: unusable session id …'
    (exit 1) after loading the agent, and a role agent took '../../escape', '' or any length
    (the HTTP routes answer 400 for each)."""
    script = write_script(tmp_path / "s.yaml", {agent_id: ["hi"]}, repeat=True)
    done = mindrian_run(
        agent_id, "hello", "--session", session, "--model", f"scripted:{script}", state=tmp_path
    )
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.startswith(f"error[U043]: --session {session[:80]!r}: 1-128 letters")
    assert list(tmp_path.glob("*/**/*.json")) == []


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("answers: []\n", "the script has no answers"),
        ("answers: [{json: {a: 1}, text: b}]\n", "an answer is a string or a mapping with one key"),
        ("answers: [x]\nvoices: [y]\n", "unknown key(s) voices"),
    ],
)
def test_a_broken_model_script_is_an_input_error(tmp_path: Path, script: str, message: str) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(script, encoding="utf-8")
    done = mindrian_run("pws-validation", "x", "--model", f"scripted:{path}", state=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("error[X002]: ") and message in done.stderr


def test_a_guided_agent_steps_on_stdin_and_resumes_in_a_new_process(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "script.yaml", {"lean-canvas": [f"canvas step {n}" for n in range(1, 9)]}
    )
    model = f"scripted:{script}"
    first = mindrian_run(
        "lean-canvas",
        "Coffee for offices",
        "--session",
        "c1",
        "--model",
        model,
        state=tmp_path,
        stdin="Offices run out of coffee\n",
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout == "canvas step 1\ncanvas step 2\n"
    assert first.stderr.splitlines() == [
        "session c1",
        "Step 1 of 7 (problem): answer to continue, or say 'redo' or 'skip'.",
        "Step 2 of 7 (customer segments): answer to continue, or say 'back', 'redo' or 'skip'.",
        "paused; resume with: mindrian run lean-canvas --session c1",
    ]

    resumed = mindrian_run(
        "lean-canvas", "--session", "c1", "--model", model, state=tmp_path, stdin="skip\n"
    )
    assert resumed.returncode == 0, resumed.stderr
    # The step waiting is shown again, then the next one runs (a new process, a fresh script).
    assert resumed.stdout == "canvas step 2\ncanvas step 1\n"
    assert "Step 3 of 7 (unique value proposition)" in resumed.stderr


def test_a_pipeline_reports_each_phase(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.yaml", {"deep-research": ["c", "a", "v"]})
    done = mindrian_run(
        "deep-research", "EV charging", "--model", f"scripted:{script}", state=tmp_path
    )
    assert done.returncode == 0
    assert done.stderr.splitlines() == [
        "[1/3] clarify: done",
        "[2/3] analyse: done",
        "[3/3] validate: done",
    ]
    assert done.stdout.startswith("v\n\n## Partial results\n")
