"""The gates stay shut: mypy's strictness only grows, the runtime ships its type hints, the
property tests run without deadlines (derandomised under CI), and builder/pipeline imports
nothing above it."""

from __future__ import annotations

import ast
import os
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT: Mapping[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))

#: Modules of builder/ and mindrian/ allowed to be less than strict, with the reason. Remove an
#: entry once its module passes ``mypy --strict``; never add one (fix the types instead).
RELAXED_MODULES: Mapping[str, str] = {}


def _own(pattern: str) -> bool:
    return pattern.split(".")[0] in ("builder", "mindrian")


def test_mypy_is_strict_over_both_packages() -> None:
    mypy = PYPROJECT["tool"]["mypy"]
    assert mypy["strict"] is True
    assert sorted(mypy["packages"]) == ["builder", "mindrian"]


def test_the_relaxation_list_only_shrinks() -> None:
    overrides = PYPROJECT["tool"]["mypy"].get("overrides", [])
    relaxed = {
        module
        for override in overrides
        for module in (
            [override["module"]] if isinstance(override["module"], str) else override["module"]
        )
        if _own(module)
    }
    grown = sorted(relaxed - set(RELAXED_MODULES))
    assert not grown, f"modules relaxed in [tool.mypy] without an entry in RELAXED_MODULES: {grown}"
    gone = sorted(set(RELAXED_MODULES) - relaxed)
    assert not gone, f"strict again, remove from RELAXED_MODULES: {gone}"


def test_the_runtime_ships_its_type_hints() -> None:
    assert (ROOT / "mindrian" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["mindrian"]


def test_property_tests_have_no_deadline_and_ci_is_derandomised() -> None:
    assert settings().deadline is None
    assert HealthCheck.too_slow in settings().suppress_health_check
    ci = settings.get_profile("ci")
    assert (ci.deadline, ci.derandomize, ci.database) == (None, True, None)
    assert settings().derandomize is (os.environ.get("CI") == "true")


#: The packages above the contract layer: ``builder/pipeline`` (contract, errors, codes,
#: serialisation, checkpoints, results) is imported by them and imports none of them.
ABOVE_PIPELINE = frozenset({"phases", "probe", "codegen", "graph", "mcp", "orchestration", "cli"})


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) of every import in ``path``, function-local and TYPE_CHECKING ones too;
    ``from a import b`` counts as ``a.b`` as well, since ``b`` may be a module."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            yield from ((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)


def _upward(path: Path) -> Iterator[str]:
    for line, module in _imports(path):
        parts = module.split(".")
        if parts[0] == "builder" and len(parts) > 1 and parts[1] in ABOVE_PIPELINE:
            yield f"{path.relative_to(ROOT).as_posix()}:{line} imports {module}"


def test_the_contract_layer_imports_nothing_above_it() -> None:
    upward = sorted(
        {edge for path in (ROOT / "builder" / "pipeline").rglob("*.py") for edge in _upward(path)}
    )
    assert not upward, f"builder/pipeline reaches up: {upward}"


def test_the_import_scan_sees_every_form_of_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from builder.pipeline import errors\n"
        "from builder import orchestration\n"
        "if TYPE_CHECKING:\n    import builder.graph.config\n"
        "def f():\n    from builder.phases import load_phase\n",
        encoding="utf-8",
    )
    above = {
        (line, name)
        for line, name in _imports(module)
        if name.split(".")[1:2] and name.split(".")[1] in ABOVE_PIPELINE
    }
    assert above == {
        (2, "builder.orchestration"),
        (4, "builder.graph.config"),
        (6, "builder.phases"),
        (6, "builder.phases.load_phase"),
    }
