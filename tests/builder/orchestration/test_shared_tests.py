"""``build --all`` tests every package it builds in one pytest session, with per-skill results."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from build_factories import make_project, skill_text, tree

import builder.phases.code_generation as code_generation
import builder.pipeline.package_tests as package_tests
from builder.codegen.render import AGENT_TEMPLATES
from builder.orchestration.batch import BatchOptions, Target, build_many, discover
from builder.phases import PHASE_NAMES, load_phase, phase_number
from builder.phases.code_generation import CodeGenerationPhase
from builder.pipeline.build_results import BuildReport
from builder.pipeline.config import BuildConfig
from builder.pipeline.results import CHECK_FAILED_CODE
from builder.pipeline.worker import WarmWorker, run_module
from builder.probe.runner import PROBE_MODULE

# Slow: real builds of three skills through phase 7, with their generated tests.
pytestmark = pytest.mark.slow

SKILLS = {name: skill_text(f"{name}-skill") for name in ("alpha", "beta", "gamma")}


def failing_for(tmp_path: Path, agent_id: str) -> Path:
    """Agent templates whose generated tests gain one that fails for ``agent_id`` only."""
    copy = tmp_path / "templates"
    shutil.copytree(AGENT_TEMPLATES, copy)
    with open(copy / "tests" / "test_agent.py.jinja", "a", encoding="utf-8") as handle:
        handle.write(
            "\n\ndef test_not_beta() -> None:\n"
            f"    assert {{{{ class_name }}}}.agent_id != {agent_id!r}\n"
        )
    return copy


class Spies:
    """Counts the shared sessions, the runs of one package alone, the packages rendered and the
    probes' children."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sessions: list[list[str]] = []
        self.alone: list[str] = []
        self.rendered: list[str] = []
        self.written: list[str] = []
        self.probed: list[tuple[str, ...]] = []
        session, alone = package_tests.run_session, code_generation.run_package_tests
        render, write = code_generation.render_package, code_generation.write_tree
        submit = WarmWorker.submit

        def render_package(spec: Any, *args: Any, **kwargs: Any) -> Any:
            self.rendered.append(spec.identifier)
            return render(spec, *args, **kwargs)

        def write_tree(files: Any, root: Path) -> None:
            self.written.append(root.name)
            write(files, root)

        def run_session(folder: Path, jobs: int, *args: Any) -> Any:
            self.sessions.append(sorted(p.name for p in folder.iterdir() if p.is_dir()))
            return session(folder, jobs, *args)

        def probe_child(worker: WarmWorker, module: str, args: Any, *rest: Any, **kw: Any) -> int:
            if module == PROBE_MODULE:
                self.probed.append(tuple(args))
            return submit(worker, module, args, *rest, **kw)

        def run_package_tests(
            folder: Path, identifier: str, timeout: float = 180.0, runner: Any = run_module
        ) -> Any:
            self.alone.append(identifier)
            return alone(folder, identifier, timeout, runner)

        monkeypatch.setattr(package_tests, "run_session", run_session)
        monkeypatch.setattr(code_generation, "run_package_tests", run_package_tests)
        monkeypatch.setattr(code_generation, "render_package", render_package)
        monkeypatch.setattr(code_generation, "write_tree", write_tree)
        monkeypatch.setattr(WarmWorker, "submit", probe_child)


def build(root: Path, paths: list[Path], templates: Path) -> tuple[BuildReport, ...]:
    def phases(name: str) -> Any:
        if name == "code_generation":
            return CodeGenerationPhase(templates=templates)
        return load_phase(name)

    return build_many(
        [Target(p, p.relative_to(root).as_posix()) for p in paths],
        BuildConfig(root=str(root)),
        BatchOptions(
            checkpoints_dir=root / ".mindrian" / "checkpoints", out_dir=root / "generated"
        ),
        phases=phases,
    )


