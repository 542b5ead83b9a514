"""``build --all``: order, continue-on-failure, collisions, phase 7 in this process, parallel =
sequential."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from build_factories import (
    FakePhase,
    FakePipeline,
    Trail,
    make_pipeline,
    make_project,
    skill_text,
    tree,
)

from builder.orchestration.batch import (
    COLLISION_CODE,
    BatchOptions,
    Listener,
    Target,
    build_many,
    discover,
    find_collisions,
    read_sources,
)
from builder.orchestration.runner import Phases
from builder.phases import PHASE_NAMES, phase_number
from builder.phases.registration import RegistrationPhase
from builder.pipeline.build_results import BuildReport, PhaseReport
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import PhaseInput, PhaseResult
from builder.pipeline.errors import SkillError, SourceLocation
from builder.pipeline.services import ProbeRunner, Services
from builder.probe.runner import ProbeResult, WarmProbes, run_probe

# Slow: whole builds of several skills, phases 1-7.
pytestmark = pytest.mark.slow


class Recorder(Listener):
    """Every event, in the order the batch told them."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def started(self, target: Target) -> None:
        self.events.append(f"start {target.display}")

    def phase(self, report: PhaseReport) -> None:
        self.events.append(f"  {report.number} {report.status}")

    def finished(self, report: BuildReport) -> None:
        self.events.append(f"end {report.path} {'failed' if report.problem else 'ok'}")


class FailsFor(FakePhase):
    """A fake phase that raises for skills whose path contains ``marker``."""

    def __init__(self, name: str, marker: str) -> None:
        super().__init__(name)
        self.marker = marker

    def run(self, inputs: PhaseInput) -> PhaseResult:
        if self.marker in inputs.source.path:
            raise SkillError(f"{self.name} refuses {inputs.source.path}", code="S999")
        return super().run(inputs)


class CrashesFor(FakePhase):
    """A fake phase with a bug: raises a plain exception (not a stage error) for ``marker``."""

    def __init__(self, name: str, marker: str) -> None:
        super().__init__(name)
        self.marker = marker

    def run(self, inputs: PhaseInput) -> PhaseResult:
        if self.marker in inputs.source.path:
            raise RuntimeError("a workflow needs at least one step")
        return super().run(inputs)


class RecordingRegistration(FakePhase):
    """Phase 7 that notes which skill it registered and in which process."""

    def __init__(self) -> None:
        super().__init__("registration")
        self.order: list[tuple[str, int]] = []

    def run(self, inputs: PhaseInput) -> PhaseResult:
        self.order.append((inputs.source.path, os.getpid()))
        return super().run(inputs)


def targets(root: Path) -> list[Target]:
    return [Target(p, p.relative_to(root).as_posix()) for p in discover(root)]


def options(root: Path, name: str = "run", **changes: object) -> BatchOptions:
    return BatchOptions(
        checkpoints_dir=root / name / "checkpoints", out_dir=root / name / "generated", **changes
    )


def without_times(reports: tuple[BuildReport, ...]) -> list[BuildReport]:
    return [
        replace(r, phases=tuple(replace(p, seconds=0.0, cpu_seconds=0.0) for p in r.phases))
        for r in reports
    ]


def test_discover_finds_every_skill_md_sorted(tmp_path: Path) -> None:
    make_project(tmp_path, {"b": "x", "a": "x", "a/nested": "x"})
    assert [p.relative_to(tmp_path).as_posix() for p in discover(tmp_path)] == [
        "skills/a/SKILL.md",
        "skills/a/nested/SKILL.md",
        "skills/b/SKILL.md",
    ]


