"""Generated agent packages found on disk, loaded by framework id.

A folder such as ``generated/`` holds one package per skill; each has a
``spec.yaml`` naming its framework id, its Python identifier and its handoff
contract. :class:`GeneratedPackages` reads those specs (not the code) to know
which ids exist, and imports a package only when its agent is asked for, under
a module name unique to the folder so two folders holding the same package
(the committed one and a test's fresh build) never mix.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from mindrian.agents.base import MindrianAgent
from mindrian.handoff.context import MIN_CLARITY

__all__ = ["GeneratedPackages", "PackageInfo"]


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


class GeneratedPackages:
    """The packages under ``folder``; calling it with a framework id makes that agent.

    ``make`` builds the agent from its class (default: ``cls()``); tests pass one
    that gives each agent a scripted model.
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
            spec = yaml.safe_load(spec_file.read_text(encoding="utf-8"))
            if isinstance(spec, Mapping) and "id" in spec and "identifier" in spec:
                info = _info(spec)
                found[info.id] = info
        return found

    def min_clarity(self) -> dict[str, float]:
        """The clarity each framework needs, by id."""
        return {i: info.min_clarity for i, info in self.infos.items()}

    def agent_class(self, framework_id: str) -> type[MindrianAgent] | None:
        """The agent class of a framework's package, imported on first use; None if absent."""
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
