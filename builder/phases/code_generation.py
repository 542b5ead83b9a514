"""Phase 6, code generation: render the package, compile it, run its tests, stage it.

The package is rendered into a workspace under the output's staging folder
(``ProjectPaths.staging``, on the output folder's filesystem), every Python
file is compiled, and the package's own tests run in a subprocess with the
scripted model and the no-real-model-calls plugin. When both checks hold the
package becomes the *ready* one of its :class:`PackageTransaction`; phase 7
installs it in ``<out_dir>/<identifier>`` only once it is registered, so a
failed build leaves the previous package, registry.yaml and the registry as
they were. A cached phase 6 counts only while its package is still the ready
or the installed one (:meth:`CodeGenerationPhase.cache_valid`).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from builder.codegen.prompt_items import prompt_items
from builder.codegen.render import (
    AGENT_TEMPLATES,
    json_text,
    make_folder,
    registration_from_graph,
    render_package,
    template_digest,
    workflow_dot,
    write_tree,
)
from builder.phases import phase_number
from builder.phases.keys import codegen_extra, load_key
from builder.phases.outputs import Inputs, Outputs
from builder.pipeline.contract import CheckResult, PhaseHooks, PhaseResult
from builder.pipeline.errors import CodegenError, CompilerError, SourceLocation
from builder.pipeline.package_tests import TEST_TIMEOUT_SECONDS, TestRun, run_package_tests
from builder.pipeline.serial import to_plain
from builder.pipeline.services import LONE, Services, TestRunner
from builder.pipeline.staged import Staged
from builder.pipeline.transaction import PackageTransaction, file_digest, path_digest
from builder.pipeline.worker import ModuleRunner, run_module
from builder.skill.chain import chain_stage_bytes
from builder.skill.output_example import read_examples
from builder.skill.package_files import SkillFile, skill_files
from builder.skill.source import SKILL_FOLDER
from builder.skill.spec import AgentSpec
from mindrian.agent_types import record_of
from mindrian.project import ProjectPaths

if TYPE_CHECKING:
    from mindrian.agents.output import HandoffOutput

__all__ = [
    "PHASE",
    "RENDER_ONLY",
    "SKIPPED_TESTS",
    "TEST_TIMEOUT_SECONDS",
    "CodeGenerationPhase",
    "GeneratedPackage",
    "StagedPackage",
    "TestRun",
    "compile_errors",
    "output_examples",
    "package_dir",
    "run_generated_tests",
    "skip_generated_tests",
    "transaction",
    "write_skill_files",
]

#: The test summary of a package rendered with :func:`skip_generated_tests`.
SKIPPED_TESTS = "not run (generation only)"


@dataclass(frozen=True)
class GeneratedPackage:
    """What phase 6 produced: the package's files and how its tests went."""

    identifier: str
    """Package name (the folder under the output directory)."""
    files: tuple[tuple[str, str], ...]
    """``(package-relative path, digest)`` for every file, sorted by path; the digest is the
    sha256 hex of the bytes, marked for an executable file (:func:`file_digest`)."""
    tests: str
    """The pytest summary line of the generated tests without timing (``7 passed``), or why they did
    not run."""


def package_dir(inputs: Inputs, identifier: str) -> Path:
    """``<root>/<out_dir>/<identifier>`` as an absolute path."""
    return _out_dir(inputs) / identifier


def _out_dir(inputs: Inputs) -> Path:
    return (Path(inputs.config.root) / inputs.config.out_dir).resolve()


def compile_errors(files: Mapping[str, str]) -> tuple[str, ...]:
    """``path:line: message`` for every Python file that does not compile."""
    errors = []
    for path, text in files.items():
        if not path.endswith(".py"):
            continue
        try:
            compile(text, path, "exec", dont_inherit=True)
        except SyntaxError as exc:
            errors.append(f"{path}:{exc.lineno or 0}: {exc.msg}")
        except ValueError as exc:  # e.g. a NUL byte in the source
            errors.append(f"{path}:0: {exc}")
    return tuple(errors)


