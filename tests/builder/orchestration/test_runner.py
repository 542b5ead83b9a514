"""The phase runner with fake phases: digests, skipping, failing, resuming,
--from/--until/--force."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from build_factories import (
    Trail,
    make_pipeline,
    make_source,
    run_build,
    split_at,
    statuses,
    trail_steps,
    tree,
)

from builder import __version__
from builder.orchestration.runner import chain_digest, input_digest
from builder.phases import PHASE_NAMES, load_phase, phase_number, resolve_phase
from builder.phases.outputs import Outputs
from builder.pipeline.build_results import PhaseReport
from builder.pipeline.code_digest import code_files, files_digest, phase_code_digest
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import PhaseInput
from builder.pipeline.errors import (
    ArchitectureError,
    SkillError,
    SourceLocation,
    UsageError,
)
from builder.pipeline.report import progress_line
from builder.pipeline.serial import load_yaml, to_plain

ALL_RAN = {name: 1 for name in PHASE_NAMES}


def checkpoint_names(tmp_path: Path, agent: str = "demo") -> list[str]:
    folder = tmp_path / "checkpoints" / agent
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_a_full_build_runs_every_phase_once_and_writes_a_checkpoint_each(tmp_path: Path):
    pipeline = make_pipeline()
    report = run_build(tmp_path, pipeline)
    assert report.exit_code == 0 and report.problem is None
    assert report.agent_id == "demo"
    assert statuses(report) == ["ok"] * len(PHASE_NAMES)
    assert pipeline.calls() == ALL_RAN
    assert checkpoint_names(tmp_path) == [
        f"{n}-{name}.yaml" for n, name in enumerate(PHASE_NAMES, 1)
    ]
    last_name = f"{len(PHASE_NAMES)}-{PHASE_NAMES[-1]}.yaml"
    last = load_yaml((tmp_path / "checkpoints/demo" / last_name).read_text())
    assert last["output"]["steps"] == list(trail_steps())


def test_an_unchanged_build_runs_no_phase_the_second_time(tmp_path: Path):
    pipeline = make_pipeline()
    run_build(tmp_path, pipeline)
    report = run_build(tmp_path, pipeline)
    assert pipeline.calls() == ALL_RAN
    assert statuses(report) == ["cached"] * len(PHASE_NAMES)
    assert report.exit_code == 0


@pytest.mark.parametrize(
    "change",
    [
        {"source": make_source("---\nname: demo\n---\nother body\n")},
        {"source": make_source(path="skills/elsewhere/demo/SKILL.md")},
        {"config": BuildConfig(models={"operator": "openai:gpt-4o"})},
        {"config": BuildConfig(connect=True)},
    ],
    ids=["skill-bytes", "skill-path", "models", "connect"],
)
def test_a_changed_input_reruns_every_phase(tmp_path: Path, change: dict):
    pipeline = make_pipeline()
    run_build(tmp_path, pipeline)
    run_build(tmp_path, pipeline, **change)
    assert pipeline.calls() == {name: 2 for name in PHASE_NAMES}


def test_the_project_root_is_not_part_of_any_digest(tmp_path: Path):
    pipeline = make_pipeline()
    run_build(tmp_path, pipeline, config=BuildConfig(root="/one"))
    run_build(tmp_path, pipeline, config=BuildConfig(root="/two"))
    assert pipeline.calls() == ALL_RAN


def test_a_change_to_one_phases_code_reruns_that_phase_and_later_ones_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A phase's output is unchanged by another phase's code, so earlier phases stay cached."""
    from builder.pipeline import code_digest

    pipeline = make_pipeline()
    run_build(tmp_path, pipeline)
    real = code_digest.phase_code_digest
    monkeypatch.setattr(
        "builder.orchestration.runner.phase_code_digest",
        lambda phase: "edited" if phase.name == "tool_assembly" else real(phase),
    )
    pipeline["tool_assembly"].note = "the edited code decides differently"
    report = run_build(tmp_path, pipeline)
    assert statuses(report) == split_at("tool_assembly", "cached", "ok")
    assert pipeline.calls() == {
        name: 1 if number < phase_number("tool_assembly") else 2
        for number, name in enumerate(PHASE_NAMES, 1)
    }