def test_reports_keep_input_order_and_a_failure_does_not_stop_the_others(tmp_path: Path) -> None:
    make_project(tmp_path, {name: "x" for name in ("alpha", "broken", "gamma")})
    pipeline = make_pipeline()
    pipeline.phases["architecture"] = FailsFor("architecture", "broken")
    registration = RecordingRegistration()
    recorder = Recorder()
    reports = build_many(
        targets(tmp_path),
        BuildConfig(root=str(tmp_path)),
        options(tmp_path, jobs=2),
        listener=recorder,
        registration=registration,
        phases=pipeline.load,
    )
    assert [(r.path, r.problem.code if r.problem else None) for r in reports] == [
        ("skills/alpha/SKILL.md", None),
        ("skills/broken/SKILL.md", "S999"),
        ("skills/gamma/SKILL.md", None),
    ]
    # Phase 7 ran here, in this process, once per successful skill, in order.
    assert registration.order == [
        ("skills/alpha/SKILL.md", os.getpid()),
        ("skills/gamma/SKILL.md", os.getpid()),
    ]
    seven = [f"  {n} ok" for n in range(1, len(PHASE_NAMES) + 1)]
    assert recorder.events == [
        "start skills/alpha/SKILL.md",
        *seven,
        "end skills/alpha/SKILL.md ok",
        "start skills/broken/SKILL.md",
        "  1 ok",
        "  2 error",
        "end skills/broken/SKILL.md failed",
        "start skills/gamma/SKILL.md",
        *seven,
        "end skills/gamma/SKILL.md ok",
    ]
    assert max(r.exit_code for r in reports) == 1


@pytest.mark.parametrize(
    ("switches", "statuses"),
    [
        ({}, ["cached"] * len(PHASE_NAMES)),
        ({"reregister": True}, ["cached"] * (len(PHASE_NAMES) - 1) + ["ok"]),
        ({"force": True}, ["ok"] * len(PHASE_NAMES)),
        ({"from_phase": "registration"}, ["loaded"] * (len(PHASE_NAMES) - 1) + ["ok"]),
    ],
)
def test_a_second_run_caches_or_reruns_phase_seven_as_asked(
    tmp_path: Path, switches: dict[str, object], statuses: list[str]
) -> None:
    make_project(tmp_path, {"alpha": "x"})
    pipeline = make_pipeline()
    config = BuildConfig(root=str(tmp_path))
    build_many(targets(tmp_path), config, options(tmp_path), phases=pipeline.load)
    (report,) = build_many(
        targets(tmp_path), config, options(tmp_path, **switches), phases=pipeline.load
    )
    assert [p.status for p in report.phases] == statuses


def test_until_before_registration_skips_phase_seven(tmp_path: Path) -> None:
    make_project(tmp_path, {"alpha": "x"})
    pipeline = make_pipeline()
    (report,) = build_many(
        targets(tmp_path),
        BuildConfig(root=str(tmp_path)),
        options(tmp_path, until_phase="code_generation"),
        phases=pipeline.load,
    )
    assert [p.number for p in report.phases] == list(range(1, phase_number("code_generation") + 1))
    assert pipeline["registration"].calls == 0


def test_two_skills_with_one_id_are_both_refused_and_the_rest_built(tmp_path: Path) -> None:
    # The fake phase 1 takes the agent id from the folder name, so x/same and y/same collide.
    make_project(tmp_path, {"x/same": "x", "y/same": "x", "other": "x"})
    pipeline = make_pipeline()
    reports = build_many(
        targets(tmp_path), BuildConfig(root=str(tmp_path)), options(tmp_path), phases=pipeline.load
    )
    by_path = {r.path: r for r in reports}
    assert by_path["skills/other/SKILL.md"].problem is None
    for mine, theirs in (
        ("skills/x/same/SKILL.md", "skills/y/same/SKILL.md"),
        ("skills/y/same/SKILL.md", "skills/x/same/SKILL.md"),
    ):
        problem = by_path[mine].problem
        assert problem is not None and problem.code == COLLISION_CODE
        assert problem.render() == (
            f"{mine}: error[{COLLISION_CODE}]: {mine} and {theirs} both map to the agent id "
            "'same'; rename one of the skills"
        )
        assert by_path[mine].phases == ()
    # Phase 1 runs once per skill: the colliding skills' name lines and the one build take its
    # result from the collision scan.
    assert pipeline["skill_analysis"].calls == 3


def test_the_real_phase_one_finds_two_skills_sharing_a_package(tmp_path: Path) -> None:
    make_project(
        tmp_path,
        {
            "one": skill_text("shared-name"),
            "two": skill_text("shared-name"),
            "three": skill_text("third"),
        },
    )
    sources, unreadable = read_sources(targets(tmp_path))
    assert not unreadable
    found = find_collisions(list(sources.values()), BuildConfig(root=str(tmp_path)))
    assert sorted(found) == ["skills/one/SKILL.md", "skills/two/SKILL.md"]
    assert (
        "skills/one/SKILL.md and skills/two/SKILL.md both map to the agent id 'shared-name'"
        in found["skills/one/SKILL.md"].message
    )
    # Located at the ``name:`` line, the one to change.
    assert found["skills/two/SKILL.md"].location == SourceLocation("skills/two/SKILL.md", 2)