def state(root: Path) -> dict[str, bytes]:
    """Checkpoints, packages and registry.yaml: everything a build leaves that CI compares.

    Build stamps are left out: they record the files' times, which differ between two builds.
    """
    checkpoints = tree(root / ".mindrian" / "checkpoints")
    return {
        **{f"checkpoints/{k}": v for k, v in checkpoints.items() if not k.startswith(".stamps/")},
        **{f"generated/{k}": v for k, v in tree(root / "generated").items()},
    }


def test_one_session_for_the_batch_and_each_skill_as_if_built_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "project").mkdir()
    root = make_project(tmp_path / "project", SKILLS)
    templates = failing_for(tmp_path, "beta-skill")
    paths = list(discover(root))
    spies = Spies(monkeypatch)

    together = build(root, paths, templates)
    assert spies.sessions == [["alpha_skill", "beta_skill", "gamma_skill"]]
    assert spies.alone == []  # every result came from the session
    assert spies.probed == []  # and every probe's, for the packages that passed
    # Each package rendered once: phase 6 takes up the files staged for the session.
    assert spies.rendered == ["alpha_skill", "beta_skill", "gamma_skill"]
    # And written once: phase 6 takes the copy the session tested.
    assert spies.written == ["alpha_skill", "beta_skill", "gamma_skill"]
    shared = state(root)
    assert list((root / ".mindrian" / "staging").iterdir()) == []  # the session folder is gone

    # Atomicity: beta's failing test fails beta alone; the others are installed and registered.
    alpha, beta, gamma = together
    assert alpha.problem is None and gamma.problem is None
    assert [p.status for p in alpha.phases] == ["ok"] * len(PHASE_NAMES)
    assert beta.problem is not None and beta.problem.code == CHECK_FAILED_CODE
    generation = phase_number("code_generation")
    assert [p.status for p in beta.phases] == ["ok"] * (generation - 1) + ["failed"]
    tests_pass = beta.phases[generation - 1].checks[1]
    assert tests_pass.reason.startswith("generated tests failed (1 failed, ")
    assert tests_pass.reason.endswith("; failing: beta_skill/tests/test_agent.py::test_not_beta")
    assert sorted(p.name for p in (root / "generated").iterdir()) == [
        "alpha_skill",
        "gamma_skill",
        "registry.yaml",
    ]

    # The same skills, each built in a batch of its own: byte for byte the same state.
    shutil.rmtree(root / ".mindrian")
    shutil.rmtree(root / "generated")
    spies.alone.clear()
    alone = [build(root, [path], templates)[0] for path in paths]
    assert spies.alone == ["alpha_skill", "beta_skill", "gamma_skill"]
    assert spies.probed == [("alpha_skill",), ("gamma_skill",)]
    assert len(spies.sessions) == 1
    assert state(root) == shared
    assert [(r.path, r.agent_id, r.problem) for r in alone] == [
        (r.path, r.agent_id, r.problem) for r in together
    ]
    assert [[(p.status, p.checks) for p in r.phases] for r in alone] == [
        [(p.status, p.checks) for p in r.phases] for r in together
    ]


def test_a_skill_whose_build_crashes_before_the_session_fails_alone(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    root = make_project(tmp_path / "project", SKILLS)

    def phases(name: str) -> Any:
        phase = load_phase(name)
        if name != "neo4j_schema":
            return phase

        class Crashing:
            def __getattr__(self, attribute: str) -> Any:
                return getattr(phase, attribute)

            def with_services(self, services: Any) -> Any:
                return self  # the crash stays whatever the batch's services

            def run(self, inputs: Any) -> Any:
                if "beta" in inputs.source.path:
                    raise RuntimeError("a bug in phase 5")
                return phase.run(inputs)

        return Crashing()

    reports = build_many(
        [Target(p, p.relative_to(root).as_posix()) for p in discover(root)],
        BuildConfig(root=str(root)),
        BatchOptions(
            checkpoints_dir=root / ".mindrian" / "checkpoints", out_dir=root / "generated"
        ),
        phases=phases,
    )
    assert [r.problem.code if r.problem else None for r in reports] == [None, "I001", None]
    assert sorted(p.name for p in (root / "generated").iterdir()) == [
        "alpha_skill",
        "gamma_skill",
        "registry.yaml",
    ]
