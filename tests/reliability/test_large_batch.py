"""A cold ``build --all`` of a hundred skills synthesized from the shared corpus (what
``make bench-scale`` builds): every skill builds, and the no-op after it runs nothing.

The project's other batch tests use a handful of skills, too few for registration groups,
phase 6 in the pool and shared sessions to overlap much; a race between them (one thread's
recovery deleting what another's committed group was deleting) failed 3 of 100 skills here
and none of theirs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench.common import CORPUS, mindrian_command
from bench.synth import synthesize

pytestmark = pytest.mark.slow


def _build(project: Path) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run(
        [*mindrian_command(), "build", "--all", "--json", "--quiet", "--jobs", "2"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=1800,  # a bound on a hang, not a speed
        check=False,
    )
    return done.returncode, json.loads(done.stdout), done.stderr


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is beside the checkout in CI")
def test_a_cold_batch_of_a_hundred_builds_every_skill_and_the_no_op_after_it_none(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    synthesize(project, 100)

    status, report, errors = _build(project)
    failed = [(b["path"], b["error"]) for b in report["builds"] if not b["ok"]]
    assert (status, failed) == (0, []), errors[-3000:]
    assert len(report["builds"]) == 100
    assert {len(b["phases"]) for b in report["builds"]} == {7}

    status, again, errors = _build(project)
    assert status == 0, errors[-3000:]
    ran = [b["path"] for b in again["builds"] if any(p["status"] != "cached" for p in b["phases"])]
    assert ran == []
