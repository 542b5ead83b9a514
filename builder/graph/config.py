"""``GraphConfig``: what phase 5 decides about an agent's place in the framework graph.

The graph schema (labels, properties, relationships, constraints), the values of
the agent's own Framework node and relationships, and the named queries that
register, select and read it. Query texts are the registry's fixed templates
(:mod:`mindrian.graph.queries`); every value from the skill lives in
``parameters`` only. Every class round-trips through ``builder.pipeline.serial``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mindrian.graph import FrameworkRecord
from mindrian.graph import queries as q

__all__ = [
    "DEFAULT_CHAIN_WEIGHT",
    "DEFAULT_GOOD_FOR_CONFIDENCE",
    "ChainEdge",
    "Constraint",
    "FrameworkNode",
    "GoodForEdge",
    "GraphConfig",
    "GraphQuery",
    "NodeSchema",
    "PropertySpec",
    "RelationshipSchema",
]

#: CHAINS_TO weight when a ``chains_to`` entry gives none: a neutral middle of the 0–1 range.
DEFAULT_CHAIN_WEIGHT = 0.5
#: GOOD_FOR confidence: ``problem_types`` lists carry no confidence, and the skill's
#: author declared the fit, so it is taken at full strength.
DEFAULT_GOOD_FOR_CONFIDENCE = 1.0


@dataclass(frozen=True)
class PropertySpec:
    """One property of a node or relationship type."""

    name: str
    """Property key."""
    type: str
    """Value type (``STRING``, ``LIST<STRING>``, ``FLOAT``, ``BOOLEAN``, ``DATETIME``)."""
    set_by: str
    """Who writes it: ``skill`` (a parameter from SKILL.md), ``registry`` (its bookkeeping),
    ``database`` (its clock) or ``usage`` (the runtime, when usage tracking is on)."""


@dataclass(frozen=True)
class NodeSchema:
    """A node label and its properties."""

    label: str
    """Node label."""
    key: str
    """Property that identifies a node (unique)."""
    properties: tuple[PropertySpec, ...]
    """Every property, key first."""


@dataclass(frozen=True)
class RelationshipSchema:
    """A relationship type, its end labels and its properties."""

    type: str
    """Relationship type."""
    start: str
    """Label of the start node."""
    end: str
    """Label of the end node."""
    properties: tuple[PropertySpec, ...]
    """Relationship properties."""


@dataclass(frozen=True)
class Constraint:
    """A uniqueness constraint and the query that creates it."""

    label: str
    """Constrained label."""
    property: str
    """Property that must be unique."""
    query: str
    """Name of the :class:`GraphQuery` that creates it."""


@dataclass(frozen=True)
class FrameworkNode:
    """Property values of the agent's Framework node (``updated_at`` is set by the database)."""

    id: str
    """Normalised agent id, the node key."""
    name: str
    """Display name as written."""
    type: str
    """Agent type."""
    description: str
    """Description as written."""
    triggers: tuple[str, ...]
    """Words that select it, in source order."""
    problem_types: tuple[str, ...]
    """Problem types it addresses, in source order."""
    version: str
    """Skill version as written."""
    source_digest: str
    """Digest of SKILL.md and its folder."""
    body: str = ""
    """The body's prose for ranking (:func:`mindrian.routing.text.body_prose`); kept out of the
    parameters, so out of registration.cypher, and registered apart."""


@dataclass(frozen=True)
class ChainEdge:
    """A ``CHAINS_TO {weight}`` relationship to another framework."""

    target: str
    """Id of the target framework (may not be registered yet)."""
    weight: float
    """Edge weight 0–1."""
    weight_source: str
    """``skill`` when ``chains_to`` gave the weight, ``default`` otherwise."""
    line: int = 0
    """1-based SKILL.md line of the ``chains_to`` entry."""


@dataclass(frozen=True)
class GoodForEdge:
    """A ``GOOD_FOR {confidence}`` relationship to a ``ProblemType {name}`` node."""

    problem_type: str
    """Name of the problem type."""
    confidence: float
    """Fit confidence 0–1."""


@dataclass(frozen=True)
class GraphQuery:
    """A named Cypher template of the registry and the parameters it takes."""

    name: str
    """Registry query name (``register_frameworks``…)."""
    role: str
    """What it is for: ``schema``, ``register_node``, ``replace_relationships``, ``select`` or
    ``get``."""
    text: str
    """The fixed Cypher text (Neo4j dialect); never contains skill text."""
    params: tuple[str, ...]
    """Every ``$name`` the text uses."""
    runtime_params: tuple[str, ...] = ()
    """Parameters only the registry can fill when it runs (from what the graph then holds)."""


@dataclass(frozen=True)
class GraphConfig:
    """Phase 5: the agent's Framework node, its relationships and the Cypher that manages them."""

    framework: FrameworkNode
    """Values of the Framework node."""
    chains_to: tuple[ChainEdge, ...]
    """Outgoing CHAINS_TO, in source order."""
    good_for: tuple[GoodForEdge, ...]
    """Outgoing GOOD_FOR, one per distinct problem type, in source order."""
    nodes: tuple[NodeSchema, ...]
    """Node labels of the registry graph."""
    relationships: tuple[RelationshipSchema, ...]
    """Relationship types of the registry graph."""
    constraints: tuple[Constraint, ...]
    """Uniqueness constraints."""
    queries: tuple[GraphQuery, ...]
    """Named queries, in execution order within each role."""
    parameters: Mapping[str, Mapping[str, Any]]
    """Query name to its parameter values (plain data); the only place skill values appear."""
    validator: str = ""
    """Which front end checked the queries (the Neo4j linter package, or the embedded engine)."""
    decisions: tuple[str, ...] = ()
    """Why each default was chosen, one sentence each."""

    def query(self, name: str) -> GraphQuery:
        """The query with this name (``KeyError`` if absent)."""
        for query in self.queries:
            if query.name == name:
                return query
        raise KeyError(name)

    def vocabulary(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """Labels, relationship types and property keys the queries may use.

        Property keys include the keys of the UNWIND row maps, which a linter
        cannot tell from stored properties.
        """
        labels = tuple(n.label for n in self.nodes)
        types = tuple(r.type for r in self.relationships)
        keys = [p.name for n in self.nodes for p in n.properties]
        keys += [p.name for r in self.relationships for p in r.properties]
        keys += list(q.ROW_KEYS)
        return labels, types, tuple(dict.fromkeys(keys))

    def to_framework_record(self) -> FrameworkRecord:
        """The registry record phase 7 registers."""
        f = self.framework
        return FrameworkRecord(
            id=f.id,
            name=f.name,
            type=f.type,
            description=f.description,
            triggers=f.triggers,
            problem_types=f.problem_types,
            version=f.version,
            chains_to=tuple((c.target, c.weight) for c in self.chains_to),
            good_for=tuple((g.problem_type, g.confidence) for g in self.good_for),
            body=f.body,
        )