def test_parallel_and_sequential_builds_write_the_same_bytes(tmp_path: Path) -> None:
    """Real phases 1-3 in a process pool and in this process: same checkpoints, same reports."""
    make_project(
        tmp_path,
        {
            "alpha": skill_text("alpha-skill"),
            "beta": "---\nname: [unclosed\n---\n",
            "gamma": skill_text("gamma-skill"),
            "delta": skill_text("delta-skill"),
        },
    )
    config = BuildConfig(root=str(tmp_path))
    runs = {}
    for jobs in (1, 2):
        recorder = Recorder()
        reports = build_many(
            targets(tmp_path),
            config,
            options(tmp_path, f"jobs{jobs}", jobs=jobs, until_phase="handoff_protocol"),
            listener=recorder,
        )
        runs[jobs] = (
            without_times(reports),
            recorder.events,
            tree(tmp_path / f"jobs{jobs}" / "checkpoints"),
        )
    assert runs[1] == runs[2]
    reports, events, files = runs[2]
    assert [r.path for r in reports] == [t.display for t in targets(tmp_path)]
    assert [r.problem is None for r in reports] == [True, False, True, True]
    assert (
        events[0] == "start skills/alpha/SKILL.md" and events[-1] == "end skills/gamma/SKILL.md ok"
    )
    assert sorted({name.split("/")[0] for name in files}) == [
        ".by-digest",  # the phase-1 index: one entry per skill that passed phase 1
        "alpha-skill",
        "delta-skill",
        "gamma-skill",
    ]


def test_build_all_on_the_command_line_reports_in_order_and_exits_1(
    cli, tmp_path: Path, monkeypatch
) -> None:
    make_project(tmp_path, {name: "x" for name in ("a", "b-broken", "c")})
    pipeline = make_pipeline()
    pipeline.phases["skill_analysis"] = FailsFor("skill_analysis", "broken")
    monkeypatch.setattr("builder.orchestration.runner.DEFAULT", Phases.local(pipeline.load))
    result = cli(["build", "--all", "--jobs", "2"], tmp_path)
    assert result.code == 1
    starts = [line for line in result.err.splitlines() if line.startswith("build ")]
    assert starts == [
        "build skills/a/SKILL.md",
        "build skills/b-broken/SKILL.md",
        "build skills/c/SKILL.md",
    ]
    assert (
        "skills/b-broken/SKILL.md: error[S999]: skill_analysis refuses skills/b-broken/SKILL.md"
        in result.err
    )
    assert result.err.splitlines()[-1] == "2 built, 1 failed"


def test_register_reruns_phase_seven_only(cli, tmp_path: Path, monkeypatch) -> None:
    make_project(tmp_path, {"a": "x"})
    pipeline: FakePipeline = make_pipeline()
    monkeypatch.setattr("builder.orchestration.runner.DEFAULT", Phases.local(pipeline.load))
    assert cli(["build", "--all"], tmp_path).code == 0
    result = cli(["register", "skills/a"], tmp_path)
    assert result.code == 0
    assert result.err.splitlines()[0] == "register skills/a/SKILL.md"
    assert {name: phase.calls for name, phase in pipeline.phases.items()} == {
        **{name: 1 for name in PHASE_NAMES[:-1]},
        "registration": 2,
    }


class ProbeWatcher(RegistrationPhase):
    """Phase 7 with fake output that notes the probe it was given."""

    checks = ("registration_done", "consistent")
    output_type = Trail

    def __init__(self) -> None:
        super().__init__(env={})
        self.probes: list[object] = []  # shared with the copies the batch makes

    def run(self, inputs: PhaseInput) -> PhaseResult:
        self.probes.append(self.probe)
        return FakePhase("registration").run(inputs)


def _own_probe(out_dir: Path, identifier: str) -> ProbeResult:
    return ProbeResult(True, "a test's probe")


