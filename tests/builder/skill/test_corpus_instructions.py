"""No body text is lost: every non-empty body line of every corpus skill reaches the
instructions."""

from __future__ import annotations

from pathlib import Path

import pytest
from phase_factories import analyse, phase_input

from builder.phases.architecture import PHASE as ARCH
from builder.pipeline.errors import CompilerError

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus"
SKILLS = sorted(CORPUS.rglob("SKILL.md")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not SKILLS, reason=f"corpus not found at {CORPUS}")
@pytest.mark.parametrize("path", SKILLS, ids=[str(p.parent.relative_to(CORPUS)) for p in SKILLS])
def test_every_body_line_reaches_instructions(path: Path) -> None:
    try:
        definition = analyse(str(path.relative_to(CORPUS)), root=str(CORPUS))
    except CompilerError as exc:
        pytest.fail(f"phase 1 rejected a real skill: {exc.render()}")
    spec = ARCH.run(phase_input({"skill_analysis": definition})).output
    rendered = spec.instructions.render_markdown()
    elements = "\n".join(r.text for r in definition.references)
    lost = [
        line
        for line in definition.body.splitlines()
        if line.strip() and line.strip() not in rendered and line.strip() not in elements
    ]
    assert not lost, f"{len(lost)} body lines lost, first: {lost[0]!r}"
    # Blocks are verbatim slices: together they are the body, minus whitespace between them.
    assert "\n".join(b.text for b in spec.instructions.blocks).split() == definition.body.split()


def test_corpus_is_the_expected_size() -> None:
    if not SKILLS:
        pytest.skip(f"corpus not found at {CORPUS}")
    assert len(SKILLS) == 49
