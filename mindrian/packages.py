"""Generated agent packages loaded by agent id, from the project's ``generated/`` folder.

``generated/registry.yaml`` names the registered agents; each package's
``spec.yaml`` says which id it implements, so the folder is found without
guessing how the builder spells identifiers. A package is imported from its
folder under its own name (no ``PYTHONPATH``); when a package of that name is
already importable (``pip install generated/<pkg>``) that one is used.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import yaml

from mindrian.errors import MindrianError
from mindrian.graph.registry_yaml import load_registry_yaml
from mindrian.handoff.context import MIN_CLARITY
from mindrian.project import ProjectPaths
from mindrian.serial import load_yaml

if TYPE_CHECKING:  # imported where a package is loaded: listing packages needs no Agno
    from mindrian.agents.base import MindrianAgent

__all__ = [
    "AgentPackage",
    "PackageError",
    "PackageFolder",
    "PackageInfo",
    "agent_class",
    "registered_packages",
]


class PackageError(MindrianError, LookupError):
    """An agent id that is not registered, or a package that cannot be loaded."""


@dataclass(frozen=True)
class AgentPackage:
    """One generated package of a registered agent."""

    agent_id: str
    """The agent's id (``pws-validation``)."""
    identifier: str
    """The package's import name (``pws_validation``)."""
    folder: Path
    """Its folder under ``generated/``."""
    agent_type: str
    """operator, role, collaborative, pipeline or guided."""


def registered_packages(project: ProjectPaths) -> tuple[AgentPackage, ...]:
    """Every registered agent's package, in registry order (sorted by id)."""
    if not project.registry_yaml.is_file():
        raise PackageError(
            f"{project.registry_yaml} does not exist: build the skills first (mindrian build --all)"
        )
    try:
        records = load_registry_yaml(project.registry_yaml)
    except (OSError, ValueError, yaml.YAMLError) as error:
        raise PackageError(f"{project.registry_yaml}: {error}") from error
    folders = _folders_by_id(project.generated)
    missing = [r.id for r in records if r.id not in folders]
    if missing:
        raise PackageError(
            f"registered agent(s) without a package under {project.generated}: {', '.join(missing)}"
        )
    return tuple(folders[r.id] for r in records)


def agent_class(package: AgentPackage) -> type[MindrianAgent]:
    """The agent class a package exports (the :class:`MindrianAgent` subclass with its id)."""
    from mindrian.agents.base import MindrianAgent

    module = _import(package)
    for name in getattr(module, "__all__", ()):
        candidate = getattr(module, name, None)
        if (
            isinstance(candidate, type)
            and issubclass(candidate, MindrianAgent)
            and candidate.agent_id == package.agent_id
        ):
            return candidate
    raise PackageError(
        f"{package.folder}: exports no agent class with agent_id {package.agent_id!r}"
    )


def _folders_by_id(generated: Path) -> dict[str, AgentPackage]:
    found: dict[str, AgentPackage] = {}
    for spec_file in sorted(generated.glob("*/spec.yaml")):
        spec = load_yaml(spec_file.read_text(encoding="utf-8")) or {}
        agent_id, identifier = spec.get("id"), spec.get("identifier")
        if isinstance(agent_id, str) and isinstance(identifier, str):
            found[agent_id] = AgentPackage(
                agent_id, identifier, spec_file.parent, str(spec.get("type", ""))
            )
    return found


def _import(package: AgentPackage) -> ModuleType:
    loaded = sys.modules.get(package.identifier)
    if loaded is not None:
        return loaded
    if importlib.util.find_spec(package.identifier) is not None:  # installed with pip
        return importlib.import_module(package.identifier)
    spec = importlib.util.spec_from_file_location(
        package.identifier,
        package.folder / "__init__.py",
        submodule_search_locations=[str(package.folder)],
    )
    if spec is None or spec.loader is None:
        raise PackageError(f"{package.folder}: not an importable package")
    module = importlib.util.module_from_spec(spec)
    sys.modules[package.identifier] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[package.identifier]
        raise
    return module


@dataclass(frozen=True)
class PackageInfo:
    """What a package's spec.yaml says about routing to it."""

    id: str
    """Framework id (``pws-validation``)."""
    identifier: str
    """Package folder and Python name (``pws_validation``)."""
    min_clarity: float
    """Overall clarity the agent needs to receive a problem."""
    can_delegate_to: tuple[str, ...]
    """Frameworks the agent itself may delegate to."""


def _info(spec: Mapping[str, Any]) -> PackageInfo:
    handoff = spec.get("handoff") or {}
    receives = handoff.get("receives") or {}
    routing = handoff.get("routing") or {}
    return PackageInfo(
        id=str(spec["id"]),
        identifier=str(spec["identifier"]),
        min_clarity=float(receives.get("min_clarity", MIN_CLARITY)),
        can_delegate_to=tuple(routing.get("can_delegate_to") or ()),
    )


class PackageFolder:
    """The packages under ``folder`` by framework id; calling it with an id makes that agent.

    ``make`` builds the agent from its class (default: ``cls()``); tests pass one
    that gives each agent a scripted model. Packages are imported under a module
    name private to the folder, so two folders holding a package of the same
    name (the committed one and a fresh build) never mix; that is the difference
    from :func:`agent_class`, which imports a project's packages by their own name.
    """

    def __init__(
        self,
        folder: str | Path,
        make: Callable[[type[MindrianAgent]], object] | None = None,
    ) -> None:
        self.folder = Path(folder).resolve()
        """Where the packages are."""
        self._make = make if make is not None else (lambda cls: cls())
        digest = hashlib.sha256(str(self.folder).encode("utf-8")).hexdigest()[:12]
        self._prefix = f"_mindrian_packages_{digest}_"

    @cached_property
    def infos(self) -> Mapping[str, PackageInfo]:
        """Every package's routing facts, by framework id."""
        found: dict[str, PackageInfo] = {}
        for spec_file in sorted(self.folder.glob("*/spec.yaml")):
            spec = load_yaml(spec_file.read_text(encoding="utf-8"))
            if isinstance(spec, Mapping) and "id" in spec and "identifier" in spec:
                info = _info(spec)
                found[info.id] = info
        return found

    def min_clarity(self) -> dict[str, float]:
        """The clarity each framework needs, by id."""
        return {i: info.min_clarity for i, info in self.infos.items()}

    def agent_class(self, framework_id: str) -> type[MindrianAgent] | None:
        """The agent class of a framework's package, imported on first use; None if absent."""
        from mindrian.agents.base import MindrianAgent

        info = self.infos.get(framework_id)
        if info is None:
            return None
        module = self._module(info.identifier)
        classes = [
            value
            for name in getattr(module, "__all__", ())
            if isinstance(value := getattr(module, name, None), type)
            and issubclass(value, MindrianAgent)
        ]
        if len(classes) != 1:
            raise LookupError(
                f"package {info.identifier} in {self.folder} must export one agent class, "
                f"found {len(classes)}"
            )
        return classes[0]

    def __call__(self, framework_id: str) -> object | None:
        """A new agent for ``framework_id``, or None when no package provides it."""
        cls = self.agent_class(framework_id)
        return None if cls is None else self._make(cls)

    def _module(self, identifier: str) -> ModuleType:
        name = self._prefix + identifier
        loaded = sys.modules.get(name)
        if loaded is not None:
            return loaded
        package_dir = self.folder / identifier
        spec = importlib.util.spec_from_file_location(
            name, package_dir / "__init__.py", submodule_search_locations=[str(package_dir)]
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import the package in {package_dir}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return module