@pytest.mark.parametrize(
    ("skills", "probe", "shared_server"),
    [
        (("alpha", "beta"), None, True),
        (("alpha",), None, True),
        (("alpha", "beta"), _own_probe, False),
    ],
)
def test_every_skill_probes_through_one_warm_worker_unless_a_probe_was_chosen(
    tmp_path: Path, skills: tuple[str, ...], probe: ProbeRunner | None, shared_server: bool
) -> None:
    make_project(tmp_path, {name: skill_text(name) for name in skills})
    registration = ProbeWatcher()
    pipeline = make_pipeline()
    reports = build_many(
        targets(tmp_path),
        BuildConfig(root=str(tmp_path)),
        options(tmp_path),
        registration=registration,
        phases=pipeline.load,
        services=Services(probe=probe),
    )
    assert all(r.problem is None for r in reports)
    assert len(registration.probes) == len(skills)
    expected = registration.probes[0] if shared_server else probe
    assert isinstance(expected, WarmProbes) is shared_server
    assert all(p is expected for p in registration.probes)
    assert registration.probe is run_probe  # the caller's phase itself is left as it was


@pytest.mark.parametrize("phase", ["skill_analysis", "code_generation"])
def test_an_internal_error_fails_that_skill_only(tmp_path: Path, phase: str) -> None:
    make_project(tmp_path, {name: "x" for name in ("alpha", "broken", "gamma")})
    pipeline = make_pipeline()
    pipeline.phases[phase] = CrashesFor(phase, "broken")
    recorder = Recorder()
    reports = build_many(
        targets(tmp_path),
        BuildConfig(root=str(tmp_path)),
        options(tmp_path, jobs=2),
        listener=recorder,
        phases=pipeline.load,
    )
    assert [(r.path, r.problem.code if r.problem else None, r.exit_code) for r in reports] == [
        ("skills/alpha/SKILL.md", None, 0),
        ("skills/broken/SKILL.md", "I001", 3),
        ("skills/gamma/SKILL.md", None, 0),
    ]
    broken = reports[1].problem
    assert broken is not None and broken.location is not None
    assert broken.location.path == "skills/broken/SKILL.md"
    assert broken.message == (
        "RuntimeError: a workflow needs at least one step "
        "(rerun as `mindrian --debug build …` for the traceback)"
    )
    assert recorder.events.count("end skills/broken/SKILL.md failed") == 1
    assert recorder.events[-1] == "end skills/gamma/SKILL.md ok"


def test_json_report_is_complete_when_one_skill_crashes(cli, tmp_path: Path, monkeypatch) -> None:
    make_project(tmp_path, {name: "x" for name in ("a", "b-broken", "c")})
    pipeline = make_pipeline()
    pipeline.phases["code_generation"] = CrashesFor("code_generation", "broken")
    monkeypatch.setattr("builder.orchestration.runner.DEFAULT", Phases.local(pipeline.load))
    result = cli(["build", "--all", "--jobs", "2", "--json"], tmp_path)
    assert result.code == 3
    report = json.loads(result.out)
    assert (report["ok"], report["exit_code"]) == (False, 3)
    assert [(b["path"], b["exit_code"]) for b in report["builds"]] == [
        ("skills/a/SKILL.md", 0),
        ("skills/b-broken/SKILL.md", 3),
        ("skills/c/SKILL.md", 0),
    ]
    error = report["builds"][1]["error"]
    assert error["code"] == "I001"
    assert error["text"].startswith("skills/b-broken/SKILL.md: error[I001]: RuntimeError: ")
    assert "mindrian --debug build" in error["text"]


def test_frames_carry_the_crashed_skills_error(cli, tmp_path: Path, monkeypatch) -> None:
    make_project(tmp_path, {name: "x" for name in ("a", "b-broken")})
    pipeline = make_pipeline()
    pipeline.phases["architecture"] = CrashesFor("architecture", "broken")
    monkeypatch.setattr("builder.orchestration.runner.DEFAULT", Phases.local(pipeline.load))
    result = cli(["build", "--all", "--frames"], tmp_path)
    assert result.code == 3
    frames = [json.loads(line.split(":", 2)[2][:-3]) for line in result.out.splitlines()]
    errors = [f for f in frames if "code" in f]
    assert [(e["code"], e.get("skill")) for e in errors] == [("I001", "skills/b-broken/SKILL.md")]
    assert frames[-1] == {"exit_code": 3, "ok": False, "stage": "build"}
