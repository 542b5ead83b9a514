"""The framework registry graph (seed 000 §5): Framework nodes, CHAINS_TO and GOOD_FOR.

Backends behind :class:`Registry`, one record each in :mod:`mindrian.graph.backends`: an
embedded LadybugDB file (default) and Neo4j (when ``NEO4J_URI`` is set). Both run the
parameterised texts of :mod:`mindrian.graph.queries`; :mod:`mindrian.graph.dialect` lists
where they differ.
"""

from mindrian.graph.backends import BACKENDS, RegistryBackend, backend_for
from mindrian.graph.base import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_SELECT_LIMIT,
    FrameworkRecord,
    GraphCounts,
    Registry,
    Selection,
    Usage,
)
from mindrian.graph.embedded import EmbeddedRegistry
from mindrian.graph.errors import GraphError
from mindrian.graph.factory import open_registry
from mindrian.graph.neo4j_registry import Neo4jRegistry, redact_uri
from mindrian.graph.registry_yaml import (
    RegistryLayout,
    RegistryYamlError,
    RoutingBodyWarning,
    dump_registry_yaml,
    laid_out_registry_yaml,
    load_registry_yaml,
    parse_registry_yaml,
    registry_from_yaml,
    splice_registry_yaml,
    with_routing_bodies,
    write_registry_yaml,
)

__all__ = [
    "BACKENDS",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_SELECT_LIMIT",
    "EmbeddedRegistry",
    "FrameworkRecord",
    "GraphCounts",
    "GraphError",
    "Neo4jRegistry",
    "Registry",
    "RegistryBackend",
    "RegistryLayout",
    "RegistryYamlError",
    "RoutingBodyWarning",
    "Selection",
    "Usage",
    "backend_for",
    "dump_registry_yaml",
    "laid_out_registry_yaml",
    "load_registry_yaml",
    "open_registry",
    "parse_registry_yaml",
    "redact_uri",
    "registry_from_yaml",
    "splice_registry_yaml",
    "with_routing_bodies",
    "write_registry_yaml",
]
