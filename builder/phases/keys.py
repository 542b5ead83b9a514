"""What a phase's input digest takes from the phase, without importing the phase.

A no-op build checks every skill's stamp by recomputing each phase's input
digest (:func:`builder.orchestration.runner.stamped_report`). Importing the
seven phase modules for that would cost more than the rest of the no-op
(pydantic output models, Jinja, the Cypher validators, LadybugDB); a
:class:`PhaseKey` holds only what the digest reads: the phase's name and
number, the module and packages whose code counts, and its ``extra_digest``.

The phase classes compute their ``extra_digest`` with the same functions, and
``tests/builder/phases/test_keys.py`` holds every default key equal to its
phase, so a stamp can only match what a build would compute.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from builder.codegen.templates import AGENT_TEMPLATES, template_digest
from builder.pipeline.contract import PhaseTraits
from mindrian.project import ProjectPaths

if TYPE_CHECKING:
    from builder.phases.outputs import Inputs
    from builder.pipeline.config import BuildConfig

__all__ = [
    "DigestKey",
    "PhaseKey",
    "codegen_extra",
    "custom_tools_extra",
    "embedded_label",
    "linter_identity",
    "linter_label",
    "load_key",
    "output_paths",
    "registration_extra",
]


class DigestKey(Protocol):
    """What :func:`~builder.orchestration.runner.input_digest` reads of a phase (a phase object
    has all of it)."""

    @property
    def name(self) -> str:
        """The phase's name."""
        ...

    @property
    def number(self) -> int:
        """The phase's 1-based number."""
        ...

    @property
    def output_type(self) -> Any:
        """The type its checkpoint's output is read as."""
        ...

    @property
    def traits(self) -> PhaseTraits:
        """What a batch needs to know to schedule it."""
        ...

    def extra_digest(self, inputs: Inputs) -> object:
        """What else its output depends on, as plain data."""
        ...


def _output_type(name: str) -> Any:
    # Only an ``extra_digest`` that reads an earlier output asks, and a build would import the
    # phase anyway for it.
    from builder.phases import load_phase

    return load_phase(name).output_type


@dataclass(frozen=True)
class PhaseKey:
    """A phase's identity for its input digest, as the phase object built by default has it."""

    name: str
    """The phase's name."""
    extra: Callable[[Inputs], object] = field(default=lambda inputs: None)
    """Its ``extra_digest``."""
    traits: PhaseTraits = field(default_factory=PhaseTraits)
    """Its ``traits``."""
    code_packages: tuple[str, ...] = ()
    """Packages every file of which counts toward its code digest (its ``code_packages``)."""

    @property
    def number(self) -> int:
        """Its 1-based number: its position in the pipeline."""
        from builder.phases import phase_number

        return phase_number(self.name)

    @property
    def code_module(self) -> str:
        """The module defining the phase (its code digest starts there; read, never imported)."""
        return f"builder.phases.{self.name}"

    @property
    def output_type(self) -> Any:
        """The phase's ``output_type``; imports the phase module."""
        return _output_type(self.name)

    def extra_digest(self, inputs: Inputs) -> object:
        """The phase's ``extra_digest``."""
        return self.extra(inputs)


def custom_tools_extra(inputs: Inputs) -> str:
    """Phase 4: the source files of the custom tools' modules, so editing one describes its
    tools again."""
    if b"custom_tools" not in inputs.source.data:
        return ""  # most skills: no need to load phase 1's output to know there are none
    definition = inputs.previous.skill()
    if not definition.custom_tools:
        return ""
    from builder.mcp.describe import tool_sources_digest

    return tool_sources_digest([r.function for r in definition.custom_tools])


def linter_label() -> str:
    """The Neo4j Cypher linter package and its version, as phase 5 names it."""
    from builder.graph.cypher_lint import PACKAGE

    package, _, version = PACKAGE.rpartition("@")
    return f"{package} {version}"


def linter_identity(reason: str | None) -> str:
    """The linter's part of phase 5's digest: its label, and why it cannot run if it cannot."""
    return linter_label() if reason is None else f"{linter_label()} unavailable: {reason}"


def embedded_label() -> str:
    """LadybugDB and its installed version, read from its metadata rather than by importing it
    (which starts asyncio)."""
    try:
        return f"LadybugDB {importlib.metadata.version('ladybug')}"
    except importlib.metadata.PackageNotFoundError:
        return "LadybugDB unknown"


