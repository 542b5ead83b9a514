"""Phase 7, registration: put the framework in the registry, read it back, prove the package works.

The framework record comes from phase 5 (``GraphConfig.to_framework_record``)
and goes into the embedded registry (``<root>/.mindrian/registry.lbug``) or,
when ``--neo4j-uri``/``NEO4J_URI`` names one, into Neo4j. When the embedded
database does not exist yet but ``<out_dir>/registry.yaml`` does (a fresh
clone), the database is first rebuilt from the yaml so the other frameworks
are kept.

``registered`` holds when the node and relationships read back equal the
record. ``e2e_passes`` holds when :mod:`builder.probe.e2e`, run in a
subprocess by :mod:`builder.probe.runner`, imports the generated package and
gets a successful handoff from it with a scripted model, and the selection
query with the skill's own triggers ranks the framework in the top five. Only then is
``<out_dir>/registry.yaml`` rewritten (atomically, from the registry's sorted
export); on any failure the framework's previous registration is restored.
Registering the same record again changes nothing.

The phase is cached like the others: its digest covers the registry target and
the output folder, not the database's contents. ``mindrian register`` always
reruns it, which is how a deleted or foreign registry is brought back in sync.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import CheckResult, PhaseInput, PhaseResult
from builder.pipeline.errors import RegistrationError
from builder.probe.runner import ProbeResult, ProbeRunner, run_probe

__all__ = [
    "PHASE",
    "REGISTRY_YAML",
    "SELECT_TOP",
    "Registration",
    "RegistrationPhase",
    "RelationshipSummary",
    "SelectionSummary",
    "default_registry_path",
    "output_dir",
]

#: The framework must rank within this many results for its own triggers.
SELECT_TOP = 5
#: Name of the committed registry export inside the output folder.
REGISTRY_YAML = "registry.yaml"


@dataclass(frozen=True)
class RelationshipSummary:
    """One outgoing relationship of the framework as the registry holds it."""

    type: str
    """``CHAINS_TO`` or ``GOOD_FOR``."""
    target: str
    """Target framework id, or problem-type name."""
    value: float
    """The weight (CHAINS_TO) or confidence (GOOD_FOR)."""


@dataclass(frozen=True)
class SelectionSummary:
    """What the selection query returned for the framework's own triggers."""

    triggers: tuple[str, ...]
    """The triggers asked for (the skill's own)."""
    rank: int
    """1-based position of the framework in the result, 0 when absent."""
    score: float
    """Its score, 0.0 when absent."""
    returned: tuple[str, ...]
    """Ids of every framework returned, best first."""


@dataclass(frozen=True)
class Registration:
    """Phase 7: where the framework was registered and what the checks saw."""

    framework_id: str
    """The Framework node's id."""
    identifier: str
    """The generated package the end-to-end probe imported."""
    backend: str
    """``embedded`` or ``neo4j`` (never a URI or credentials)."""
    name: str
    """The node's ``name`` as read back."""
    type: str
    """The node's ``type`` as read back."""
    triggers: tuple[str, ...]
    """The node's triggers as read back."""
    problem_types: tuple[str, ...]
    """The node's problem types as read back."""
    relationships: tuple[RelationshipSummary, ...]
    """Outgoing relationships as read back, CHAINS_TO then GOOD_FOR, each sorted by target."""
    selection: SelectionSummary
    """The selection query's verdict."""
    e2e: str
    """One line from the end-to-end probe."""


def default_registry_path(root: str | Path) -> Path:
    """The embedded registry of a project: ``<root>/.mindrian/registry.lbug``."""
    return Path(root) / ".mindrian" / "registry.lbug"


def _graph_config(inputs: PhaseInput) -> Any:
    """Phase 5's GraphConfig, whether its output is the config itself or carries it."""
    value = inputs.previous.get("neo4j_schema")
    for candidate in (value, getattr(value, "graph", None)):
        if callable(getattr(candidate, "to_framework_record", None)):
            return candidate
    raise RegistrationError("phase 7 needs the GraphConfig of phase 5", code="R002")


def _identifier(inputs: PhaseInput) -> str:
    package = inputs.previous.get("code_generation")
    identifier = getattr(package, "identifier", None)
    if not isinstance(identifier, str) or not identifier:
        raise RegistrationError("phase 7 needs the package phase 6 generated", code="R003")
    return identifier


def _out_dir(inputs: PhaseInput) -> Path:
    return output_dir(inputs.config)


def output_dir(config: BuildConfig) -> Path:
    """The folder whose packages phase 7 probes and whose registry.yaml it rewrites."""
    return (Path(config.root) / config.out_dir).resolve()


def _relationships(record: Any) -> tuple[RelationshipSummary, ...]:
    chains = tuple(RelationshipSummary("CHAINS_TO", t, w) for t, w in record.chains_to)
    good_for = tuple(RelationshipSummary("GOOD_FOR", p, c) for p, c in record.good_for)
    return chains + good_for


def _selection(registry: Any, framework_id: str, triggers: tuple[str, ...]) -> SelectionSummary:
    found = registry.select(triggers, limit=SELECT_TOP) if triggers else ()
    ids = tuple(s.id for s in found)
    rank = ids.index(framework_id) + 1 if framework_id in ids else 0
    score = found[rank - 1].score if rank else 0.0
    return SelectionSummary(triggers=triggers, rank=rank, score=score, returned=ids)


