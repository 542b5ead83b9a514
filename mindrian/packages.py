"""Generated agent packages loaded by agent id, from the project's ``generated/`` folder.

``generated/registry.yaml`` names the registered agents; each package's
``spec.yaml`` says which id it implements, so the folder is found without
guessing how the builder spells identifiers. A package is imported from its
folder under its own name (no ``PYTHONPATH``); when a package of that name is
already importable (``pip install generated/<pkg>``) that one is used.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import yaml

from mindrian.agents.base import MindrianAgent
from mindrian.graph.registry_yaml import load_registry_yaml
from mindrian.project import ProjectPaths

__all__ = ["AgentPackage", "PackageError", "agent_class", "registered_packages"]


class PackageError(LookupError):
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
        spec = yaml.safe_load(spec_file.read_text(encoding="utf-8")) or {}
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