def test_a_rerun_phase_with_the_same_output_leaves_later_phases_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    pipeline = make_pipeline()
    run_build(tmp_path, pipeline)
    monkeypatch.setattr(
        "builder.orchestration.runner.phase_code_digest",
        lambda phase: "edited" if phase.name == "architecture" else "same",
    )
    run_build(tmp_path, pipeline)  # every digest changed: all run once more
    monkeypatch.setattr(
        "builder.orchestration.runner.phase_code_digest",
        lambda phase: "edited again" if phase.name == "architecture" else "same",
    )
    report = run_build(tmp_path, pipeline)
    assert statuses(report) == split_at("architecture", "cached", "ok", "cached")


def test_the_code_files_of_a_module_follow_its_imports_schemas_and_packages(tmp_path: Path):
    files = {
        "builder/__init__.py": "",
        "builder/phases/__init__.py": "",
        "builder/phases/x.py": (
            "import json\nfrom builder.skill import (\n    model,  # the types\n)\n"
            "def late():\n    from mindrian.handoff import context\n"
            "NAME = 'mindrian.named'\n"
        ),
        "builder/phases/unrelated.py": "B = 2\n",
        "builder/skill/__init__.py": "",
        "builder/skill/model.py": "SCHEMA = 'schemas/s.json'\n",
        "builder/schemas/s.json": "{}\n",
        "builder/schemas/other.json": "{}\n",
        "mindrian/__init__.py": "",
        "mindrian/handoff/__init__.py": "",
        "mindrian/handoff/context.py": "FIELDS = ()\n",
        "mindrian/named.py": "",
        "mindrian/agents/base.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = {p.relative_to(tmp_path).as_posix() for p in code_files(tmp_path, ["builder.phases.x"])}
    assert found == set(files) - {
        "builder/phases/unrelated.py",
        "builder/schemas/other.json",
        "mindrian/agents/base.py",
    }
    whole = code_files(tmp_path, ["builder.phases.x"], ["mindrian"])
    assert tmp_path / "mindrian/agents/base.py" in whole
    before = files_digest(tmp_path, whole)
    (tmp_path / "mindrian/agents/base.py").write_text("# edited\n")
    assert files_digest(tmp_path, whole) != before


def test_extra_digest_reruns_that_phase_and_later_ones_only_when_its_output_changed(
    tmp_path: Path,
):
    pipeline = make_pipeline()
    template = {"digest": "t1"}
    pipeline["code_generation"].extra_digest = lambda inputs: dict(template)
    run_build(tmp_path, pipeline)
    template["digest"] = "t2"  # e.g. a template comment: the package comes out the same
    report = run_build(tmp_path, pipeline)
    assert statuses(report) == split_at("code_generation", "cached", "ok", "cached")
    template["digest"] = "t3"
    pipeline["code_generation"].note = "the package changed"
    report = run_build(tmp_path, pipeline)
    assert statuses(report) == split_at("code_generation", "cached", "ok")
    assert pipeline.calls() == {**ALL_RAN, "code_generation": 3, "registration": 2}


def test_the_digest_covers_the_earlier_outputs(tmp_path: Path):
    pipeline = make_pipeline()
    phase = pipeline["architecture"]
    inputs = PhaseInput(source=make_source(), config=BuildConfig(), previous=Outputs())
    first = chain_digest(None, "sha256:out1")
    digests = {
        input_digest(phase, inputs, first),
        input_digest(phase, inputs, chain_digest(None, "sha256:out2")),
        input_digest(phase, inputs, chain_digest("sha256:other", "sha256:out1")),
        input_digest(phase, inputs, None),
        input_digest(pipeline["skill_analysis"], inputs, first),
    }
    assert len(digests) == 5
    assert input_digest(phase, inputs, first) == input_digest(phase, inputs, str(first))


def _payload_digest(phase: Any, inputs: PhaseInput[Outputs], chain: str | None) -> str:
    """The input digest as the runner documents it: SHA-256 of the payload's canonical JSON."""
    payload = {
        "phase": phase.name,
        "number": phase.number,
        "builder_version": __version__,
        "code": phase_code_digest(phase),
        "source": {"path": inputs.source.path, "digest": inputs.source.digest},
        "config": to_plain(inputs.config.digest_data()),
        "previous": chain,
        "extra": to_plain(phase.extra_digest(inputs)),
    }
    text = json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    "extra",
    [None, "", "plain", {"b": "é\u2028", "a": '"quoted"'}, {"n": 1, "list": [1.5, None]}],
)
def test_the_digest_is_of_the_payloads_canonical_json(extra: object) -> None:
    """Serialised in parts (the configuration once) and still the documented digest, so a
    checkpoint or stamp written before matches."""
    pipeline = make_pipeline()
    phase = pipeline["neo4j_schema"]
    phase.extra_digest = lambda inputs: extra
    inputs = PhaseInput(source=make_source(), config=BuildConfig(), previous=Outputs())
    for chain in (None, chain_digest(None, "sha256:out")):
        assert input_digest(phase, inputs, chain) == _payload_digest(phase, inputs, chain)