def run_generated_tests(
    folder: Path,
    identifier: str,
    timeout: float = TEST_TIMEOUT_SECONDS,
    runner: ModuleRunner = run_module,
) -> TestRun:
    """Run ``folder/identifier/tests`` with pytest in a child through ``runner``, offline, with
    the guard plugin (:func:`builder.pipeline.package_tests.run_package_tests`)."""
    return run_package_tests(folder, identifier, timeout, runner)


def skip_generated_tests(folder: Path, identifier: str) -> TestRun:
    """A :data:`TestRunner` that runs nothing: ``mindrian check`` verifies generation only.

    Behaviour is what ``make test`` verifies; the checkpoint's digest records the skip.
    """
    return TestRun(True, SKIPPED_TESTS, (), "")


def _digests(files: Mapping[str, str], skill: tuple[SkillFile, ...] = ()) -> dict[str, str]:
    """The digest of every file of the package: rendered ``files`` and the ``skill`` copy."""
    found = {p: file_digest(text.encode("utf-8"), False) for p, text in files.items()}
    found.update({f"{SKILL_FOLDER}/{f.name}": file_digest(f.data, f.executable) for f in skill})
    return dict(sorted(found.items()))


def _on_disk(root: Path) -> dict[str, str]:
    """The digest of every file under ``root``, by relative POSIX path."""
    return {
        p.relative_to(root).as_posix(): path_digest(p)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@dataclass(frozen=True)
class StagedPackage:
    """What :meth:`CodeGenerationPhase.stage_tests` keeps for the phase (:class:`Staged`)."""

    files: dict[str, str]
    """The rendered files, by package-relative path."""
    folder: str
    """Where the package was staged for the shared session (the phase takes that copy when
    it is still there, as written)."""


def _taken(tested: str | None, package: Path, digests: Mapping[str, str]) -> bool:
    """Whether the copy of the package a shared session tested, at ``tested``, became
    ``package``: one rename instead of creating every file again (a package's files cost the
    kernel a few milliseconds to create), and only when it holds exactly ``digests``, modes
    included; else it stays where it is and the package is written afresh."""
    if tested is None:
        return False
    try:
        if _on_disk(Path(tested)) != digests:
            return False
        os.rename(tested, package)
    except OSError:
        return False
    return True


def write_skill_files(skill: tuple[SkillFile, ...], package: Path) -> None:
    """Copy the skill's files byte for byte under ``package/skill/``, executables as 0755."""
    made: set[Path] = set()
    for file in skill:
        target = package / SKILL_FOLDER / file.name
        make_folder(target.parent, made)
        target.write_bytes(file.data)
        target.chmod(0o755 if file.executable else 0o644)


def _sweep(package: Path, files: Mapping[str, str]) -> None:
    # ``files``: the digests the package must hold (:func:`_digests`).
    """Remove what running the tests left behind (caches), then insist the package is as
    rendered."""
    for path in sorted(package.rglob("__pycache__"), reverse=True):
        shutil.rmtree(path)
    expected = files
    actual = _on_disk(package)
    if actual != expected:
        changed = sorted(
            set(actual) ^ set(expected) | {p for p in actual if actual[p] != expected.get(p)}
        )
        raise CodegenError(
            f"running the generated tests changed the package: {', '.join(changed)}", code="C020"
        )


def transaction(inputs: Inputs, identifier: str) -> PackageTransaction:
    """The staging files of package ``identifier`` for this build's output folder."""
    config = inputs.config
    return PackageTransaction(ProjectPaths(Path(config.root), Path(config.out_dir)), identifier)


def _check_owner(spec: AgentSpec, final: Path) -> None:
    """Two skills may not share a package folder; the existing ``spec.yaml`` names its source."""
    existing = final / "spec.yaml"
    if not existing.is_file():
        return
    try:
        data = yaml.safe_load(existing.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CodegenError(
            f"{existing.as_posix()} cannot be read ({exc}); remove the folder to regenerate it",
            code="C021",
        ) from None
    other = data.get("source_path") if isinstance(data, dict) else None
    if other != spec.source_path:
        raise CodegenError(
            f"{spec.source_path} and {other} both map to the package {spec.identifier!r}; "
            "rename one skill (or delete the stale package folder)",
            location=SourceLocation(spec.source_path, 1),
            code="C022",
        )


def output_examples(spec: AgentSpec) -> tuple[dict[str, Any], ...]:
    """The JSON examples of the skill's output template, each checked against the output model.

    An example holding ``output`` (and only HandoffOutput fields) is a whole
    answer; any other is the ``data`` object when phase 3 inferred a data
    schema from the examples, else the ``scores`` object. One the generated
    schema rejects is a located error: the model would be told to answer in a
    form that always fails.
    """
    if not record_of(spec.type).output_model:
        return ()
    from pydantic import ValidationError

    from mindrian.agents.output import whole_answer

    data = spec.handoff.returns.data_schema if spec.handoff else {}
    shape = [[to_plain(s) for s in spec.scores], bool(spec.score_bands), data or None]
    model = _output_model(json.dumps(shape, ensure_ascii=False))
    part = model.model_fields["data" if data else "scores"].annotation
    found: list[dict[str, Any]] = []
    for block in spec.instructions.blocks:
        if block.key != "output_template":
            continue
        for example in read_examples(block.text, block.line)[0]:
            try:
                if whole_answer(example.value):
                    model.model_validate(example.value)
                else:
                    part.model_validate(example.value)  # type: ignore[union-attr]
            except ValidationError as exc:
                raise CodegenError(
                    f"the output template's JSON example {json_text(example.value)} does not fit "
                    f"the generated schema: {_first_problem(exc)}",
                    location=SourceLocation(spec.source_path, example.line),
                    code="C026",
                ) from None
            found.append(dict(example.value))
    return tuple(found)


@functools.lru_cache(maxsize=64)
def _output_model(shape: str) -> type[HandoffOutput]:
    """The output model of a spec's scores, score bands and data schema (``shape``: their JSON,
    keys in written order). Skills of one shape, e.g. every one without scores, share one
    model: pydantic takes a millisecond or two to build each, and validating reads it only."""
    from mindrian.agents.output import scored_output

    dimensions, total, data = json.loads(shape)
    return scored_output("Skill", dimensions, total=total, data=data)


def _first_problem(exc: Any) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(map(str, error['loc'])) or '<root>'}: {error['msg']}"


def _workflow_dot(spec: AgentSpec) -> str | None:
    """The thought graph of a pipeline, guided or collaborative agent, as DOT text."""
    if record_of(spec.type).workflow is None:
        return None
    return workflow_dot(spec)


class CodeGenerationPhase(PhaseHooks[Outputs, GeneratedPackage]):
    """Phase 6; the template folder is injectable for tests, the test runner comes from the
    build's :class:`~builder.pipeline.services.Services`."""

    name = "code_generation"
    number = phase_number(name)
    checks = ("compiles", "tests_pass")
    output_type = GeneratedPackage
    #: It writes the package folder, and tests the package it renders in a child (declared with
    #: its key, which a batch reads without importing this module).
    traits = load_key(name).traits
    #: The generated tests run the whole runtime, not only what this module imports.
    code_packages = ("mindrian",)

    def __init__(self, templates: Path = AGENT_TEMPLATES, services: Services = LONE) -> None:
        self.templates = templates
        self.services = services

    def with_services(self, services: Services) -> CodeGenerationPhase:
        """This phase (its templates) testing packages as ``services`` says."""
        changed = copy.copy(self)  # keeps the template digest already read
        changed.services = services
        return changed

    @property
    def run_tests(self) -> TestRunner:
        """How this phase tests a staged package."""
        if not self.services.tests:
            return skip_generated_tests
        return self.services.package_tests or run_generated_tests

    def extra_digest(self, inputs: Inputs) -> str:
        """The templates, the output folder and whether tests run: a change reruns the phase."""
        return codegen_extra(inputs, self._template_digest, tests=self.services.tests)

    @functools.cached_property
    def _template_digest(self) -> str:
        # Read once per phase object: templates do not change under a running build, and a
        # batch asks for this once per skill.
        return template_digest(self.templates)

    def render(self, inputs: Inputs) -> tuple[AgentSpec, dict[str, str]]:
        """The spec and the rendered files of the package (no side effects)."""
        spec = inputs.previous.spec()
        files = render_package(
            spec,
            registration_from_graph(inputs.previous.graph()),
            inputs.source.path,
            items=prompt_items(inputs.source.data, chain_stage_bytes(inputs.source)),
            output_examples=output_examples(spec),
            workflow_dot=_workflow_dot(spec),
            root=self.templates,
        )
        return spec, files

    def _rendered(self, inputs: Inputs) -> tuple[AgentSpec, dict[str, str]]:
        """:meth:`render`, or the files :meth:`stage_tests` rendered from these same inputs."""
        if isinstance(inputs.staged, StagedPackage):
            return inputs.previous.spec(), dict(inputs.staged.files)
        return self.render(inputs)

    def stage_tests(self, inputs: Inputs, folder: Path) -> bool | Staged:
        """Render this skill's package into ``folder`` (a shared session tests it with the
        others), keeping the rendered files for the phase to take up when it runs after the
        session: rendering is a pure function of the inputs, and rendering again cost about as
        much as all of the phase's other work; False when it does not render or compile, so
        the phase runs and reports why."""
        if not self.services.tests:
            return False
        try:
            spec, files = self.render(inputs)
        except CompilerError:
            return False  # the phase raises it again and reports it as a build of its own does
        if compile_errors(files):
            return False
        write_tree(files, folder / spec.identifier)
        write_skill_files(skill_files(inputs.source), folder / spec.identifier)
        return Staged(StagedPackage(files, str(folder / spec.identifier)))

    def cache_valid(self, inputs: Inputs, stored: Callable[[], GeneratedPackage]) -> bool:
        """A checkpoint counts only while its package is the ready one, else the installed one."""
        output = stored()
        txn = transaction(inputs, output.identifier)
        txn.recover()
        files = dict(output.files)
        return txn.ready_matches(files) or (not txn.ready.exists() and txn.installed_matches(files))

    def run(self, inputs: Inputs) -> PhaseResult[GeneratedPackage]:
        spec, files = self._rendered(inputs)
        _check_owner(spec, package_dir(inputs, spec.identifier))
        txn = transaction(inputs, spec.identifier)
        txn.recover()
        staging = txn.workspace()
        tested = inputs.staged.folder if isinstance(inputs.staged, StagedPackage) else None
        try:
            return self._stage(spec, files, skill_files(inputs.source), staging, txn, tested)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _stage(
        self,
        spec: AgentSpec,
        files: dict[str, str],
        skill: tuple[SkillFile, ...],
        staging: Path,
        txn: PackageTransaction,
        tested: str | None = None,
    ) -> PhaseResult[GeneratedPackage]:
        package = staging / spec.identifier
        digests = _digests(files, skill)
        if not _taken(tested, package, digests):
            write_tree(files, package)
            write_skill_files(skill, package)
        errors = compile_errors(files)
        if errors:
            compiles = CheckResult(
                "compiles", False, f"{len(errors)} file(s) do not compile: {'; '.join(errors)}"
            )
            tests = CheckResult("tests_pass", False, "not run: the package does not compile")
            return self._result(spec, digests, "not run", compiles, tests)
        compiles = CheckResult(
            "compiles", True, f"{sum(p.endswith('.py') for p in files)} Python files compile"
        )
        run = self.run_tests(staging, spec.identifier)
        if not run.passed:
            named = (
                f"; failing: {', '.join(run.failures)}"
                if run.failures
                else f"; output:\n{run.output}"
            )
            tests = CheckResult(
                "tests_pass", False, f"generated tests failed ({run.summary}){named}"
            )
            return self._result(spec, digests, run.summary, compiles, tests)
        _sweep(package, digests)
        txn.stage(package)
        tests = CheckResult("tests_pass", True, f"generated tests: {run.summary}")
        return self._result(spec, digests, run.summary, compiles, tests)

    @staticmethod
    def _result(
        spec: AgentSpec, digests: dict[str, str], summary: str, *checks: CheckResult
    ) -> PhaseResult[GeneratedPackage]:
        output = GeneratedPackage(
            identifier=spec.identifier, files=tuple(digests.items()), tests=summary
        )
        return PhaseResult(output=output, checks=checks)


#: The phase object the runner loads.
PHASE = CodeGenerationPhase()
#: Phase 6 as ``mindrian check`` runs it by default: render, compile, install; no generated tests.
RENDER_ONLY = CodeGenerationPhase(services=Services(tests=False))