def _validators_extra(inputs: Inputs) -> dict[str, str]:
    return dict(_validators())


@functools.cache
def _validators() -> tuple[tuple[str, str], ...]:
    # Asked once a process: what is installed does not change under a running build, and
    # reading package metadata for each of many skills would cost more than the rest of
    # their no-op.
    from builder.graph import cypher_lint

    return (
        ("linter", linter_identity(cypher_lint.unavailable_reason())),
        ("fallback", embedded_label()),
    )


@functools.cache
def _shipped_templates() -> str:
    # Read once a process, as the default phase object reads it once: templates do not change
    # under a running build, and a batch asks once per skill.
    return template_digest(AGENT_TEMPLATES)


def codegen_extra(inputs: Inputs, templates: str, tests: bool) -> str:
    """Phase 6: the templates (their :func:`template_digest`), the output folder and whether
    tests run."""
    out_dir = _folders(inputs.config).generated
    skipped = "" if tests else " tests=skipped"
    return f"{templates} out_dir={out_dir}{skipped}"


def _codegen_with_tests(inputs: Inputs) -> str:
    return codegen_extra(inputs, _shipped_templates(), tests=True)


def registration_extra(
    inputs: Inputs, registry_path: Path | None = None, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Phase 7: where the framework goes (``registry_path`` None: the project's default
    embedded registry; ``env`` None: ``os.environ``)."""
    config: BuildConfig = inputs.config
    uri = config.neo4j_uri or (os.environ if env is None else env).get("NEO4J_URI") or None
    if uri:
        from mindrian.graph import backend_for, redact_uri

        target = f"{backend_for(uri).name} {redact_uri(uri)}"
    else:
        registry = _resolved(registry_path) if registry_path else _folders(config).registry
        target = f"embedded {registry}"
    return {"registry": target, "out_dir": _folders(config).generated}


def output_paths(root: str, out_dir: str) -> ProjectPaths:
    """The layout of the project at ``root`` for the output folder ``out_dir`` (a build's
    ``config.root`` and ``config.out_dir``), made once a process for each.

    A batch asks once per skill, and working out where the output's state lives
    resolves the output folder, which does not move under a build. Keyed by the
    absolute root, so a change of working directory is never served stale.
    """
    return _output_paths(os.path.abspath(root), out_dir)


@functools.lru_cache(maxsize=8)
def _output_paths(root: str, out_dir: str) -> ProjectPaths:
    return ProjectPaths(Path(root), Path(out_dir))


@dataclass(frozen=True)
class _Folders:
    """A build's output folders as its digests name them (resolved, POSIX)."""

    generated: str
    """The output folder."""
    registry: str
    """The embedded registry database indexing it."""


def _folders(config: BuildConfig) -> _Folders:
    return _resolved_folders(os.path.abspath(config.root), config.out_dir)


@functools.lru_cache(maxsize=8)
def _resolved_folders(root: str, out_dir: str) -> _Folders:
    # Once a process per project: phases 6 and 7 name them in every skill's digest.
    paths = _output_paths(root, out_dir)
    return _Folders(_resolved(paths.generated), _resolved(paths.embedded_registry))


@functools.lru_cache(maxsize=64)
def _absolute_resolved(path: str) -> str:
    # Resolved once a process per folder: a batch asks for the same few folders once per skill,
    # each resolve stats every component, and a build's folders do not move under it.
    return Path(path).resolve().as_posix()


def _resolved(path: Path) -> str:
    # Keyed by the absolute path, so a change of working directory is never served stale.
    return _absolute_resolved(os.path.abspath(path))


_KEYS = {
    key.name: key
    for key in (
        PhaseKey("skill_analysis"),
        PhaseKey("architecture"),
        PhaseKey("handoff_protocol"),
        PhaseKey("tool_assembly", custom_tools_extra),
        PhaseKey("neo4j_schema", _validators_extra),
        PhaseKey(
            "code_generation",
            _codegen_with_tests,
            PhaseTraits(writes=True, tests="package"),
            ("mindrian",),
        ),
        PhaseKey(
            "registration",
            registration_extra,
            PhaseTraits(writes=True, serial=True, tests="probe"),
            ("mindrian",),
        ),
    )
}


def load_key(name: str) -> PhaseKey:
    """The key of the phase :func:`builder.phases.load_phase` returns for ``name``: a phase that
    computes (nothing beyond the runner's digest, default traits) needs no entry above."""
    return _KEYS.get(name) or PhaseKey(name)