def test_each_configuration_gives_its_own_digest_whatever_came_before() -> None:
    """The configuration's text is kept for the last one asked about, by identity: switching
    back and forth, or an equal one made anew, never serves another's."""
    phase = make_pipeline()["architecture"]
    configs = [
        BuildConfig(),
        BuildConfig(models={"operator": "openai:gpt-5"}),
        BuildConfig(connect=True),
        BuildConfig(),
    ]
    digests = []
    for config in [*configs, *reversed(configs)]:
        inputs = PhaseInput(source=make_source(), config=config, previous=Outputs())
        digest = input_digest(phase, inputs, None)
        assert digest == _payload_digest(phase, inputs, None)
        digests.append(digest)
    assert len(set(digests)) == 3  # the first and last configurations are equal
    assert digests[0] == digests[3] != digests[1]


def test_a_rerun_phase_with_a_new_output_drops_the_later_checkpoints(tmp_path: Path):
    pipeline = make_pipeline()
    run_build(tmp_path, pipeline)
    pipeline["architecture"].note = "a different decision"
    run_build(tmp_path, pipeline, force=True, until_phase="architecture")
    assert checkpoint_names(tmp_path) == ["1-skill_analysis.yaml", "2-architecture.yaml"]
    report = run_build(tmp_path, pipeline)
    assert statuses(report) == split_at("handoff_protocol", "cached", "ok")


def test_a_failed_check_stops_writes_the_failure_and_the_next_build_resumes_there(tmp_path: Path):
    pipeline = make_pipeline()
    pipeline["handoff_protocol"].failing = "consistent"
    failed = run_build(tmp_path, pipeline)

    assert failed.exit_code == 1
    assert statuses(failed) == ["ok", "ok", "failed"]
    problem = failed.problem
    assert problem.code == "P003"
    assert (
        problem.message
        == "check 'consistent' of phase handoff_protocol (3) failed: consistent does not hold"
    )
    assert problem.location == SourceLocation("skills/demo/SKILL.md", 3, 5)
    assert problem.render() == (
        "skills/demo/SKILL.md:3:5: error[P003]: check 'consistent' of phase handoff_protocol (3) "
        "failed: "
        "consistent does not hold"
    )
    stored = load_yaml((tmp_path / "checkpoints/demo/3-handoff_protocol.yaml").read_text())
    assert stored["passed"] is False
    assert stored["checks"][1] == {
        "name": "consistent",
        "passed": False,
        "reason": "consistent does not hold",
        "location": {"path": "skills/demo/SKILL.md", "line": 3, "column": 5},
    }
    assert checkpoint_names(tmp_path)[-1] == "3-handoff_protocol.yaml"

    again = run_build(tmp_path, pipeline)
    assert statuses(again) == ["cached", "cached", "failed"]

    pipeline["handoff_protocol"].failing = None
    fixed = run_build(tmp_path, pipeline)
    assert statuses(fixed) == split_at("handoff_protocol", "cached", "ok")
    assert pipeline.calls() == {**ALL_RAN, "handoff_protocol": 3}


