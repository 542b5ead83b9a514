"""``make mutation`` keeps running: its list follows the code, and one skill's run scores."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.mutation import MUTATIONS, Mutation, main

ROOT = Path(__file__).resolve().parents[2]


def _file(mutation: Mutation) -> Path:
    if mutation.target.startswith("runtime:"):
        return ROOT / "mindrian" / mutation.target.removeprefix("runtime:")
    return ROOT / "generated" / mutation.target


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.what)
def test_every_mutation_still_applies(mutation: Mutation) -> None:
    # The bench exits 1 on a line it cannot find; this says which, without building.
    assert mutation.old in _file(mutation).read_text(encoding="utf-8")


@pytest.mark.slow
def test_one_skill_builds_and_every_mutation_of_its_package_is_caught(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["--skill", "skills/pws"])
    out = capsys.readouterr().out
    assert status == 0, out
    rows = [line for line in out.splitlines() if re.match(r"\s*\d+\s", line)]
    assert rows and all("pws_validation/" in row and "caught" in row for row in rows), out
    assert f"caught {len(rows)} of {len(rows)} mutations (100 %)" in out
