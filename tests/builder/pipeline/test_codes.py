"""The error-code registry: every code builder/ reports is registered, once, and none is stale."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from builder.pipeline.codes import CODES, ErrorCode, registry

BUILDER = Path(__file__).resolve().parents[3] / "builder"
#: The runtime's coded exceptions and warnings (GraphError, RoutingBodyWarning) use registered
#: codes too, which the command line prints.
RUNTIME = BUILDER.parent / "mindrian"
REGISTRY_FILE = BUILDER / "pipeline" / "codes.py"
#: A string literal that is exactly an error code: ``"S204"``.
_CODE_LITERAL = re.compile(r"""[rbuRBU]?(["'])([A-Z]\d{3})\1""")


def _codes_used(*folders: Path) -> Iterator[tuple[str, str]]:
    """(code, file:line) of every code literal in ``folders`` (default builder/) outside the
    registry itself."""
    for path in sorted(p for folder in folders or (BUILDER,) for p in folder.rglob("*.py")):
        if path == REGISTRY_FILE:
            continue
        text = path.read_text(encoding="utf-8")
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            match = _CODE_LITERAL.fullmatch(token.string)
            if token.type == tokenize.STRING and match:
                yield match.group(2), f"{path.relative_to(BUILDER.parent)}:{token.start[0]}"


def test_every_code_used_is_registered() -> None:
    missing = sorted({f"{code} ({where})" for code, where in _codes_used() if code not in CODES})
    assert not missing, f"codes used but not in builder/pipeline/codes.py: {missing}"


def test_every_registered_code_is_used() -> None:
    used = {code for code, _ in _codes_used(BUILDER, RUNTIME)}
    assert sorted(set(CODES) - used) == []


def test_codes_are_well_formed_and_described() -> None:
    for code, entry in CODES.items():
        assert entry.code == code
        assert re.fullmatch(r"[A-Z]\d{3}", code)
        assert entry.stage and entry.meaning


def test_a_code_cannot_be_registered_twice() -> None:
    with pytest.raises(ValueError, match="S204 is registered twice"):
        registry(ErrorCode("S204", "skill_analysis", "a"), ErrorCode("S204", "usage", "b"))


def test_the_scan_finds_codes_in_every_form_they_are_written() -> None:
    # A keyword argument, a positional argument, a constant and a class default all count.
    found = {code for code, _ in _codes_used()}
    assert {"U008", "S204", "P003", "E000"} <= found