def test_a_stage_error_writes_nothing_for_that_phase_and_drops_stale_later_checkpoints(
    tmp_path: Path,
):
    pipeline = make_pipeline()
    run_build(tmp_path, pipeline)
    pipeline["architecture"].error = ArchitectureError(
        "unknown agent type 'robot'",
        location=SourceLocation("skills/demo/SKILL.md", 4, 7),
        code="A002",
    )
    report = run_build(tmp_path, pipeline, force=True)
    assert statuses(report) == ["ok", "error"]
    assert (
        report.problem.render()
        == "skills/demo/SKILL.md:4:7: error[A002]: unknown agent type 'robot'"
    )
    assert checkpoint_names(tmp_path) == ["1-skill_analysis.yaml"]


@pytest.mark.parametrize("failure", ["check", "error"])
def test_when_phase_one_fails_nothing_is_written(tmp_path: Path, failure: str):
    pipeline = make_pipeline()
    if failure == "check":
        pipeline["skill_analysis"].failing = "skill_analysis_done"
    else:
        pipeline["skill_analysis"].error = SkillError(
            "no front matter", location=SourceLocation("skills/demo/SKILL.md", 1)
        )
    report = run_build(tmp_path, pipeline)
    assert report.exit_code == 1
    assert report.agent_id is None
    assert not (tmp_path / "checkpoints").exists()


def test_until_stops_after_the_named_phase(tmp_path: Path):
    pipeline = make_pipeline()
    report = run_build(tmp_path, pipeline, until_phase="architecture")
    assert report.exit_code == 0
    assert statuses(report) == ["ok", "ok"]
    assert checkpoint_names(tmp_path) == ["1-skill_analysis.yaml", "2-architecture.yaml"]


def test_from_loads_earlier_outputs_and_reruns_the_rest(tmp_path: Path):
    pipeline = make_pipeline()
    run_build(tmp_path, pipeline)
    report = run_build(tmp_path, pipeline, from_phase="tool_assembly")
    assert statuses(report) == split_at("tool_assembly", "loaded", "ok")
    rerun = PHASE_NAMES.index("tool_assembly")
    assert pipeline.calls() == {name: 1 if n < rerun else 2 for n, name in enumerate(PHASE_NAMES)}
    earlier = pipeline["tool_assembly"].seen[-1].previous.spec()
    assert earlier == Trail(
        id="demo", steps=trail_steps(PHASE_NAMES[: phase_number("handoff_protocol")])
    )


@pytest.mark.parametrize(
    ("prepare", "expected"),
    [
        ("none", "checkpoint of phase skill_analysis (1), which is missing or out of date"),
        (
            "changed-source",
            "checkpoint of phase skill_analysis (1), which is missing or out of date",
        ),
        ("changed-template", "checkpoint of phase architecture (2), which is out of date"),
        ("failed", "needs phase architecture (2) to have passed"),
    ],
)
def test_from_refuses_missing_stale_or_failed_earlier_checkpoints(
    tmp_path: Path, prepare: str, expected: str
):
    pipeline = make_pipeline()
    source = make_source()
    if prepare == "changed-source":
        run_build(tmp_path, pipeline)
        source = make_source("---\nname: demo\n---\nedited\n")
    if prepare == "changed-template":
        run_build(tmp_path, pipeline)
        pipeline["architecture"].extra_digest = lambda inputs: "new template"
    if prepare == "failed":
        pipeline["architecture"].failing = "consistent"
        run_build(tmp_path, pipeline)
    calls = pipeline.calls()
    report = run_build(tmp_path, pipeline, source=source, from_phase="handoff_protocol")
    assert report.exit_code == 1
    assert report.problem.code == "P004"
    assert expected in report.problem.message
    assert pipeline.calls() == calls


def test_force_reruns_every_phase_with_identical_checkpoints(tmp_path: Path):
    pipeline = make_pipeline()
    run_build(tmp_path, pipeline)
    before = tree(tmp_path / "checkpoints")
    report = run_build(tmp_path, pipeline, force=True)
    assert statuses(report) == ["ok"] * len(PHASE_NAMES)
    assert pipeline.calls() == {name: 2 for name in PHASE_NAMES}
    assert tree(tmp_path / "checkpoints") == before


def test_checkpoints_are_byte_identical_across_independent_builds(tmp_path: Path):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    run_build(first, make_pipeline())
    run_build(second, make_pipeline())
    assert tree(first / "checkpoints") == tree(second / "checkpoints")
    text = (first / "checkpoints/demo/1-skill_analysis.yaml").read_text()
    assert text.startswith(
        "phase: skill_analysis\nnumber: 1\nbuilder_version: 0.1.0\ninput_digest: sha256:"
    )


