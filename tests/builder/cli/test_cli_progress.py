"""The progress bar of ``build --all`` and ``check``: on a terminal, never with --json/--frames."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest
from build_factories import make_project, skill_text

from builder.cli.progress import ProgressBar, clock_text
from builder.orchestration.batch import Target
from builder.pipeline.build_results import BuildReport, PhaseReport
from builder.pipeline.results import Problem

BAR_START = "\r\x1b[2K["


def project_of(root: Path) -> Path:
    return make_project(
        root,
        {
            "alpha": skill_text("alpha-skill"),
            "beta": "---\nname: [unclosed\n---\n",
            "gamma": skill_text("gamma-skill"),
        },
    )


def run_in_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    """``mindrian ARGS`` with stdin, stdout and stderr on a pseudo-terminal: exit status, output."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm"}
    process = subprocess.Popen(
        [sys.executable, "-m", "builder", *args],
        cwd=cwd,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        close_fds=True,
    )
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            process.kill()
            raise AssertionError("no output for 120 s")
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the terminal closed with the process
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return process.wait(timeout=60), b"".join(chunks).decode("utf-8", errors="replace")


def test_build_all_draws_a_bar_on_a_terminal(tmp_path: Path) -> None:
    code, text = run_in_terminal(
        ["build", "--all", "--until", "skill_analysis"], project_of(tmp_path)
    )
    assert code == 1  # beta does not parse
    assert BAR_START in text
    assert "3/3" in text and "ETA" in text and "skill_analysis" in text
    assert "skills/beta/SKILL.md:" in text  # the problem as a line of its own
    assert "2 built, 1 failed" in text
    assert "[1/7] skill_analysis" not in text  # phase lines give way to the bar


@pytest.mark.parametrize("option", ["--json", "--frames", "--quiet"])
def test_machine_and_quiet_output_stays_line_oriented_on_a_terminal(
    tmp_path: Path, option: str
) -> None:
    _, text = run_in_terminal(
        ["build", "--all", "--until", "skill_analysis", option], project_of(tmp_path)
    )
    assert "\x1b[2K" not in text and "ETA" not in text


def test_without_a_terminal_build_prints_lines(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "builder", "build", "--all", "--until", "skill_analysis"],
        cwd=project_of(tmp_path),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert "\r" not in done.stderr and "ETA" not in done.stderr
    assert "[1/7] skill_analysis … ok" in done.stderr


def test_check_draws_a_bar_on_a_terminal(tmp_path: Path) -> None:
    root = make_project(
        tmp_path, {"alpha": skill_text("alpha-skill"), "gamma": skill_text("gamma-skill")}
    )
    code, text = run_in_terminal(["check"], root)
    assert code == 1  # nothing committed in generated/: all drift
    assert BAR_START in text and "2/2" in text
    assert "differ from a fresh build" in text


def _check(root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "builder", "check", *options],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def test_without_a_terminal_check_prints_its_outcome_and_verbose_its_phases(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path, {"alpha": skill_text("alpha-skill")})
    done = _check(root)
    assert done.returncode == 1  # nothing committed in generated/: every file drifts
    *located, total = done.stderr.splitlines()
    assert located and all(
        line.startswith("generated/") and ": error[D001]: differs from a fresh build" in line
        for line in located
    )
    assert total == (
        f"check: {len(located)} of {len(located)} file(s) in generated differ from a fresh build "
        "of 1 skill(s) (run `mindrian build --all` and commit)"
    )

    verbose = _check(root, "--verbose")
    assert (verbose.returncode, verbose.stdout) == (done.returncode, done.stdout)
    lines = verbose.stderr.splitlines()
    assert lines[:2] == ["regenerate skills/alpha/SKILL.md", "[1/7] skill_analysis … ok"]
    assert lines[-len(located) - 1 :] == [*located, total]


def test_check_of_one_skill_prints_its_phases_on_a_terminal(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"alpha": skill_text("alpha-skill")})
    code, text = run_in_terminal(["check"], root)
    assert code == 1
    assert "regenerate skills/alpha/SKILL.md" in text and "[6/7] code_generation" in text


def test_the_line_counts_skills_and_estimates_the_rest() -> None:
    now = [100.0]
    stream = io.StringIO()
    bar = ProgressBar(4, stream, clock=lambda: now[0], columns=200)
    assert bar.line().endswith("0/4      0:00  ETA --:--")
    bar.started(Target(Path("a"), "skills/a/SKILL.md"))
    bar.phase(PhaseReport(6, "code_generation", "ok"))
    now[0] = 130.0
    bar.finished(BuildReport("skills/a/SKILL.md", "a", (), Problem("S204", "bad type")))
    assert bar.line() == (
        "[######------------------] 1/4  skills/a/SKILL.md  code_generation  0:30  ETA 1:30"
    )
    assert "\rerror[S204]: bad type\n" in stream.getvalue().replace("\x1b[2K", "")
    bar.close()
    assert stream.getvalue().endswith("\r\x1b[2K")


def test_the_line_fits_the_terminal() -> None:
    bar = ProgressBar(10, io.StringIO(), clock=lambda: 0.0, columns=40)
    bar.started(Target(Path("x"), "skills/" + "long-name/" * 10 + "SKILL.md"))
    assert len(bar.line()) == 39


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0:00"), (59.6, "1:00"), (754, "12:34"), (3723, "1:02:03")]
)
def test_clock_text(seconds: float, text: str) -> None:
    assert clock_text(seconds) == text


def test_every_phase_warning_is_printed_above_the_bar_once() -> None:
    stream = io.StringIO()
    bar = ProgressBar(2, stream, clock=lambda: 0.0, columns=200)
    coded = "skills/a/SKILL.md:9: warning[W401]: optional MCP server 'x' is unavailable"
    phases = (
        PhaseReport(1, "skill_analysis", "cached"),
        PhaseReport(2, "architecture", "cached", warnings=("no examples section",)),
        PhaseReport(4, "tool_assembly", "ok", warnings=(coded,)),
        PhaseReport(5, "neo4j_schema", "ok", warnings=(coded,)),
    )
    bar.started(Target(Path("a"), "skills/a/SKILL.md"))
    bar.finished(BuildReport("skills/a/SKILL.md", "a", phases, None))
    printed = [line.rsplit("\x1b[2K", 1)[-1] for line in stream.getvalue().split("\n")[:-1]]
    assert printed == ["skills/a/SKILL.md: warning: no examples section", coded]
