"""Every generated package installs with pip into a fresh virtual environment, and its README runs.

The packages are built from the project's skills into a temporary folder
(never the committed generated/), installed together into a new venv, and each
README's Python snippet is run from a folder outside the project with
``MINDRIAN_MODEL=scripted:PATH``, so no API key is needed. The fresh venv sees
the project's own installation (``mindrian`` and its dependencies) through a
``.pth`` file, the way a user's venv would after ``pip install mindrian``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from http_server import ROOT
from model_scripts import write_script

pytestmark = pytest.mark.slow  # mindrian serve / run processes

#: The Python block of a README's "Use" section.
_SNIPPET = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: The text a collaborative team's members and leader answer.
_SYNTHESIS = "Synthesis: go ahead, carefully."


@dataclass(frozen=True)
class Built:
    """Packages built from the skills, and a fresh venv holding all of them."""

    out: Path
    """Folder of the built packages."""
    python: Path
    """The fresh venv's interpreter."""
    specs: dict[str, dict[str, Any]]
    """spec.yaml of each package, by package folder name."""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    work = tmp_path_factory.mktemp("packages")
    out = work / "out"
    # Phase 7 installs what phase 6 staged (one transaction per build), into a scratch registry.
    builder = [sys.executable, "-m", "builder", "build", "--all"]
    builder += ["--out", str(out)]
    scratch = [
        "--checkpoints",
        str(work / "checkpoints"),
        "--registry",
        str(work / "registry.lbug"),
    ]
    _check([*builder, *scratch], cwd=ROOT)
    folders = sorted(p.parent for p in out.glob("*/pyproject.toml"))
    assert len(folders) == len(list((ROOT / "skills").glob("**/SKILL.md")))
    venv = work / "venv"
    _check([sys.executable, "-m", "venv", str(venv)], cwd=work)
    python = venv / "bin" / "python"
    _share_project_installation(python)
    _check([str(python), "-m", "pip", "install", "--quiet", *map(str, folders)], cwd=work)
    specs = {f.name: yaml.safe_load((f / "spec.yaml").read_text(encoding="utf-8")) for f in folders}
    yield Built(out, python, specs)


def test_each_package_imports_from_its_installed_copy(built: Built, tmp_path: Path) -> None:
    for name in built.specs:
        done = _check(
            [str(built.python), "-c", f"import {name}; print({name}.__file__)"], cwd=tmp_path
        )
        installed = Path(done.stdout.strip())
        assert installed.parent.name == name
        assert "site-packages" in installed.parts, installed


def test_each_installed_package_passes_its_own_tests(built: Built, tmp_path: Path) -> None:
    # The tests read what they expect of the agent from tests/contract.json: package data.
    tests = [f"{name}.tests" for name in sorted(built.specs)]
    pytest_run = [str(built.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs"]
    done = _check([*pytest_run, *tests], cwd=tmp_path)
    assert " passed" in done.stdout and "error" not in done.stdout, done.stdout


def test_every_readme_snippet_runs_with_the_scripted_model(built: Built, tmp_path: Path) -> None:
    answers = {spec["id"]: _answers(spec) for spec in built.specs.values()}
    script = write_script(tmp_path / "script.yaml", answers)
    for name, spec in built.specs.items():
        readme = (built.out / name / "README.md").read_text(encoding="utf-8")
        (snippet,) = _SNIPPET.findall(readme)
        steps = len(spec.get("steps") or ())
        done = subprocess.run(
            [str(built.python), "-c", snippet],
            cwd=tmp_path,
            input="my answer\n" * steps,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "MINDRIAN_MODEL": f"scripted:{script}"},
        )
        assert done.returncode == 0, f"{name}: {done.stderr}"
        for expected in _expected_output(spec):
            assert expected in done.stdout, f"{name}: {expected!r} not in {done.stdout!r}"


def _answers(spec: dict[str, Any]) -> list[Any]:
    """What the scripted model answers each README, by agent type."""
    kind, steps = spec["type"], spec.get("steps") or ()
    if kind == "operator":
        scores = {s["name"]: s["minimum"] for s in spec.get("scores") or ()}
        return [{"json": {"output": f"{spec['id']} answers", "scores": scores}}]
    if kind == "collaborative":
        # The named synthesiser gives no position of its own; it writes the structured synthesis.
        synthesizer = (spec.get("metadata") or {}).get("synthesizer")
        members = ["A position."] * (len(spec["sub_agents"]) - (1 if synthesizer else 0))
        delegate = {"name": "delegate_task_to_members", "arguments": {"task": "the task"}}
        return [{"tool_call": delegate}, *members, {"json": {"output": _SYNTHESIS}}]
    if kind == "role":
        return ["First reply.", "Second reply."]
    return [f"{s['name']} output" for s in steps]  # pipeline phases, guided steps


def _expected_output(spec: dict[str, Any]) -> list[str]:
    kind, steps = spec["type"], spec.get("steps") or ()
    if kind == "operator":
        return [f"{spec['id']} answers"]
    if kind == "collaborative":
        return [_SYNTHESIS]
    if kind == "role":
        return ["First reply.", "Second reply."]
    if kind == "pipeline":
        return [
            f"[{len(steps)}/{len(steps)}] {steps[-1]['name']} done",
            f"{steps[-1]['name']} output",
        ]
    return [f"{steps[0]['name']} output", f"{steps[-1]['name']} output"]


def _share_project_installation(python: Path) -> None:
    """Let the fresh venv import what the project's venv has installed (mindrian, agno, ...)."""
    done = _check(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=ROOT
    )
    ours = sysconfig.get_paths()["purelib"]
    # addsitedir, not a plain path line: the editable mindrian install is itself a .pth file.
    line = f"import site; site.addsitedir({ours!r})\n"
    (Path(done.stdout.strip()) / "mindrian-project.pth").write_text(line, encoding="utf-8")


def _check(command: list[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"
    return done