@pytest.mark.parametrize(
    ("start", "stop", "code"),
    [("registration", "architecture", "U003"), ("nine", None, "U002"), (None, "0", "U002")],
)
def test_bad_phase_ranges_are_usage_errors(tmp_path: Path, start, stop, code):
    with pytest.raises(UsageError) as caught:
        run_build(tmp_path, make_pipeline(), from_phase=start, until_phase=stop)
    assert caught.value.code == code


def test_phases_see_earlier_outputs_read_only(tmp_path: Path):
    pipeline = make_pipeline()
    run_build(tmp_path, pipeline, until_phase="handoff_protocol")
    previous = pipeline["handoff_protocol"].seen[0].previous
    assert previous.skill() == Trail(id="demo", steps=("skill_analysis",))
    assert previous.spec() == Trail(id="demo", steps=("skill_analysis", "architecture"))
    with pytest.raises(LookupError, match="neo4j_schema was read before that phase ran"):
        previous.graph()
    with pytest.raises(dataclasses.FrozenInstanceError):
        previous.skill = previous.spec  # type: ignore[misc]


def test_a_damaged_checkpoint_is_rebuilt_not_trusted(tmp_path: Path):
    pipeline = make_pipeline()
    run_build(tmp_path, pipeline, until_phase="architecture")
    path = tmp_path / "checkpoints/demo/2-architecture.yaml"
    good = path.read_bytes()
    path.write_text(path.read_text().replace("steps:", "stepz:"))
    report = run_build(tmp_path, pipeline, until_phase="architecture")
    assert statuses(report) == ["cached", "ok"]
    assert path.read_bytes() == good


def test_a_phase_must_return_its_declared_checks(tmp_path: Path):
    pipeline = make_pipeline()
    pipeline["architecture"].returned_checks = ("consistent", "architecture_done")
    report = run_build(tmp_path, pipeline, until_phase="architecture")
    assert statuses(report) == ["ok", "error"]
    assert report.problem.code == "P008"
    assert checkpoint_names(tmp_path) == ["1-skill_analysis.yaml"]


def test_progress_reports_each_phase_in_order(tmp_path: Path):
    pipeline = make_pipeline()
    pipeline["handoff_protocol"].failing = "handoff_protocol_done"
    seen: list[PhaseReport] = []
    run_build(tmp_path, pipeline, progress=seen.append)
    run_build(tmp_path, pipeline, progress=seen.append)
    lines = [progress_line(r, 7) for r in seen]
    assert lines == [
        "[1/7] skill_analysis … ok",
        "[2/7] architecture … ok",
        "[3/7] handoff_protocol … FAILED (handoff_protocol_done)",
        "[1/7] skill_analysis … ok (cached)",
        "[2/7] architecture … ok (cached)",
        "[3/7] handoff_protocol … FAILED (handoff_protocol_done)",
    ]
    assert progress_line(seen[0], 7, timings=True).endswith(" ms]")


def test_every_phase_module_is_installed() -> None:
    assert [load_phase(name).number for name in PHASE_NAMES] == list(range(1, len(PHASE_NAMES) + 1))


def test_a_missing_phase_module_is_an_internal_error(monkeypatch: pytest.MonkeyPatch):
    # Every phase ships with the package: a missing one is a broken installation, not input.
    monkeypatch.setattr("builder.phases.PHASE_NAMES", (*PHASE_NAMES, "not_written_yet"))
    with pytest.raises(ModuleNotFoundError):
        load_phase("not_written_yet")


def test_load_phase_does_not_hide_a_broken_dependency(monkeypatch: pytest.MonkeyPatch):
    def missing_dependency(name: str):
        raise ModuleNotFoundError("No module named 'agno'", name="agno")

    monkeypatch.setattr("importlib.import_module", missing_dependency)
    with pytest.raises(ModuleNotFoundError):
        load_phase("architecture")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("2", "architecture"),
        ("registration", "registration"),
        (str(len(PHASE_NAMES)), "registration"),
    ],
)
def test_resolve_phase_accepts_names_and_numbers(text: str, name: str):
    assert resolve_phase(text) == name


