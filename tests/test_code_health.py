"""The gates stay shut: mypy's strictness only grows, the runtime ships its type hints, the
property tests run without deadlines (derandomised under CI), builder/pipeline imports
nothing above it, no module of builder/ or mindrian/ imports itself through others (an import
loop, hidden by a function-local import or not), no module of the command line is over 500
lines, every exception either raises derives from the one ``MindrianError``, and no two test
modules share a basename."""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import pkgutil
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

import builder
import mindrian
from mindrian.errors import MindrianError

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


#: Where the phases and the runners of their children are defined: only there may code ask which
#: of them it holds (issue 35: the batch reads a phase's traits, never its class or function).
PHASE_HOMES = ("builder.phases", "builder.probe.runner")
#: Comparisons that test identity or membership (``==`` against a class or a function is one too).
_IDENTITY = (ast.Is, ast.IsNot, ast.In, ast.NotIn, ast.Eq, ast.NotEq)


def _home_objects(root: Path) -> tuple[set[str], set[str]]:
    """The phase homes' modules (dotted) and the objects they define: classes, functions and
    names bound to a call's result (``PHASE = RegistrationPhase()``), not data constants."""
    modules: set[str] = set()
    objects: set[str] = set()
    for home in PHASE_HOMES:
        where = root / home.replace(".", "/")
        paths = sorted(where.rglob("*.py")) if where.is_dir() else [where.with_suffix(".py")]
        for path in paths:
            dotted = path.relative_to(root).with_suffix("").as_posix().replace("/", ".")
            modules.add(dotted.removesuffix(".__init__"))
            for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
                if isinstance(node, ast.ClassDef | ast.FunctionDef):
                    objects.add(node.name)
                elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                    objects |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return modules, objects


def _from_phase_homes(
    tree: ast.AST, home_modules: set[str], objects: set[str]
) -> tuple[set[str], set[str]]:
    """The home objects a module imports (under the names it binds), and the names it gives the
    home modules (``from builder.phases import code_generation``, ``import … as r``)."""
    names: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in home_modules | {"builder.probe"}:
            for alias in node.names:
                bound = alias.asname or alias.name
                if f"{node.module}.{alias.name}" in home_modules:
                    modules.add(bound)
                elif alias.name in objects:
                    names.add(bound)
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name in home_modules}
    return names, modules


def _named(node: ast.expr, names: set[str], modules: set[str], objects: set[str]) -> Iterator[str]:
    """What an operand names of the phase homes: an imported object, an object of an imported
    home module, or either inside a tuple."""
    if isinstance(node, ast.Name) and node.id in names:
        yield node.id
    elif isinstance(node, ast.Attribute) and node.attr in objects:
        if ast.unparse(node.value) in modules:
            yield node.attr
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for item in node.elts:
            yield from _named(item, names, modules, objects)


