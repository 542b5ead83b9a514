"""The ``mindrian`` command line, run in-process on temporary projects."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from build_factories import FakePipeline, make_pipeline, make_project, skill_text

from builder import __version__
from builder.cli.app import project_root
from builder.orchestration.runner import Phases
from builder.phases import PHASE_NAMES

# Slow: whole builds through the command line.
pytestmark = pytest.mark.slow

ERROR_LINE = re.compile(r"^(?P<path>[^:\n]+)(:\d+){0,2}: error\[(?P<code>[A-Z]\d{3})\]: .+$", re.M)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path, {"demo": skill_text("demo")})


def use(monkeypatch: pytest.MonkeyPatch, pipeline: FakePipeline) -> FakePipeline:
    """Make ``mindrian build`` run the fake phases."""
    monkeypatch.setattr("builder.orchestration.runner.DEFAULT", Phases.local(pipeline.load))
    return pipeline


def test_version(cli, tmp_path: Path):
    result = cli(["--version"], tmp_path)
    assert (result.code, result.out) == (0, f"mindrian {__version__}\n")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--help"], ["build", "validate", "explain", "Exit status: 0 success", "--debug"]),
        (
            ["build", "--help"],
            [
                "--from PHASE",
                "--until PHASE",
                "--force",
                "--json",
                "Examples:",
                "mindrian build --all",
            ],
        ),
        (["validate", "-h"], ["phase 1 only", "mindrian validate skills/pws/SKILL.md"]),
        (["explain", "--help"], ["ID", "mindrian explain pws-validation"]),
    ],
)
def test_help_texts(cli, tmp_path: Path, args: list[str], expected: list[str]):
    result = cli(args, tmp_path)
    assert result.code == 0
    for text in expected:
        assert text in result.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["build", "--bogus"], "No such option: --bogus"),
        (["frobnicate"], "No such command"),
        (["explain"], "Missing argument"),
        (["build"], "error[U005]: give at least one SKILL.md path, or --all"),
        (["build", "--all", "skills/demo"], "error[U004]"),
        (
            ["build", "skills/demo", "--from", "nine"],
            "error[U002]: unknown phase 'nine'; expected one of skill_analysis (1)",
        ),
        (
            ["build", "skills/demo", "--from", "7", "--until", "2"],
            "error[U003]: --from 7 comes after --until 2",
        ),
        (["validate"], "error[U005]"),
        (["explain", "../etc"], "error[U006]"),
    ],
)
def test_usage_errors_exit_2_without_a_traceback(cli, project: Path, args: list[str], message: str):
    result = cli(args, project)
    assert result.code == 2
    assert message in result.err
    assert "Traceback" not in result.err + result.out
    assert not (project / ".mindrian").exists()


def test_build_reports_progress_and_writes_checkpoints_under_the_project_root(
    cli, project: Path, monkeypatch
):
    pipeline = use(monkeypatch, make_pipeline())
    first = cli(["build", "skills/demo/SKILL.md"], project)
    assert first.code == 0
    lines = first.err.splitlines()
    assert lines[0] == "build skills/demo/SKILL.md"
    assert lines[1:8] == [f"[{n}/7] {name} … ok" for n, name in enumerate(PHASE_NAMES, 1)]
    assert lines[8] == "built demo (skills/demo/SKILL.md): 7 phase(s) ok"
    assert len(list((project / ".mindrian/checkpoints/demo").glob("*.yaml"))) == 7

    again = cli(["build", "demo"], project / "skills")
    assert again.code == 0
    assert "build skills/demo/SKILL.md" in again.err
    assert "[7/7] registration … ok (cached)" in again.err
    assert pipeline.calls() == {name: 1 for name in PHASE_NAMES}


def test_quiet_success_prints_nothing_and_timings_show_milliseconds(
    cli, project: Path, monkeypatch
):
    use(monkeypatch, make_pipeline())
    assert cli(["build", "skills/demo", "--quiet"], project).err == ""
    timed = cli(["build", "skills/demo", "--timings"], project)
    assert re.search(r"^\[1/7\] skill_analysis … ok \(cached\) \[\d+\.\d ms\]$", timed.err, re.M)


def test_custom_folders_and_force(cli, project: Path, tmp_path: Path, monkeypatch):
    pipeline = use(monkeypatch, make_pipeline())
    elsewhere = tmp_path / "cp"
    cli(
        ["build", "skills/demo", "--checkpoints", str(elsewhere), "--until", "architecture"],
        project,
    )
    assert sorted(p.name for p in (elsewhere / "demo").iterdir()) == [
        "1-skill_analysis.yaml",
        "2-architecture.yaml",
    ]
    cli(
        ["build", "skills/demo", "--checkpoints", str(elsewhere), "--until", "2", "--force"],
        project,
    )
    assert pipeline["architecture"].calls == 2
    assert not (project / ".mindrian").exists()


def test_a_failed_check_names_check_reason_and_location(cli, project: Path, monkeypatch):
    pipeline = use(monkeypatch, make_pipeline())
    pipeline["tool_assembly"].failing = "tool_assembly_done"
    result = cli(["build", "skills/demo"], project)
    assert result.code == 1
    assert "[4/7] tool_assembly … FAILED (tool_assembly_done)" in result.err
    assert result.err.splitlines()[-1] == (
        "skills/demo/SKILL.md:3:5: error[P003]: check 'tool_assembly_done' of phase tool_assembly "
        "(4) failed: "
        "tool_assembly_done does not hold"
    )


def test_all_builds_every_skill_and_one_failure_does_not_stop_the_others(
    cli, tmp_path: Path, monkeypatch
):
    project = make_project(tmp_path, {"alpha": "x" * ((1 << 20) + 1), "demo": skill_text("demo")})
    use(monkeypatch, make_pipeline())
    result = cli(["build", "--all"], project)
    assert result.code == 1
    errors = [m.groupdict() for m in ERROR_LINE.finditer(result.err)]
    assert errors == [{"path": "skills/alpha/SKILL.md", "code": "S107"}]
    assert "built demo (skills/demo/SKILL.md)" in result.err
    assert result.err.splitlines()[-1] == "1 built, 1 failed"
    assert (project / ".mindrian/checkpoints/demo/7-registration.yaml").is_file()


def test_json_report_has_stable_keys(cli, project: Path, monkeypatch):
    pipeline = use(monkeypatch, make_pipeline())
    pipeline["handoff_protocol"].failing = "handoff_protocol_done"
    result = cli(["build", "skills/demo", "--json", "--quiet"], project)
    report = json.loads(result.out)
    assert result.code == 1
    assert list(report) == ["ok", "exit_code", "builds"]
    assert (report["ok"], report["exit_code"]) == (False, 1)
    (only,) = report["builds"]
    assert list(only) == [
        "path",
        "agent_id",
        "ok",
        "exit_code",
        "phases",
        "error",
    ]
    assert [p["status"] for p in only["phases"]] == ["ok", "ok", "failed"]
    assert list(only["phases"][0]) == [
        "number",
        "name",
        "status",
        "checks",
        "warnings",
        "seconds",
        "cpu_seconds",
    ]
    assert only["phases"][0]["checks"][0] == {
        "name": "skill_analysis_done",
        "passed": True,
        "reason": "skill_analysis_done holds",
        "location": None,
    }
    message = (
        "check 'handoff_protocol_done' of phase handoff_protocol (3) failed: "
        "handoff_protocol_done does not hold"
    )
    assert only["error"] == {
        "code": "P003",
        "message": message,
        "location": {"path": "skills/demo/SKILL.md", "line": 3, "column": 5},
        "text": f"skills/demo/SKILL.md:3:5: error[P003]: {message}",
    }


def test_an_unexpected_exception_is_one_line_without_debug(cli, project: Path, monkeypatch):
    def crash(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr("builder.orchestration.runner.Run.advance", crash)
    plain = cli(["build", "skills/demo"], project)
    assert plain.code == 3
    assert plain.err.splitlines()[-1] == (
        "skills/demo/SKILL.md: error[I001]: RuntimeError: boom "
        "(rerun as `mindrian --debug build …` for the traceback)"
    )
    assert "Traceback" not in plain.err
    debug = cli(["--debug", "build", "skills/demo"], project)
    assert debug.code == 3
    assert "Traceback (most recent call last)" in debug.err and "RuntimeError: boom" in debug.err


def test_the_debug_hint_names_the_command_that_failed(cli, project: Path, monkeypatch):
    def crash(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("builder.pipeline.checkpoints.CheckpointStore.load_all", crash)
    result = cli(["explain", "demo"], project)
    assert result.code == 3
    assert result.err.splitlines()[-1] == (
        "internal error: RuntimeError: boom "
        "(rerun as `mindrian --debug explain …` for the traceback)"
    )


def test_explain_shows_checks_warnings_and_decisions(cli, project: Path, monkeypatch):
    pipeline = use(monkeypatch, make_pipeline())
    pipeline["architecture"].warnings = ("no examples section",)
    pipeline["handoff_protocol"].failing = "consistent"
    cli(["build", "skills/demo"], project)
    result = cli(["explain", "demo"], project)
    assert result.code == 0
    assert result.out.startswith("agent demo: 3 checkpoint(s)\n\n[1] skill_analysis: passed\n")
    assert "  check skill_analysis_done: ok - skill_analysis_done holds\n" in result.out
    assert "  decided id: demo\n" in result.out
    assert (
        "[2] architecture: passed\n" in result.out
        and "  warning: no examples section\n" in result.out
    )
    assert "[3] handoff_protocol: FAILED\n" in result.out
    assert (
        "  check consistent: FAILED - consistent does not hold (skills/demo/SKILL.md:3:5)\n"
        in result.out
    )

    as_json = json.loads(cli(["explain", "demo", "--json"], project).out)
    assert as_json["agent_id"] == "demo"
    assert [(p["phase"], p["passed"]) for p in as_json["phases"]] == [
        ("skill_analysis", True),
        ("architecture", True),
        ("handoff_protocol", False),
    ]
    assert as_json["phases"][0]["decisions"] == ["id: demo"]


def test_explain_an_unknown_agent_exits_1(cli, project: Path):
    result = cli(["explain", "ghost"], project)
    assert result.code == 1
    assert "error[P007]: no checkpoints for 'ghost'" in result.err


def test_validate_prints_ok_lines_and_compiler_style_errors(cli, tmp_path: Path):
    project = make_project(
        tmp_path, {"good": skill_text("good-skill"), "bad": "no front matter here\n"}
    )
    result = cli(["validate", "skills/good/SKILL.md", "skills/bad"], project)
    assert result.code == 1
    assert result.out == "ok skills/good/SKILL.md (good-skill, operator)\n"
    errors = [m.groupdict() for m in ERROR_LINE.finditer(result.err)]
    assert [e["path"] for e in errors] == ["skills/bad/SKILL.md"]
    assert errors[0]["code"].startswith("S")
    assert not (project / ".mindrian").exists()

    valid_only = cli(["validate", "skills/good", "--quiet"], project)
    assert (valid_only.code, valid_only.out, valid_only.err) == (0, "", "")


def test_project_root_is_the_nearest_folder_with_a_mindrian_table(tmp_path: Path):
    outer = make_project(tmp_path, {})
    inner = outer / "pkg"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "other"\n', encoding="utf-8")
    deep = inner / "a" / "b"
    deep.mkdir(parents=True)
    assert project_root(deep) == outer
    lonely = tmp_path.parent / f"{tmp_path.name}-lonely"
    lonely.mkdir()
    assert project_root(lonely) == lonely


def test_python_dash_m_builder_is_the_same_program(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-m", "builder", "--version"], capture_output=True, text=True, cwd=tmp_path
    )
    assert (done.returncode, done.stdout) == (0, f"mindrian {__version__}\n")


def test_the_real_phase_one_is_cached_on_the_second_build(cli, tmp_path: Path):
    pws = (Path(__file__).resolve().parents[3] / "skills/pws/SKILL.md").read_text(encoding="utf-8")
    project = make_project(tmp_path, {"pws": pws})
    first = cli(["build", "skills/pws", "--until", "skill_analysis"], project)
    assert first.code == 0, first.err
    stored = project / ".mindrian/checkpoints/pws-validation/1-skill_analysis.yaml"
    before = stored.read_bytes()
    second = cli(["build", "skills/pws", "--until", "1"], project)
    assert "[1/7] skill_analysis … ok (cached)" in second.err
    assert stored.read_bytes() == before
    assert b"source_path: skills/pws/SKILL.md\n" in before


@pytest.mark.parametrize(
    ("output", "previous", "expected"),
    [
        ({"id": "x", "type": None, "body": "text"}, None, ("id: x",)),
        (
            {"id": "x", "type": "role", "type_reason": "explicit"},
            {"id": "x", "type": None},
            ("type: role", "type_reason: explicit"),
        ),
        (
            {"handoff": {"decisions": ["receives: default", "returns: skill"]}},
            None,
            ("receives: default", "returns: skill"),
        ),
        (
            {"id": "x", "nested": {"type": "not top level", "reason": "why"}},
            {"id": "x"},
            ("nested.reason: why",),
        ),
    ],
)
def test_key_decisions_lists_what_a_phase_newly_decided(output, previous, expected):
    from builder.pipeline.report import key_decisions

    assert key_decisions(output, previous) == expected


def test_explain_shows_where_inferred_triggers_came_from(cli, tmp_path: Path) -> None:
    standard = (
        "---\nname: gif-maker\ndescription: Makes GIFs. Use when the user asks for "
        "'animated stickers'.\ntype: fuzzer\n---\n\nBody.\n"
    )
    project = make_project(tmp_path, {"gif-maker": standard})
    built = cli(["build", "skills/gif-maker", "--until", "architecture"], project)
    assert built.code == 0
    assert (
        "skills/gif-maker/SKILL.md:4:1: warning[W101]: type 'fuzzer' is not a Mindrian agent type"
        in built.err
    )
    shown = cli(["explain", "gif-maker"], project)
    assert shown.code == 0
    assert (
        "  decided triggers inferred (the skill sets none): gif (name, line 2), "
        "maker (name, line 2), animated (description, line 3), sticker (description, line 3)\n"
    ) in shown.out
    assert "decided type: operator" in shown.out
    again = cli(["build", "skills/gif-maker", "--until", "architecture"], project)
    # Cached: still true of the skill and still in --json, so said again (once).
    assert again.err.count("warning[W101]") == 1


def test_any_build_removes_the_test_session_an_interrupted_build_left(
    cli, project: Path, monkeypatch
):
    """Repro: Ctrl-C during a batch's shared test session left ``staging/tests-*`` (a copy
    of every package of the chunk); only a later batch testing several packages removed it,
    so after a no-op or one-skill build it stayed for good."""
    use(monkeypatch, make_pipeline())
    staging = project / ".mindrian" / "staging"
    left = staging / "tests-k1lled"
    (left / "demo").mkdir(parents=True)
    assert cli(["build", "skills/demo/SKILL.md", "--until", "neo4j_schema"], project).code == 0
    assert left.is_dir()  # a build that writes no package takes no lock and sweeps nothing
    assert cli(["build", "skills/demo/SKILL.md"], project).code == 0
    assert not left.exists()


def test_an_interrupted_command_says_so_and_exits_130(cli, project: Path, monkeypatch):
    """Repro: Ctrl-C ended a build with status 130 and not a word, and ``--json`` printed
    nothing at all on stdout."""

    def interrupt(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("builder.cli.build.targets", interrupt)
    human = cli(["build", "--all"], project)
    assert (human.code, human.out) == (130, "")
    assert human.err == (
        "error[E001]: interrupted; the next build finishes or undoes what was in progress\n"
    )
    machine = cli(["build", "--all", "--json"], project)
    report = json.loads(machine.out)
    assert machine.code == 130 and report["exit_code"] == 130
    assert report["error"]["code"] == "E001"


def test_a_skill_md_that_is_a_folder_is_said_to_be_one(cli, tmp_path: Path):
    """Repro: ``validate skills/x/SKILL.md`` on a folder looked for ``SKILL.md/SKILL.md``
    ("no such file"), and ``build --all`` said the folder had no SKILL.md."""
    (tmp_path / "pyproject.toml").write_text("[tool.mindrian]\n", encoding="utf-8")
    (tmp_path / "skills" / "x" / "SKILL.md").mkdir(parents=True)
    expected = re.compile(
        r"^skills/x/SKILL\.md: error\[S100\]: valid_yaml: cannot read '(.*/)?skills/x/SKILL\.md': "
        r"it is a folder$",
        re.M,
    )
    for args in (["validate", "skills/x/SKILL.md"], ["validate", "skills/x"], ["build", "--all"]):
        done = cli(args, tmp_path)
        assert done.code == 1 and expected.search(done.err), (args, done.err)