def test_loading_every_phase_leaves_agno_the_mcp_sdk_and_jsonschema_unimported():
    # A cached build loads each phase module only for its name, digest and output type;
    # these imports cost ~0.6 s together and belong to running the phases.
    script = (
        "import sys\n"
        "from builder.phases import PHASE_NAMES, load_phase\n"
        "for name in PHASE_NAMES: load_phase(name)\n"
        "print(sorted(m for m in ('agno', 'anyio', 'mcp', 'jsonschema') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_current_report_tells_a_build_with_nothing_to_do_without_running_anything(
    tmp_path: Path,
):
    from build_factories import make_project, skill_text

    from builder.orchestration.runner import build_source, current_report
    from builder.skill.source import load_source

    root = make_project(tmp_path, {"demo": skill_text("demo-skill")})
    skill = root / "skills/demo/SKILL.md"
    source = load_source(skill, display="skills/demo/SKILL.md")
    pipeline = make_pipeline()
    options = {"checkpoints_dir": tmp_path / "checkpoints"}
    config = BuildConfig(root=str(root))
    assert current_report(source, config, phases=pipeline.load, **options) is None
    assert pipeline.calls() == {name: 0 for name in PHASE_NAMES}
    build_source(source, config, phases=pipeline.load, **options)
    report = current_report(source, config, phases=pipeline.load, **options)
    assert report is not None and statuses(report) == ["cached"] * len(PHASE_NAMES)
    assert pipeline.calls() == ALL_RAN
    skill.write_text(skill_text("demo-skill", description="Edited."), encoding="utf-8")
    edited = load_source(skill, display="skills/demo/SKILL.md")
    assert current_report(edited, config, phases=pipeline.load, **options) is None
    assert pipeline.calls() == ALL_RAN


def test_a_scratch_build_runs_every_phase_and_hands_outputs_over_in_memory(tmp_path: Path):
    from builder.orchestration.runner import scratch_build

    pipeline = make_pipeline()
    run_build(tmp_path, pipeline)  # current checkpoints elsewhere change nothing: none is read
    before = tree(tmp_path)
    heard: list[PhaseReport] = []
    report, outputs = scratch_build(
        make_source(),
        BuildConfig(root=str(tmp_path)),
        until_phase="code_generation",
        progress=heard.append,
        phases=pipeline.load,
    )
    assert report.problem is None and report.agent_id == "demo"
    upto = PHASE_NAMES[: phase_number("code_generation")]
    assert statuses(report) == ["ok"] * len(upto) and list(report.phases) == heard
    assert pipeline.calls() == {name: 2 if name in upto else 1 for name in PHASE_NAMES}
    assert outputs.package() == Trail(id="demo", steps=trail_steps(upto))
    assert tree(tmp_path) == before  # nothing written, not even a phase-1 index entry


def test_a_scratch_build_stops_at_a_failed_check_or_an_error_as_a_build_does(tmp_path: Path):
    from builder.orchestration.runner import scratch_build

    config = BuildConfig(root=str(tmp_path))
    for broken in ("check", "error"):
        pipeline = make_pipeline()
        if broken == "check":
            pipeline["handoff_protocol"].failing = "consistent"
        else:
            pipeline["handoff_protocol"].error = ArchitectureError("no hand-over", code="A002")
        scratch, _ = scratch_build(make_source(), config, phases=pipeline.load)
        kept = run_build(tmp_path / broken, pipeline)
        assert (
            statuses(scratch) == statuses(kept) == ["ok", "ok", broken.replace("check", "failed")]
        )
        assert scratch.problem == kept.problem and scratch.problem is not None
        assert pipeline["tool_assembly"].calls == 0