def _asks_which_phase(
    path: Path, home_modules: set[str], objects: set[str]
) -> Iterator[tuple[int, str]]:
    """(line, name) of every ``isinstance`` or identity test in ``path`` against an object of
    the phase homes."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names, modules = _from_phase_homes(tree, home_modules, objects)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 2:
            if node.func.id in {"isinstance", "issubclass"}:
                found = _named(node.args[1], names, modules, objects)
                yield from ((node.lineno, n) for n in found)
        elif isinstance(node, ast.Compare) and any(isinstance(o, _IDENTITY) for o in node.ops):
            for operand in (node.left, *node.comparators):
                yield from ((node.lineno, n) for n in _named(operand, names, modules, objects))


def _questions(root: Path) -> list[str]:
    home_modules, objects = _home_objects(root)
    return sorted(
        f"{path.relative_to(root).as_posix()}:{line} tests against {name}"
        for path in (root / "builder").rglob("*.py")
        if path.relative_to(root).with_suffix("").as_posix().replace("/", ".") not in home_modules
        for line, name in _asks_which_phase(path, home_modules, objects)
    )


def test_nothing_outside_the_phases_asks_which_phase_it_holds() -> None:
    assert _questions(ROOT) == []


def test_the_phase_question_scan_sees_each_form(tmp_path: Path) -> None:
    for home in (
        "phases/__init__",
        "phases/code_generation",
        "phases/registration",
        "probe/runner",
    ):
        path = tmp_path / "builder" / f"{home}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "class CodeGenerationPhase: ...\ndef run_generated_tests(): ...\n"
            "def load_phase(): ...\ndef run_probe(): ...\nPHASE = CodeGenerationPhase()\n"
            "RENDER_ONLY = CodeGenerationPhase()\nKEYS = ('id', 'name')\n",
            encoding="utf-8",
        )
    (tmp_path / "builder" / "batch.py").write_text(
        "from builder.phases import load_phase, code_generation\n"
        "from builder.phases.code_generation import CodeGenerationPhase as Six\n"
        "from builder.phases.code_generation import run_generated_tests\n"
        "import builder.probe.runner as probes\n"
        "def f(p, base, run_probe):\n"
        "    from builder.phases.registration import PHASE\n"
        "    isinstance(p, Six)\n"
        "    isinstance(p, (int, code_generation.CodeGenerationPhase))\n"
        "    p.run_tests is run_generated_tests\n"
        "    base in (load_phase, code_generation.RENDER_ONLY)\n"
        "    p.probe is not probes.run_probe\n"
        "    p == PHASE\n"
        "    p.probe is run_probe\n"
        "    p.traits.serial is True\n"
        "    isinstance(p, int)\n"
        "    from builder.phases.code_generation import KEYS\n"
        "    'name' in KEYS\n",
        encoding="utf-8",
    )
    assert _questions(tmp_path) == sorted(
        f"builder/batch.py:{line} tests against {name}"
        for line, name in [
            (7, "Six"),
            (8, "CodeGenerationPhase"),
            (9, "run_generated_tests"),
            (10, "load_phase"),
            (10, "RENDER_ONLY"),
            (11, "run_probe"),
            (12, "PHASE"),
        ]
    )


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import executed at some point: module level and function-local, not those under
    ``if TYPE_CHECKING:`` (only the type checker follows those)."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        pending.extend(ast.iter_child_nodes(node))


def _import_graph(root: Path, packages: Iterable[str]) -> dict[str, set[str]]:
    """Each module of ``packages`` (under ``root``) and the modules of theirs it imports;
    ``from a import b`` is an edge to ``a.b`` when that is a module, else to ``a``."""
    files = {
        _module_name(path, root): path
        for package in packages
        for path in (root / package).rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        targets: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif node.module:
                for alias in node.names:
                    whole = f"{node.module}.{alias.name}"
                    targets.add(whole if whole in files else node.module)
        graph[name] = {t for t in targets if t in files and t != name}
    return graph


def _loops(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The import loops of ``graph``: its strongly connected parts of two modules or more
    (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = stack[stack.index(node) :]
                del stack[stack.index(node) :]
                if len(part) > 1:
                    found.append(sorted(part))
    return found


def test_no_module_imports_itself_through_others() -> None:
    graph = _import_graph(ROOT, ("builder", "mindrian"))
    assert "mindrian.agents.base" in graph  # the walk saw the packages at all
    assert _loops(graph) == []


def test_the_loop_scan_sees_a_loop_hidden_by_a_local_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "a.py").write_text("from pkg.b import f\n", encoding="utf-8")
    (package / "b.py").write_text("def f():\n    from pkg import a\n", encoding="utf-8")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n",
        encoding="utf-8",
    )
    graph = _import_graph(tmp_path, ("pkg",))
    assert graph["pkg.c"] == set()  # a TYPE_CHECKING import runs nothing
    assert _loops(graph) == [["pkg.a", "pkg.b"]]


def test_command_line_modules_stay_short() -> None:
    long = {
        path.relative_to(ROOT).as_posix(): count
        for path in (ROOT / "builder" / "cli").glob("*.py")
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert long == {}


def _exception_classes(package: Any) -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found[f"{module.__name__}.{name}"] = value
    return found


#: Exceptions that are signals, not failures (tests/mindrian/test_errors.py says why).
_SIGNALS = ("mindrian.workflow.engine.Pause", "mindrian.agents.base.ConfirmationNeeded")


def test_one_error_root_across_the_builder_and_the_runtime() -> None:
    classes = {**_exception_classes(builder), **_exception_classes(mindrian)}
    named = sorted(name for name in classes if name.rsplit(".", 1)[1] == "MindrianError")
    assert named == ["mindrian.errors.MindrianError"]
    # The workflow's Pause and a served run's ConfirmationNeeded are signals, not failures
    # (tests/mindrian/test_errors.py says why).
    strays = sorted(
        name
        for name, cls in classes.items()
        if not issubclass(cls, MindrianError)
        and name
        not in ("mindrian.workflow.engine.Pause", "mindrian.agents.base.ConfirmationNeeded")
    )
    assert strays == []
    assert "builder.pipeline.errors.UsageError" in classes


def test_test_modules_have_unique_basenames() -> None:
    # The test folders have no __init__.py, so pytest imports each test file by its basename:
    # two files of one name stop collection of the whole suite ("import file mismatch").
    seen: dict[str, Path] = {}
    clashes = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if "golden" in path.relative_to(ROOT).parts:
            continue
        first = seen.setdefault(path.name, path)
        if first != path:
            clashes.append(f"{first.relative_to(ROOT)} and {path.relative_to(ROOT)}")
    assert not clashes, clashes
