"""Environment faults and bad command lines are clean errors, never exit status 3.

A file system that refuses one skill's files (disk full, read-only, a name too
long, a file where a folder should be) fails that skill with F001, the errno and
the path; the other skills of the batch still build, the exit status is 1 and
``--json`` is complete. A usage error with ``--json`` prints a JSON error object.
Each fault is planted in-process where the real one needs privileges a test
does not have (the suite runs as root, so ``chmod`` cannot make a folder read-only).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from reliability_cli import Mindrian, Run

SKILL = """\
---
name: {name}
description: Checks {name} plans for gaps.
metadata:
  mindrian:
    type: operator
    model: anthropic:claude-sonnet-4-5
    triggers: [{name}]
---
# Methodology

Ask what is missing.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.mindrian]\n')
    for name in ("alpha", "beta"):
        (tmp_path / "skills" / name).mkdir(parents=True)
        (tmp_path / "skills" / name / "SKILL.md").write_text(SKILL.format(name=name))
    return tmp_path


def refusing(real: Callable[..., Any], code: int, when: Callable[[Path], bool]) -> Any:
    """``real``, except that it raises OSError ``code`` for a path ``when`` accepts."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        path = next(Path(a) for a in args if isinstance(a, str | os.PathLike))
        if when(path):
            raise OSError(code, os.strerror(code), str(path))
        return real(*args, **kwargs)

    return refuse


def alphas(path: Path) -> bool:
    return "alpha" in path.parts


def assert_only_alpha_failed(run: Run, reason: str) -> dict[str, Any]:
    assert run.code == 1, run.err
    report = json.loads(run.out)
    assert report["exit_code"] == 1 and report["ok"] is False
    by_path = {b["path"]: b for b in report["builds"]}
    assert by_path["skills/beta/SKILL.md"]["ok"] is True
    assert len(by_path["skills/beta/SKILL.md"]["phases"]) == 7
    error = by_path["skills/alpha/SKILL.md"]["error"]
    assert error["code"] == "F001" and reason in error["message"], error
    assert error["location"]["path"] == "skills/alpha/SKILL.md"
    assert f"skills/alpha/SKILL.md: error[F001]: {reason}" in run.err
    assert "internal error" not in run.err and "Traceback" not in run.err
    return error


BUILD = ["build", "--all", "--json", "--jobs", "1"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (errno.ENOSPC, "No space left on device (ENOSPC)"),
        (errno.EROFS, "Read-only file system (EROFS)"),
        (errno.ENAMETOOLONG, "File name too long (ENAMETOOLONG)"),
    ],
    ids=["disk-full", "read-only", "name-too-long"],
)
def test_a_file_system_refusing_one_package_fails_only_that_skill(
    project: Path,
    mindrian: Mindrian,
    monkeypatch: pytest.MonkeyPatch,
    code: int,
    reason: str,
) -> None:
    from builder.phases import code_generation

    monkeypatch.setattr(
        code_generation, "write_tree", refusing(code_generation.write_tree, code, alphas)
    )
    error = assert_only_alpha_failed(mindrian(project, BUILD), reason)
    assert "alpha" in error["message"]  # the path the file system refused
    assert (project / "generated" / "beta" / "agent.py").is_file()
    assert not (project / "generated" / "alpha").exists()
    registry = (project / "generated" / "registry.yaml").read_text(encoding="utf-8")
    assert "id: beta" in registry and "id: alpha" not in registry


@pytest.mark.slow
def test_a_checkpoint_folder_refusing_writes_fails_only_that_skill(
    project: Path, mindrian: Mindrian, monkeypatch: pytest.MonkeyPatch
) -> None:
    from builder.pipeline import checkpoints

    for name in ("atomic_write_text", "atomic_write_bytes"):  # the index, the checkpoints
        real = getattr(checkpoints, name)
        monkeypatch.setattr(checkpoints, name, refusing(real, errno.ENOSPC, alphas))
    assert_only_alpha_failed(mindrian(project, BUILD), "No space left on device (ENOSPC)")


@pytest.mark.slow
def test_a_file_where_a_folder_should_be_fails_only_that_skill(
    project: Path, mindrian: Mindrian
) -> None:
    checkpoints = project / ".mindrian" / "checkpoints"
    checkpoints.mkdir(parents=True)
    (checkpoints / "alpha").write_text("not a folder")
    error = assert_only_alpha_failed(mindrian(project, BUILD), "File exists (EEXIST)")
    assert error["message"].endswith(str(checkpoints / "alpha"))


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["build", "--bogus", "--json"], "U001", "No such option: --bogus"),
        (["build", "--all", "--json", "--jobs", "many"], "U001", "'--jobs'"),
        (["build", "--all", "--shard", "5/4", "--json"], "U017", "--shard takes I/N"),
        (["build", "--json"], "U005", "give at least one SKILL.md path"),
        (["build", "--all", "--from", "nine", "--json"], "U002", "unknown phase 'nine'"),
        (["register", "--json", "--bogus"], "U001", "No such option: --bogus"),
        (["select", "--json"], "U005", "give a sentence"),
        (["explain", "--json"], "U001", "Missing argument 'ID'"),
    ],
)
def test_a_usage_error_with_json_prints_a_json_error_object(
    project: Path,
    mindrian: Mindrian,
    args: list[str],
    code: str,
    message: str,
) -> None:
    run = mindrian(project, args)
    assert run.code == 2
    report = json.loads(run.out)
    assert report["ok"] is False and report["exit_code"] == 2
    assert report["error"]["code"] == code and message in report["error"]["message"]


def test_a_usage_error_without_json_keeps_stdout_empty(project: Path, mindrian: Mindrian) -> None:
    run = mindrian(project, ["build", "--bogus", "--", "--json"])
    assert (run.code, run.out) == (2, "")
    assert "No such option: --bogus" in run.err


@pytest.mark.slow
def test_out_on_another_file_system_builds(
    project: Path, tmp_path: Path, mindrian: Mindrian, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repro: ``--out`` on another file system failed with EXDEV from ``os.rename`` (exit 3).

    The other file system is simulated: a rename between ``out`` and anywhere else
    fails with EXDEV, as the kernel's would.
    """
    out = tmp_path / "mounted" / "out"
    inside: list[str] = []

    def device_of(path: Any) -> bool:
        return Path(os.path.abspath(os.fsdecode(path))).is_relative_to(out)

    def across(real: Callable[..., Any]) -> Callable[..., Any]:
        def rename(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
            if device_of(src) != device_of(dst):
                raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), src, None, dst)
            if device_of(src):
                inside.append(os.fsdecode(dst))
            return real(src, dst, *args, **kwargs)

        return rename

    monkeypatch.setattr(os, "rename", across(os.rename))
    monkeypatch.setattr(os, "replace", across(os.replace))
    run = mindrian(project, ["build", "skills/alpha/SKILL.md", "--out", str(out), "--json"])
    assert run.code == 0, run.err
    assert json.loads(run.out)["ok"] is True
    assert (out / "alpha" / "agent.py").is_file()
    assert "id: alpha" in (out / "registry.yaml").read_text(encoding="utf-8")
    assert str(out / "alpha") in inside  # the package was moved into place on out's side


@pytest.mark.slow
def test_an_unparsable_registry_yaml_without_a_database_is_a_located_error(
    project: Path, mindrian: Mindrian
) -> None:
    generated = project / "generated"
    generated.mkdir()
    (generated / "registry.yaml").write_text("frameworks: [\n  - {id: ]\n", encoding="utf-8")
    run = mindrian(project, ["build", "skills/alpha/SKILL.md", "--json"])
    assert run.code == 1, run.err
    (build,) = json.loads(run.out)["builds"]
    assert build["error"]["code"].startswith("R") and "registry" in build["error"]["message"]
    assert "internal error" not in run.err and "Traceback" not in run.err
    assert (generated / "registry.yaml").read_text(encoding="utf-8").startswith("frameworks: [")
    assert not (generated / "alpha").exists()