def test_a_run_paused_at_a_held_step_resumes_there_in_another_process(tmp_path: Path):
    """A batch walks one run per skill in legs across processes: held at phase 6 and pickled
    (as a worker hands it back), then resumed, it writes and reports what one build does."""
    from builder.orchestration.runner import Run, start
    from builder.pipeline.checkpoints import CheckpointStore

    pipeline, config = make_pipeline(), BuildConfig(root=str(tmp_path))
    straight = run_build(tmp_path / "straight", pipeline, config=config)
    calls = pipeline.calls()
    store = CheckpointStore(tmp_path / "checkpoints")
    run = start(
        make_source(), config, checkpoints_dir=store.root, phases=pipeline.load, index=store
    )
    assert run.identity == ("demo", None) and pipeline.calls()["skill_analysis"] == 2
    held = run.advance(
        len(PHASE_NAMES), pipeline.load, hold=lambda phase, _: phase.name == "code_generation"
    )
    assert run.held and statuses(held) == ["ok"] * PHASE_NAMES.index("code_generation")
    copy: Run = pickle.loads(pickle.dumps(run))
    resumed = copy.advance(len(PHASE_NAMES), pipeline.load)
    assert pipeline.calls() == {name: 2 * n for name, n in calls.items()}  # phase 1 ran once
    assert statuses(resumed) == ["ok"] * len(PHASE_NAMES) and not copy.held
    assert tree(tmp_path / "checkpoints") == tree(tmp_path / "straight" / "checkpoints")
    assert resumed.phases[-1].checks == straight.phases[-1].checks


def test_what_a_hold_staged_is_handed_to_its_phase_once_when_the_run_resumes(tmp_path: Path):
    """A hold answering :class:`Staged` holds the phase, and the phase gets the kept value in
    its inputs when the resumed run (pickled, as a worker hands it back) runs it; no other
    phase sees it."""
    from builder.orchestration.runner import Run, start
    from builder.pipeline.checkpoints import CheckpointStore
    from builder.pipeline.staged import Staged

    pipeline, config = make_pipeline(), BuildConfig(root=str(tmp_path))
    store = CheckpointStore(tmp_path / "checkpoints")
    run = start(
        make_source(), config, checkpoints_dir=store.root, phases=pipeline.load, index=store
    )
    kept = {"agent.py": "rendered once\n"}
    run.advance(
        len(PHASE_NAMES),
        pipeline.load,
        hold=lambda phase, _: Staged(kept) if phase.name == "code_generation" else False,
    )
    assert run.held and pipeline["code_generation"].calls == 0
    copy: Run = pickle.loads(pickle.dumps(run))
    report = copy.advance(len(PHASE_NAMES), pipeline.load)
    assert statuses(report) == ["ok"] * len(PHASE_NAMES)
    assert [i.staged for i in pipeline["code_generation"].seen] == [kept]
    others = [n for n in PHASE_NAMES if n != "code_generation"]
    assert all(i.staged is None for n in others for i in pipeline[n].seen)


def test_a_run_that_walked_its_cached_steps_resumes_from_the_first_that_must_run(tmp_path: Path):
    from builder.orchestration.runner import start
    from builder.pipeline.checkpoints import CheckpointStore

    pipeline, config = make_pipeline(), BuildConfig(root=str(tmp_path))
    run_build(tmp_path, pipeline, config=config)
    # Phase 5's digest and output change: it and what follows must run again.
    pipeline["neo4j_schema"].extra_digest = lambda inputs: "v2"  # type: ignore[method-assign]
    pipeline["neo4j_schema"].note = "v2"
    store = CheckpointStore(tmp_path / "checkpoints")
    run = start(
        make_source(),
        config,
        checkpoints_dir=store.root,
        phases=pipeline.load,
        index=store,
        current=len(PHASE_NAMES),
    )
    assert (
        run.held
        and not run.finished(len(PHASE_NAMES))
        and statuses(run.report) == ["cached"] * PHASE_NAMES.index("neo4j_schema")
    )
    copy = pickle.loads(pickle.dumps(run))  # its cached outputs are read from checkpoints
    report = copy.advance(len(PHASE_NAMES), pipeline.load)
    assert statuses(report) == split_at("neo4j_schema", "cached", "ok")
    rerun = PHASE_NAMES.index("neo4j_schema")
    assert pipeline.calls() == {**ALL_RAN, **{n: 2 for n in PHASE_NAMES[rerun:]}}
    last_name = f"{len(PHASE_NAMES)}-{PHASE_NAMES[-1]}.yaml"
    last = load_yaml((tmp_path / "checkpoints/demo" / last_name).read_text())
    assert last["output"]["steps"] == list(trail_steps())
