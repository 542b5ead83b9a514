"""A skill's custom tools are imported by a child process, never by the builder.

Repro of the review: phase 4 ``import_module``d any ``custom_tools[].function``, so
``this`` printed the Zen of Python into ``--json`` and ``builder.__main__.main``
re-ran the command line inside the build (which then exited 0).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from builder.mcp.describe import describe_tools
from builder.orchestration.runner import build_source
from builder.phases import load_phase
from builder.phases.tool_assembly import ToolAssemblyPhase
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import SkillSource
from builder.skill.source import source_digest

REPO = Path(__file__).resolve().parents[2]

SKILL = """\
---
name: loud
description: Says things louder when asked to.
metadata:
  mindrian:
    type: operator
    model: anthropic:claude-sonnet-4-5
    triggers: [shout]
    tools:
      custom_tools:
        - name: shout
          function: {module}.shout
---
# Methodology

Shout the text.
"""
#: Line of the tool's entry (``- name: shout``) in SKILL above, where phase-4 errors point.
TOOL_LINE = 11

SHOUT = '''
def shout(text: str) -> str:
    """Say it louder.

    Args:
        text: What to say.
    """
    return text.upper()
'''


def project_with_tool(root: Path, module: str, prelude: str) -> Path:
    """A project whose skill ``loud`` names ``module.shout``; ``prelude`` runs at import."""
    (root / "skills" / "loud").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.mindrian]\n')
    (root / "skills" / "loud" / "SKILL.md").write_text(SKILL.format(module=module))
    (root / f"{module}.py").write_text(textwrap.dedent(prelude) + SHOUT)
    return root


def mindrian(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # ``python -m`` puts the project folder on sys.path, so the tool module is importable.
    return subprocess.run(
        [sys.executable, "-m", "builder", *args],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=600,
    )


def only_error(report: dict[str, object]) -> dict[str, object]:
    (build,) = report["builds"]  # type: ignore[misc]
    error = build["error"]
    assert isinstance(error, dict)
    return error


@pytest.mark.slow
def test_a_tool_module_printing_at_import_keeps_json_stdout_valid(tmp_path: Path) -> None:
    project = project_with_tool(
        tmp_path,
        "noisy_tools",
        """
        import os
        import this  # prints the Zen of Python
        print("NOISE ON SYS.STDOUT")
        os.write(1, b"NOISE ON FD 1\\n")
        """,
    )
    done = mindrian(project, "build", "skills/loud/SKILL.md", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True and report["builds"][0]["agent_id"] == "loud"
    for noise in ("Zen of Python", "NOISE ON"):
        assert noise not in done.stdout and noise not in done.stderr
    spec = (project / "generated" / "loud" / "spec.yaml").read_text(encoding="utf-8")
    assert "Say it louder." in spec


def test_a_tool_module_calling_the_builder_cli_does_not_rerun_it(tmp_path: Path) -> None:
    project = project_with_tool(
        tmp_path,
        "reentrant_tools",
        """
        import builder.__main__
        builder.__main__.main()
        """,
    )
    done = mindrian(project, "build", "skills/loud/SKILL.md", "--json", "--until", "tool_assembly")
    assert done.returncode == 1, done.stderr
    error = only_error(json.loads(done.stdout))
    assert error["code"] == "T005"
    assert "exited during import" in str(error["message"])
    assert error["location"] == {"path": "skills/loud/SKILL.md", "line": TOOL_LINE, "column": 0}
    # The nested command line would have printed its usage; nothing of it reaches the builder.
    assert "Usage" not in done.stdout + done.stderr and "Traceback" not in done.stderr


def test_a_tool_module_raising_at_import_is_a_located_error(tmp_path: Path) -> None:
    project = project_with_tool(tmp_path, "raising_tools", "raise RuntimeError('no database')\n")
    done = mindrian(project, "build", "skills/loud/SKILL.md", "--until", "tool_assembly")
    assert done.returncode == 1
    assert (
        f"skills/loud/SKILL.md:{TOOL_LINE}: error[T005]: custom tool 'shout': cannot import "
        "raising_tools.shout: RuntimeError: no database"
    ) in done.stderr
    assert "Traceback" not in done.stderr


def build_until_phase_four(project: Path, phase: ToolAssemblyPhase | None = None):  # type: ignore[no-untyped-def]
    raw = (project / "skills" / "loud" / "SKILL.md").read_bytes()
    source = SkillSource("skills/loud/SKILL.md", raw, (), source_digest(raw, ()))
    return build_source(
        source,
        BuildConfig(root=str(project)),
        checkpoints_dir=project / "checkpoints",
        until_phase="tool_assembly",
        phases=lambda name: phase if phase and name == "tool_assembly" else load_phase(name),
    )


def test_the_builder_process_never_imports_the_tool_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    witness = tmp_path / "imported-by"
    project = project_with_tool(
        tmp_path,
        "witnessed_tools",
        f"""
        import os
        open({str(witness)!r}, "w").write(str(os.getpid()))
        """,
    )
    monkeypatch.syspath_prepend(str(project))
    report = build_until_phase_four(project)
    assert report.problem is None, report.problem
    checkpoint = yaml.safe_load(
        (project / "checkpoints" / "loud" / "4-tool_assembly.yaml").read_text(encoding="utf-8")
    )
    (tool,) = checkpoint["output"]["tools"]["custom_tools"]
    assert tool["definition"]["description"] == "Say it louder."
    assert tool["definition"]["parameters"]["properties"]["text"]["description"] == "What to say."
    # The module did run, in another process, and this one never loaded it.
    assert int(witness.read_text()) != os.getpid()
    assert "witnessed_tools" not in sys.modules


@pytest.mark.parametrize(
    ("prelude", "timeout", "reason"),
    [
        ("import time\ntime.sleep(600)\n", 2, "took longer than 2 s"),
        # Time enough for a loaded machine to start the child and import the module: ending it
        # at 2 s would then report a timeout instead of its exit.
        ("import os\nos._exit(7)\n", 120, "exited with status 7"),
    ],
    ids=["hangs", "kills-its-process"],
)
def test_a_tool_module_that_hangs_or_dies_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prelude: str, timeout: float, reason: str
) -> None:
    project = project_with_tool(tmp_path, "stuck_tools", prelude)
    monkeypatch.syspath_prepend(str(project))
    phase = ToolAssemblyPhase(
        describer=lambda requests, root: describe_tools(requests, cwd=root, timeout=timeout)
    )
    started = time.monotonic()
    report = build_until_phase_four(project, phase)
    assert time.monotonic() - started < 180  # a bound on a hang
    problem = report.problem
    assert problem is not None and problem.exit_code == 1 and problem.code == "T011"
    assert problem.location is not None and problem.location.line == TOOL_LINE
    assert reason in problem.message and "'shout'" in problem.message


@pytest.mark.slow
def test_editing_a_tool_module_describes_its_tools_again(tmp_path: Path) -> None:
    project = project_with_tool(tmp_path, "louder", "")
    build = ("build", "skills/loud/SKILL.md", "--until", "tool_assembly", "--json")

    def phase_4(done: subprocess.CompletedProcess[str]) -> str:
        (report,) = json.loads(done.stdout)["builds"]
        return str(report["phases"][3]["status"])

    assert phase_4(mindrian(project, *build)) == "ok"
    assert phase_4(mindrian(project, *build)) == "cached"
    module = project / "louder.py"
    module.write_text(module.read_text().replace("Say it louder.", "Say it much louder."))
    assert phase_4(mindrian(project, *build)) == "ok"
    stored = next((project / ".mindrian" / "checkpoints").glob("*/4-tool_assembly.yaml"))
    assert "Say it much louder." in stored.read_text()
