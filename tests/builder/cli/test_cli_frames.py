"""``--frames``: the CLI's events as control frames on stdout, read back with ``FrameParser``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from build_factories import CliResult, FakePipeline, make_pipeline, make_project, skill_text

from builder.orchestration.batch import BatchOptions, Target
from builder.orchestration.runner import Phases
from builder.phases import PHASE_NAMES
from builder.pipeline.build_results import BuildReport, PhaseReport
from builder.pipeline.errors import SkillError, SourceLocation
from mindrian.frames import Frame, FrameParser, Text, parse_text

# Slow: whole builds through the command line.
pytestmark = pytest.mark.slow

SKILL = "skills/demo/SKILL.md"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path, {"demo": skill_text("demo")})


def use(monkeypatch: pytest.MonkeyPatch, pipeline: FakePipeline) -> FakePipeline:
    """Make the CLI run the fake phases."""
    monkeypatch.setattr("builder.orchestration.runner.DEFAULT", Phases.local(pipeline.load))
    return pipeline


def frames_of(result: CliResult) -> list[tuple[str, dict[str, Any]]]:
    """Type and payload of every frame on stdout, fed one line at a time; stdout must hold nothing
    else."""
    parser = FrameParser()
    events = [event for line in result.out.splitlines(keepends=True) for event in parser.feed(line)]
    events.extend(parser.close())
    strays = [e.text for e in events if isinstance(e, Text) and e.text.strip()]
    assert not strays, f"stdout holds more than frames: {strays}"
    frames = [e for e in events if isinstance(e, Frame)]
    assert all(f.ns == "MINDRIAN" for f in frames)
    assert len(frames) == len(result.out.splitlines()), "one frame per line"
    return [(f.type, dict(f.payload)) for f in frames]


def ready(stage: str = "build", skill: str = SKILL) -> tuple[str, dict[str, Any]]:
    return ("READY", {"stage": stage, "skill": skill})


def phase(
    number: int, status: str = "ok", skill: str = SKILL, **extra: Any
) -> tuple[str, dict[str, Any]]:
    return (
        "PHASE",
        {
            "skill": skill,
            "phase": PHASE_NAMES[number - 1],
            "number": number,
            "status": status,
            **extra,
        },
    )


def done(exit_code: int, stage: str = "build", **extra: Any) -> tuple[str, dict[str, Any]]:
    return (
        "DONE",
        {"stage": stage, "ok": exit_code == 0, "exit_code": exit_code, **extra},
    )


def test_successful_build_tells_ready_each_phase_and_done(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch, make_pipeline())
    result = cli(["build", "skills/demo", "--frames"], project)
    assert result.code == 0
    assert frames_of(result) == [
        ready(),
        *(phase(n) for n in range(1, 8)),
        done(0, skill=SKILL, agent_id="demo"),
        done(0),
    ]
    # The human lines are still there, on stderr.
    assert "[1/7] skill_analysis … ok" in result.err
    assert "built demo (skills/demo/SKILL.md)" in result.err


def test_cached_phases_say_so_and_frames_carry_no_times(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch, make_pipeline())
    first = cli(["build", "skills/demo", "--frames", "--quiet"], project)
    cached = cli(["build", "skills/demo", "--frames", "--timings"], project)
    assert [p["status"] for t, p in frames_of(cached) if t == "PHASE"] == ["cached"] * 7
    forced = cli(["build", "skills/demo", "--frames", "--force", "--timings"], project)
    assert forced.out == first.out
    assert first.err == ""
    assert " ms]" in forced.err


def test_failed_check_is_a_failed_phase_then_an_error_with_its_location(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline = use(monkeypatch, make_pipeline())
    pipeline["tool_assembly"].failing = "tool_assembly_done"
    result = cli(["build", "skills/demo", "--frames"], project)
    assert result.code == 1
    message = (
        "check 'tool_assembly_done' of phase tool_assembly (4) failed: tool_assembly_done "
        "does not hold"
    )
    assert frames_of(result) == [
        ready(),
        phase(1),
        phase(2),
        phase(3),
        phase(4, "failed", failed=["tool_assembly_done"]),
        (
            "ERROR",
            {
                "code": "P003",
                "message": message,
                "location": {"path": SKILL, "line": 3, "column": 5},
                "skill": SKILL,
            },
        ),
        done(1, skill=SKILL, agent_id="demo"),
        done(1),
    ]


def test_phase_one_error_has_no_agent_id(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline = use(monkeypatch, make_pipeline())
    pipeline["skill_analysis"].error = SkillError(
        "front matter is not a mapping",
        location=SourceLocation(SKILL, 2, 1),
        code="S203",
    )
    result = cli(["build", "skills/demo", "--frames"], project)
    assert result.code == 1
    assert frames_of(result) == [
        ready(),
        phase(1, "error"),
        (
            "ERROR",
            {
                "code": "S203",
                "message": "front matter is not a mapping",
                "location": {"path": SKILL, "line": 2, "column": 1},
                "skill": SKILL,
            },
        ),
        done(1, skill=SKILL),
        done(1),
    ]


def test_real_phase_one_rejects_a_misspelt_type(cli, tmp_path: Path) -> None:
    project = make_project(
        tmp_path,
        {"robot": skill_text("robot").replace("type: operator", "type: operater")},
    )
    result = cli(["build", "skills/robot", "--frames", "--quiet"], project)
    _, *_, (kind, error), _, _ = frames_of(result)
    assert (result.code, kind, error["code"], error["location"]) == (
        1,
        "ERROR",
        "S204",
        {"path": "skills/robot/SKILL.md", "line": 4, "column": 1},
    )
    assert "unknown type 'operater' (did you mean 'operator'?)" in error["message"]
    assert result.err.splitlines() == [
        f"skills/robot/SKILL.md:4:1: error[S204]: {error['message']}"
    ]


def test_every_skill_of_a_batch_is_framed_in_order(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, {"alpha": "x" * ((1 << 20) + 1), "demo": skill_text("demo")})
    use(monkeypatch, make_pipeline())
    result = cli(["build", "--all", "--frames", "--until", "2"], project)
    alpha = "skills/alpha/SKILL.md"
    frames = frames_of(result)
    assert [t for t, _ in frames] == [
        "READY",
        "ERROR",
        "DONE",
        "READY",
        "PHASE",
        "PHASE",
        "DONE",
        "DONE",
    ]
    assert frames[0] == ready(skill=alpha)
    assert (frames[1][1]["code"], frames[1][1]["skill"]) == ("S107", alpha)
    assert frames[2] == done(1, skill=alpha)
    assert frames[6:] == [done(0, skill=SKILL, agent_id="demo"), done(1)]


def test_register_frames_name_their_stage(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline = use(monkeypatch, make_pipeline())
    cli(["build", "skills/demo", "--quiet"], project)
    result = cli(["register", "skills/demo", "--frames", "--quiet"], project)
    assert result.code == 0
    assert frames_of(result) == [
        ready("register"),
        *(phase(n, "cached") for n in range(1, 7)),
        phase(7),
        done(0, "register", skill=SKILL, agent_id="demo"),
        done(0, "register"),
    ]
    assert pipeline["registration"].calls == 2


@pytest.mark.parametrize(
    ("args", "code", "error_code"),
    [
        (["build", "skills/demo", "--frames", "--json"], 2, "U014"),
        (["build", "skills/demo", "--frames", "--from", "nine"], 2, "U002"),
        (["register", "--frames"], 2, "U005"),
        (["build", "--all", "skills/demo", "--frames"], 2, "U004"),
    ],
)
def test_errors_before_any_build_are_framed_too(
    cli, tmp_path: Path, args: list[str], code: int, error_code: str
) -> None:
    project = make_project(tmp_path, {"demo": skill_text("demo")})
    result = cli(args, project)
    frames = frames_of(result)
    assert result.code == code
    assert [t for t, _ in frames] == ["ERROR", "DONE"]
    assert frames[0][1]["code"] == error_code
    assert frames[1] == done(code, args[0])
    assert f"error[{error_code}]" in result.err


def test_an_internal_error_ends_with_an_error_frame_and_exit_3(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline = use(monkeypatch, make_pipeline())
    monkeypatch.setattr(pipeline["architecture"], "run", lambda inputs: 1 / 0)
    result = cli(["build", "skills/demo", "--frames", "--quiet"], project)
    assert result.code == 3
    # The bug fails this skill (a batch goes on with the others), then the command.
    assert frames_of(result) == [
        ready(),
        phase(1),
        (
            "ERROR",
            {
                "code": "I001",
                "message": "ZeroDivisionError: division by zero "
                "(rerun as `mindrian --debug build …` for the traceback)",
                "location": {"path": SKILL, "line": 0, "column": 0},
                "skill": SKILL,
            },
        ),
        done(3, skill=SKILL),
        done(3),
    ]


def test_options_the_parser_rejects_print_no_frames(cli, project: Path) -> None:
    result = cli(["build", "skills/demo", "--frames", "--bogus"], project)
    assert (result.code, result.out) == (2, "")


def test_skill_text_cannot_forge_a_frame_in_a_merged_terminal(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forged = '<<<MINDRIAN:DONE:{"ok":true,"stage":"build"}>>>'
    pipeline = use(monkeypatch, make_pipeline())
    pipeline["skill_analysis"].error = SkillError(f"unknown field {forged!r}", code="S203")
    result = cli(["build", "skills/demo", "--frames"], project)
    # A terminal shows both streams as one; only frames the CLI meant are frames.
    merged = [e for e in parse_text(result.err + result.out) if isinstance(e, Frame)]
    meant = [e for e in parse_text(result.out) if isinstance(e, Frame)]
    assert merged == meant
    assert [e.type for e in meant] == ["READY", "PHASE", "ERROR", "DONE", "DONE"]
    (error,) = [e for e in meant if e.type == "ERROR"]
    assert error.payload["message"] == f"unknown field {forged!r}"
    assert forged not in result.err and forged not in result.out


def test_without_frames_nothing_changes(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forged = "<<<MINDRIAN:DONE:{}>>>"
    pipeline = use(monkeypatch, make_pipeline())
    pipeline["skill_analysis"].error = SkillError(forged, code="S203")
    result = cli(["build", "skills/demo"], project)
    assert result.out == ""
    assert result.err.splitlines()[-1] == f"skills/demo/SKILL.md: error[S203]: {forged}"


class DriftingRegeneration:
    """Replaces ``build_many`` inside ``check``: tells the listener one skill, writes ``new`` where
    ``old`` is committed."""

    def __call__(
        self,
        skills: list[Target],
        config: Any,
        options: BatchOptions,
        *,
        listener: Any = None,
        registration: Any = None,
        phases: Any = None,
    ) -> tuple[BuildReport, ...]:
        (options.out_dir / "a.txt").parent.mkdir(parents=True, exist_ok=True)
        (options.out_dir / "a.txt").write_bytes(b"new\n")
        reports = []
        for target in skills:
            report = BuildReport(target.display, "demo", (PhaseReport(1, "skill_analysis", "ok"),))
            listener.started(target)
            listener.phase(report.phases[0])
            listener.finished(report)
            reports.append(report)
        return tuple(reports)


def test_check_frames_its_regeneration_and_the_drift(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "generated").mkdir()
    (project / "generated/a.txt").write_bytes(b"old\n")
    monkeypatch.setattr("builder.orchestration.check.build_many", DriftingRegeneration())
    result = cli(["check", "--frames"], project)
    assert result.code == 1
    assert frames_of(result) == [
        ready("regenerate"),
        phase(1),
        done(0, "regenerate", skill=SKILL, agent_id="demo"),
        (
            "ERROR",
            {
                "code": "D001",
                "message": "1 file(s) in generated differ from a fresh build: generated/a.txt",
            },
        ),
        done(1, "check"),
    ]
    # The diff moves to stderr, so stdout keeps frames only.
    assert "-old" in result.err.splitlines() and "+new" in result.err.splitlines()
