"""Skills whose lines did not reach the prompt (issue 27, item 1), by shape, through phase 7.

Shapes of public skills that phase 6 refused (their package tests failed), each a synthetic
fixture under ``tests/builder/fixtures/skills/faithful/``:

* ``dollar-text``, ``dollar-team``: a body with ``$$`` (SQL dollar quoting, LaTeX, price
  tiers ``$$$–$$$$``), ``${price}`` or ``{task}``. Cause: Agno ran every system and user
  message through ``string.Template`` (``resolve_in_context``), so ``$$`` reached the model as
  ``$``; the runtime now builds its agents and teams with ``resolve_in_context=False``.
* ``title-description``: a description equal to the skill's title (``description: Proposal
  Writer`` over ``# Proposal Writer``). Cause: the package test counted every occurrence of
  the description in the prompt as a repetition of it, including the skill's own lines that
  hold the same words; it now allows those, and still fails when the description is added twice.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from build_factories import make_project

# Slow: phase 6 runs each generated package's tests in a pytest subprocess.
pytestmark = pytest.mark.slow

FAITHFUL = Path(__file__).resolve().parents[1] / "fixtures" / "skills" / "faithful"


@pytest.mark.parametrize("name", ["dollar-text", "dollar-team", "title-description"])
def test_the_shape_builds_through_phase_7(cli, tmp_path: Path, name: str) -> None:
    project = make_project(tmp_path, {})
    shutil.copytree(FAITHFUL / name, project / "skills" / name)
    result = cli(["build", f"skills/{name}/SKILL.md", "--jobs", "1", "--quiet"], project)
    assert result.code == 0, result.err
