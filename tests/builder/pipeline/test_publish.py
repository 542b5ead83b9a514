"""A build stopped after phase 6 installs the tested package in the output folder, unregistered."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from builder.pipeline.transaction import PackageTransaction, publish_ready
from mindrian.project import ProjectPaths


def _ready(paths: ProjectPaths, identifier: str, agent_id: str, text: str) -> PackageTransaction:
    txn = PackageTransaction(paths, identifier)
    workspace = txn.workspace()
    package = workspace / identifier
    package.mkdir()
    (package / "agent.py").write_text(text, encoding="utf-8")
    (package / "spec.yaml").write_text(yaml.safe_dump({"id": agent_id}), encoding="utf-8")
    txn.stage(package)
    workspace.rmdir()
    return txn


def test_publish_replaces_the_installed_package_and_empties_staging(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    _ready(paths, "pkg", "pkg", "old").publish()
    txn = _ready(paths, "pkg", "pkg", "new")
    txn.publish()
    assert (paths.generated / "pkg" / "agent.py").read_text(encoding="utf-8") == "new"
    assert not txn.ready.exists()
    assert list(paths.staging.iterdir()) == []
    assert not paths.registry_yaml.exists()  # unregistered: registry.yaml is phase 7's


def test_publish_ready_installs_only_the_agents_of_this_build(tmp_path: Path) -> None:
    paths = ProjectPaths(tmp_path)
    _ready(paths, "built", "built-agent", "x")
    stale = _ready(paths, "failed", "failed-agent", "y")
    assert publish_ready(paths, {"built-agent"}) == ("built",)
    assert (paths.generated / "built" / "agent.py").is_file()
    assert not (paths.generated / "failed").exists()
    assert stale.ready.is_dir()


@pytest.mark.slow
def test_until_code_generation_leaves_the_package_for_the_next_build_to_register(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from builder.cli.app import app

    root = Path(__file__).resolve().parents[3]
    out = tmp_path / "out"
    common = ["--out", str(out), "--checkpoints", str(tmp_path / "cp")]
    common += ["--registry", str(tmp_path / "reg.lbug"), "--quiet"]
    runner = CliRunner()
    skill = str(root / "skills" / "pws" / "SKILL.md")
    first = runner.invoke(app, ["build", skill, *common, "--until", "code_generation"])
    assert first.exit_code == 0, first.output
    assert (out / "pws_validation" / "agent.py").is_file()
    assert not (out / "registry.yaml").exists()
    second = runner.invoke(app, ["build", skill, *common])
    assert second.exit_code == 0, second.output
    assert "pws-validation" in (out / "registry.yaml").read_text(encoding="utf-8")
