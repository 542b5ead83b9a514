"""Every benchmark module imports: bench/ is outside mypy's packages, so a moved name would
otherwise only show when someone runs ``make routing-bench`` or ``make bench``."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("name", sorted(p.stem for p in BENCH.glob("*.py") if p.stem != "__init__"))
def test_the_benchmark_module_imports(name: str) -> None:
    importlib.import_module(f"bench.{name}")
