"""The registry engines every contract test runs on: the embedded file and a real Neo4j."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from graph_factories import OpenRegistry

from mindrian.graph import EmbeddedRegistry, Neo4jRegistry, Registry
from mindrian.testing.neo4j_server import Neo4jServer


@pytest.fixture(params=["embedded", "neo4j"])
def engine(request: pytest.FixtureRequest) -> Iterator[OpenRegistry]:
    """A factory of registries on each engine, empty at the start of the test."""
    opened: list[Registry] = []
    if request.param == "neo4j":
        server: Neo4jServer = request.getfixturevalue("neo4j_server")

        def make() -> Registry:
            opened.append(Neo4jRegistry(server.uri, server.user, server.password))
            return opened[-1]

    else:

        def make() -> Registry:
            opened.append(EmbeddedRegistry(None))
            return opened[-1]

    yield make
    for registry in opened:
        registry.close()
