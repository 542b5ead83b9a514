"""A rebuild puts back an installed package that was deleted or edited, build state kept.

Phase 6 stages such a package again; installing it is phase 7's job, so phase 7
must not count as cached while that package waits in staging. Real phases 1-7
(generated tests skipped, a passing probe, a scratch embedded registry), built
one skill at a time (``mindrian build skills/x/SKILL.md``) and all together
(``build --all``).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from build_factories import make_project, skill_text, tree

from builder.orchestration.batch import BatchOptions, Target, build_many, discover
from builder.orchestration.check import check
from builder.phases import load_phase, phase_number
from builder.phases.code_generation import skip_generated_tests
from builder.phases.outputs import AnyPhase
from builder.phases.registration import RegistrationPhase
from builder.pipeline.build_results import BuildReport
from builder.pipeline.config import BuildConfig
from builder.pipeline.services import Services
from builder.probe.runner import ProbeResult
from mindrian.project import ProjectPaths

# Slow: whole builds, phases 1-7.
pytestmark = pytest.mark.slow


def _passing_probe(out_dir: Path, identifier: str) -> ProbeResult:
    return ProbeResult(True, "a test's probe")


class Project:
    """A two-skill project built with the real phases."""

    def __init__(self, root: Path) -> None:
        make_project(root, {"alpha": skill_text("alpha-skill"), "beta": skill_text("beta-skill")})
        self.root = root
        self.config = BuildConfig(root=str(root))
        self.generated = root / "generated"
        self.options = BatchOptions(
            checkpoints_dir=root / ".mindrian" / "checkpoints", out_dir=self.generated
        )
        self.registration = RegistrationPhase(root / "registry.lbug", env={})
        # The test's doubles: generated tests not run, a probe that passes.
        self.services = Services(package_tests=skip_generated_tests, probe=_passing_probe)

    def load(self, name: str) -> AnyPhase:
        return self.registration if name == "registration" else load_phase(name)

    def build(self, only: str | None = None) -> tuple[BuildReport, ...]:
        """Every skill (``build --all``), or the one in folder ``only``."""
        targets = [
            Target(p, p.relative_to(self.root).as_posix())
            for p in discover(self.root)
            if only is None or p.parent.name == only
        ]
        reports = build_many(
            targets, self.config, self.options, phases=self.load, services=self.services
        )
        assert all(r.problem is None for r in reports), [r.problem for r in reports]
        return reports

    def package(self, name: str) -> Path:
        return self.generated / f"{name}_skill"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / "project").mkdir()
    built = Project(tmp_path / "project")
    built.build()
    return built


def _delete(package: Path) -> None:
    shutil.rmtree(package)


def _edit(package: Path) -> None:
    spec = package / "spec.yaml"
    spec.write_bytes(spec.read_bytes() + b"# edited by hand\n")


@pytest.mark.parametrize("damage", [_delete, _edit], ids=["deleted", "edited"])
@pytest.mark.parametrize("only", ["alpha", None], ids=["one-skill", "all"])
def test_a_rebuild_restores_the_installed_package(
    project: Project, damage: Callable[[Path], None], only: str | None
) -> None:
    fresh = tree(project.generated)
    damage(project.package("alpha"))

    (alpha, *_) = project.build(only)

    # Staged by phase 6, then installed by phase 7.
    assert [p.status for p in alpha.phases][phase_number("code_generation") - 1 :] == ["ok", "ok"]
    assert tree(project.generated) == fresh
    assert not list(ProjectPaths(project.root).staging.glob("*.ready"))
    targets = [Target(p, p.relative_to(project.root).as_posix()) for p in discover(project.root)]
    result = check(project.root, targets, project.config, project.generated, phases=project.load)
    assert result.clean, result.diff


def test_a_restored_package_is_a_no_op_again(project: Project) -> None:
    _delete(project.package("alpha"))
    project.build()

    reports = project.build()

    assert {p.status for r in reports for p in r.phases} == {"cached"}
