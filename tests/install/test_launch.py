"""The ``mindrian`` script with the runtime only (``pip install mindrian``, no ``build`` extra).

Each case runs the script's entry point, as pyproject.toml declares it, in a fresh interpreter
where the compiler-only modules cannot be imported, which is what such an install has (the
runtime pulls in Typer and ``packaging``, nothing else of the extra): the command line answers
``--version``, ``--help`` and the runtime's commands, and each compiling command refuses with
one U040 line naming itself and what to install.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from builder import __version__

pytestmark = pytest.mark.slow  # a fresh interpreter per case

ROOT = Path(__file__).resolve().parents[2]
#: What ``pip install mindrian`` leaves out of the ``build`` extra.
_ABSENT = ("jinja2", "ruamel", "black", "copier")
#: ``None`` in sys.modules makes both ``import`` and ``importlib.util.find_spec`` see no module.
_PROBE = (
    "import importlib, sys\n"
    "sys.modules.update(dict.fromkeys({absent!r}))\n"
    "module, _, function = {entry!r}.partition(':')\n"
    "raise SystemExit(getattr(importlib.import_module(module), function)())\n"
)
_REFUSAL = (
    "error[U040]: mindrian {command} needs the compiler's dependencies (missing: "
    "jinja2, ruamel, black, copier); install them with: pip install 'mindrian[build]'\n"
)


def _mindrian(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``mindrian ARGS`` through the declared console script, without the compiler's modules."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    entry = pyproject["project"]["scripts"]["mindrian"]
    code = _PROBE.format(absent=_ABSENT, entry=entry)
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "plugins"\n', encoding="utf-8")
    skill = tmp_path / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: demo\ndescription: A demo.\n---\n# Demo\n", encoding="utf-8")
    return tmp_path


def test_version_needs_only_the_runtime(project: Path) -> None:
    done = _mindrian(["--version"], project)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"mindrian {__version__}\n", "")


@pytest.mark.parametrize(
    "args", [["--help"], ["select", "--help"], ["run", "--help"], ["build", "--help"]]
)
def test_help_needs_only_the_runtime(project: Path, args: list[str]) -> None:
    done = _mindrian(args, project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Usage: mindrian {' '.join(args[:-1])}".rstrip() + " ")


def test_a_runtime_command_runs(project: Path) -> None:
    done = _mindrian(["init"], project)
    assert done.returncode == 0, done.stderr
    assert "[tool.mindrian]" in (project / "pyproject.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args",
    [
        ["build"],
        ["build", "--all"],
        ["check"],
        ["validate", "skills/demo/SKILL.md"],
        ["fmt", "--check", "skills"],
        ["register", "--all"],
        ["new", "pricing-check", "--type", "operator"],
    ],
)
def test_a_compiling_command_names_the_extra(project: Path, args: list[str]) -> None:
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    done = _mindrian(args, project)
    assert (done.returncode, done.stderr) == (2, _REFUSAL.format(command=args[0]))
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before


def test_the_refusal_is_an_annotation_for_github(project: Path) -> None:
    done = _mindrian(["check", "--format", "github"], project)
    assert done.returncode == 2
    assert done.stdout.startswith("::error title=U040::mindrian check needs the compiler's")
