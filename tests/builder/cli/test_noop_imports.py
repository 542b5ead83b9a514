"""A no-op ``mindrian build --all`` pays only for what it uses: stamps, not the phases."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from build_factories import make_project, skill_text

from builder.phases import PHASE_NAMES

# Slow: a cold build of a skill through all seven phases, in a child process.
pytestmark = pytest.mark.slow

#: Modules a no-op must not import: the phases and what only running them needs, the
#: registry's (``build --all`` retires removed skills through phase 7 only when some are gone),
#: and the warm worker's and its probes' (a no-op starts no child).
_HEAVY = (
    *(f"builder.phases.{name}" for name in PHASE_NAMES),
    "builder.skill.chain",
    "builder.skill.model",
    "mindrian.graph",
    "neo4j",
    "agno",
    "asyncio",
    "black",
    "builder.pipeline.worker",
    "builder.probe.runner",
    "ctypes",
    "jinja2",
    "jsonschema",
    "ladybug",
    "pydantic",
    "pytest",
    # A no-op starts no process pool (a forked copy checks half the stamps of a large batch).
    "multiprocessing",
    "concurrent.futures.process",
)

#: Runs the CLI, then prints the modules it imported (a fresh interpreter, so nothing else
#: imported them).
_PROBE = (
    "import json, sys\n"
    "from builder.cli.app import main\n"
    "status = main(['build', '--all', '--quiet', '--json'])\n"
    "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    "raise SystemExit(status)\n"
)


def _build(root: Path, code: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done


def test_a_no_op_build_imports_no_phase(tmp_path: Path) -> None:
    make_project(tmp_path, {"alpha": skill_text("alpha-skill"), "beta": skill_text("beta-skill")})
    _build(tmp_path, "from builder.cli.app import main; raise SystemExit(main(['build', '--all']))")
    done = _build(tmp_path, _PROBE)
    statuses = {p["status"] for b in json.loads(done.stdout)["builds"] for p in b["phases"]}
    assert statuses == {"cached"}
    imported = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert imported.isdisjoint(_HEAVY), sorted(imported.intersection(_HEAVY))
    assert {"builder.phases.keys", "builder.orchestration.stamping"} <= imported
