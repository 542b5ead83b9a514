"""The registry backends' records: which backend a URI names, and that a URI reaches it."""

from __future__ import annotations

import pytest

from mindrian.graph import EmbeddedRegistry, GraphError, Registry, open_registry
from mindrian.graph import backends as b


def test_no_uri_is_the_embedded_file() -> None:
    assert b.backend_for(None) is b.EMBEDDED


@pytest.mark.parametrize("scheme", b.NEO4J.schemes)
def test_each_neo4j_scheme_is_neo4j(scheme: str) -> None:
    assert b.backend_for(f"{scheme}://db.example:7687") is b.NEO4J
    assert b.backend_for(f"{scheme.upper()}://db.example:7687") is b.NEO4J


@pytest.mark.parametrize(
    ("uri", "scheme", "backend"),
    [
        ("bolt://db.example:7687", "bolt", b.NEO4J),
        ("NEO4J+S://db.example", "neo4j+s", b.NEO4J),
        ("https://db.example", "https", None),
        ("/var/registry", "", None),
        ("neo4j://[::1", "", None),  # does not parse: no scheme to claim or refuse
    ],
)
def test_one_reading_of_a_scheme_routes_and_refuses(
    uri: str, scheme: str, backend: b.RegistryBackend | None
) -> None:
    assert b.claim_of(uri) == b.SchemeClaim(scheme, backend)
    assert b.backend_for(uri) is (backend or b.NEO4J)


@pytest.mark.parametrize("scheme", ["ftp", "http", "https"])
def test_a_scheme_no_backend_serves_is_refused_by_name(scheme: str) -> None:
    # http(s) reached the driver's preview HTTP API, which failed on a missing module.
    assert b.backend_for(f"{scheme}://db.example") is b.NEO4J
    with pytest.raises(GraphError, match=f"no registry backend serves '{scheme}' URIs"):
        open_registry(f"{scheme}://127.0.0.1:1", None, user="neo4j", password="pw", env={})


def test_names_and_schemes_are_each_one_backend_s() -> None:
    names = [backend.name for backend in b.BACKENDS]
    schemes = [scheme for backend in b.BACKENDS for scheme in backend.schemes]
    assert len(set(names)) == len(names) and len(set(schemes)) == len(schemes)


def test_a_uri_reaches_the_backend_listing_its_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[b.OpenRequest] = []

    def open_memory(request: b.OpenRequest) -> Registry:
        asked.append(request)
        return EmbeddedRegistry(None)

    memory = b.RegistryBackend(name="memory", schemes=("memory",), open=open_memory)
    monkeypatch.setattr(b, "BACKENDS", (*b.BACKENDS, memory))
    with open_registry("memory://scratch", None, env={}, exclusive=True) as registry:
        assert isinstance(registry, EmbeddedRegistry)
    assert [(r.uri, r.read_only, r.exclusive) for r in asked] == [("memory://scratch", False, True)]
