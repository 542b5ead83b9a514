"""The line that says a skill was built names its package folder, wherever phase 6 stands."""

from __future__ import annotations

from pathlib import Path

import pytest
from build_factories import make_project, skill_text

from builder.cli.listeners import print_outcome
from builder.orchestration.batch import BatchOptions
from builder.phases import PHASE_NAMES
from builder.pipeline.build_results import BuildReport, PhaseReport
from builder.pipeline.checkpoints import Checkpoint, CheckpointStore


def _built(tmp_path: Path, names: tuple[str, ...]) -> list[str]:
    options = BatchOptions(checkpoints_dir=tmp_path / "checkpoints", out_dir=tmp_path / "out")
    number = names.index("code_generation") + 1
    stored = Checkpoint(
        "code_generation", number, "0", "sha256:0", True, (), (), {"identifier": "demo_pkg"}
    )
    CheckpointStore(options.checkpoints_dir).write("demo", stored)
    phases = tuple(PhaseReport(n, name, "ok") for n, name in enumerate(names, 1))
    said: list[str] = []
    report = BuildReport("skills/demo/SKILL.md", "demo", phases)
    print_outcome(report, said.append, quiet=False, options=options)
    return said


def test_the_built_line_names_the_package(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert _built(tmp_path, PHASE_NAMES)[0].endswith("phase(s) ok -> out/demo_pkg/")


def test_a_phase_added_before_phase_6_moves_where_the_package_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = PHASE_NAMES.index("code_generation")
    names = (*PHASE_NAMES[:at], "prompt_budget", *PHASE_NAMES[at:])
    monkeypatch.setattr("builder.phases.PHASE_NAMES", names)
    monkeypatch.chdir(tmp_path)
    assert _built(tmp_path, names)[0].endswith("phase(s) ok -> out/demo_pkg/")


@pytest.mark.slow  # all seven real phases, then a no-op
def test_a_no_op_names_each_package_without_reading_its_checkpoints(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stamp that makes a no-op knows the package: a line per skill costs no checkpoint
    read (a no-op of 1,000 skills read 1,000 of them only to print these lines)."""
    project = make_project(tmp_path, {"demo": skill_text("demo-skill", triggers="[plan gaps]")})
    assert cli(["build", "--all"], project).code == 0
    reads: list[tuple[str, int]] = []
    real = CheckpointStore.read

    def counted(self: CheckpointStore, agent_id: str, number: int, *args: object) -> object:
        reads.append((agent_id, number))
        return real(self, agent_id, number, *args)

    monkeypatch.setattr(CheckpointStore, "read", counted)
    again = cli(["build", "--all"], project)
    assert again.code == 0, again.err
    assert "[7/7] registration … ok (cached)" in again.err  # a no-op
    assert "7 phase(s) ok -> generated/demo_skill/" in again.err
    assert reads == []