def _e2e_check(selection: SelectionSummary, probe: ProbeResult) -> CheckResult:
    if not probe.success:
        return CheckResult("e2e_passes", False, f"end-to-end handoff failed: {probe.summary}")
    if not selection.triggers:
        return CheckResult(
            "e2e_passes",
            False,
            "the skill declares no triggers, so the selection query can never choose it",
        )
    if not selection.rank:
        shown = ", ".join(selection.returned) or "nothing"
        return CheckResult(
            "e2e_passes",
            False,
            f"selecting with its own triggers {list(selection.triggers)} returned {shown}, not the "
            f"framework (top {SELECT_TOP})",
        )
    return CheckResult(
        "e2e_passes",
        True,
        f"{probe.summary}; its own triggers select it at rank {selection.rank} of "
        f"{len(selection.returned)} (score {selection.score:g})",
    )


class RegistrationPhase:
    """Phase 7; the registry location, the environment and the probe are injectable."""

    name = "registration"
    number = 7
    checks = ("registered", "e2e_passes")
    output_type = Registration
    #: The end-to-end probe runs the whole runtime, not only what this module imports.
    code_packages = ("mindrian",)

    def __init__(
        self,
        registry_path: Path | None = None,
        *,
        env: Mapping[str, str] | None = None,
        probe: ProbeRunner = run_probe,
    ) -> None:
        """``registry_path`` None means the project's default; ``env`` replaces ``os.environ`` for
        NEO4J_*."""
        self.registry_path = registry_path
        self.env = env
        self.probe = probe

    def with_probe(self, probe: ProbeRunner) -> RegistrationPhase:
        """A copy of this phase (registry, environment) probing packages through ``probe``."""
        changed = copy.copy(self)
        changed.probe = probe
        return changed

    def _environ(self) -> Mapping[str, str]:
        return os.environ if self.env is None else self.env

    def _neo4j_uri(self, inputs: PhaseInput) -> str | None:
        return inputs.config.neo4j_uri or self._environ().get("NEO4J_URI") or None

    def _db_path(self, inputs: PhaseInput) -> Path:
        return (self.registry_path or default_registry_path(inputs.config.root)).resolve()

    def extra_digest(self, inputs: PhaseInput) -> dict[str, str]:
        """Where the framework goes: registering elsewhere must run the phase again."""
        from mindrian.graph import redact_uri

        uri = self._neo4j_uri(inputs)
        target = (
            f"neo4j {redact_uri(uri)}" if uri else f"embedded {self._db_path(inputs).as_posix()}"
        )
        return {"registry": target, "out_dir": _out_dir(inputs).as_posix()}

    def _open(self, inputs: PhaseInput) -> Any:
        from builder.graph.commands import build_registry_from_yaml
        from mindrian.graph import GraphError, open_registry

        uri = self._neo4j_uri(inputs)
        db = self._db_path(inputs)
        yaml_path = _out_dir(inputs) / REGISTRY_YAML
        try:
            if uri is None and not db.exists() and yaml_path.is_file():
                build_registry_from_yaml(yaml_path, db)
            return open_registry(uri, db, env=self._environ())
        except GraphError as exc:
            raise RegistrationError(str(exc), code="R004") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise RegistrationError(
                f"{yaml_path.as_posix()} cannot rebuild the registry: {exc}", code="R005"
            ) from None

    def run(self, inputs: PhaseInput) -> PhaseResult[Registration]:
        from mindrian.graph import GraphError, write_registry_yaml

        record = _graph_config(inputs).to_framework_record()
        identifier = _identifier(inputs)
        out_dir = _out_dir(inputs)
        backend = "neo4j" if self._neo4j_uri(inputs) else "embedded"
        with self._open(inputs) as registry:
            try:
                before = registry.get(record.id)
                registry.register(record)
                stored = registry.get(record.id)
                selection = _selection(registry, record.id, record.triggers)
            except GraphError as exc:
                raise RegistrationError(str(exc), code="R006") from None
            registered = _read_back_check(record, stored)
            e2e = _e2e_check(selection, self.probe(out_dir, identifier))
            if registered.passed and e2e.passed:
                write_registry_yaml(registry, out_dir / REGISTRY_YAML)
            else:
                _restore(registry, record.id, before)
        shown = stored or record
        output = Registration(
            framework_id=record.id,
            identifier=identifier,
            backend=backend,
            name=shown.name,
            type=shown.type,
            triggers=shown.triggers,
            problem_types=shown.problem_types,
            relationships=_relationships(shown),
            selection=selection,
            e2e=e2e.reason,
        )
        return PhaseResult(output=output, checks=(registered, e2e))


def _read_back_check(record: Any, stored: Any) -> CheckResult:
    if stored is None:
        return CheckResult(
            "registered",
            False,
            f"framework {record.id!r} is not in the registry after registering it",
        )
    if stored != record:
        differ = [k for k, v in record.to_plain().items() if stored.to_plain().get(k) != v]
        return CheckResult(
            "registered", False, f"framework {record.id!r} reads back different {', '.join(differ)}"
        )
    return CheckResult(
        "registered",
        True,
        f"framework {record.id!r} reads back equal: {len(record.triggers)} trigger(s), "
        f"{len(record.chains_to)} CHAINS_TO, {len(record.good_for)} GOOD_FOR",
    )


def _restore(registry: Any, framework_id: str, before: Any) -> None:
    """Put back what the registry held for the framework before this run."""
    if before is None:
        registry.unregister(framework_id)
    else:
        registry.register(before)


#: The phase object the runner loads.
PHASE = RegistrationPhase()
