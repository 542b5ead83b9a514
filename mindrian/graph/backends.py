"""The registry backends: one record each, read by :func:`~mindrian.graph.open_registry`, the
builder's registration (phase 7) and the commands that read the registry.

A registry named by no URI is the embedded LadybugDB file (or one in memory); a URI names a
served one, the backend whose record lists its scheme. Adding a backend is its module, its
record here, its place in the contract tests' ``engine`` fixture and, when it needs a driver,
the dependency (ARCHITECTURE.md, "Adding a registry backend").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from mindrian.graph.base import Registry
from mindrian.graph.errors import GraphError

__all__ = [
    "BACKENDS",
    "EMBEDDED",
    "NEO4J",
    "OpenRequest",
    "RegistryBackend",
    "SchemeClaim",
    "backend_for",
    "claim_of",
]


@dataclass(frozen=True)
class OpenRequest:
    """What a caller asks of a registry; each backend reads the part that concerns it."""

    uri: str | None
    """The served registry's URI; None for the embedded file."""
    path: str | Path | None
    """The embedded file (None: in memory); unused by a served backend."""
    user: str | None
    """The user to connect as; None: the backend's environment variable."""
    password: str | None
    """The password; None: the backend's environment variable."""
    database: str | None
    """The database on the server; None: the backend's environment variable, else its default."""
    env: Mapping[str, str]
    """The environment credentials are read from."""
    read_only: bool
    """Open for reading only (creating nothing, taking no writer's lock)."""
    exclusive: bool
    """Hold the registry's writer lock until closed."""


@dataclass(frozen=True)
class RegistryBackend:
    """One way of keeping the framework registry."""

    name: str
    """Its name in a build's registration target (phase 7's digest and checkpoint)."""
    schemes: tuple[str, ...]
    """The URI schemes it serves; empty for the embedded file, which is named by a path."""
    open: Callable[[OpenRequest], Registry]
    """Opens (connects to) the registry a request names."""


def _embedded(request: OpenRequest) -> Registry:
    from mindrian.graph.embedded import EmbeddedRegistry

    return EmbeddedRegistry(request.path, read_only=request.read_only)


def _neo4j(request: OpenRequest) -> Registry:
    from mindrian.graph.neo4j_registry import Neo4jRegistry

    assert request.uri is not None  # backend_for gives a served backend a URI only
    _refuse_unserved_scheme(request.uri)
    environ = request.env
    user = request.user or environ.get("NEO4J_USERNAME")
    password = request.password if request.password is not None else environ.get("NEO4J_PASSWORD")
    if not user or password is None:
        raise GraphError("a Neo4j URI is set but NEO4J_USERNAME or NEO4J_PASSWORD is missing")
    return Neo4jRegistry(
        request.uri,
        user,
        password,
        request.database or environ.get("NEO4J_DATABASE") or None,
        read_only=request.read_only,
        exclusive=request.exclusive,
    )


def _refuse_unserved_scheme(uri: str) -> None:
    """A URI whose scheme no backend serves is refused by name: the driver would take
    ``http``/``https`` for its preview HTTP API and fail on a missing module."""
    claim = claim_of(uri)
    if not claim.scheme or claim.backend is not None:
        return  # served, or no scheme to name (the driver names what is wrong)
    from mindrian.graph.neo4j_registry import redact_uri

    served = [s for backend in BACKENDS for s in backend.schemes]
    raise GraphError(
        f"registry URI {redact_uri(uri)}: no registry backend serves {claim.scheme!r} URIs "
        f"(use one of {', '.join(served)}; Neo4j's Bolt port, not its HTTP one)"
    )


#: The embedded LadybugDB file (the default; in memory without a path).
EMBEDDED = RegistryBackend(name="embedded", schemes=(), open=_embedded)
#: Neo4j on the official driver; a URI no backend claims reaches it too and is refused there
#: by its scheme.
NEO4J = RegistryBackend(
    name="neo4j",
    schemes=("neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc"),
    open=_neo4j,
)

#: Every backend; a URI goes to the first one listing its scheme.
BACKENDS: tuple[RegistryBackend, ...] = (EMBEDDED, NEO4J)


@dataclass(frozen=True)
class SchemeClaim:
    """What a registry URI's scheme says of the backend serving it."""

    scheme: str
    """The scheme, lower-cased; empty when the URI has none or does not parse (the driver then
    names what is wrong with it)."""
    backend: RegistryBackend | None
    """The first backend of :data:`BACKENDS` listing the scheme; None when none lists it."""


def claim_of(uri: str) -> SchemeClaim:
    """The one reading of a URI's scheme: which backend it goes to (:func:`backend_for`) and
    whether it is refused as a scheme no backend serves."""
    try:
        scheme = urlsplit(uri).scheme.lower()
    except ValueError:
        scheme = ""
    return SchemeClaim(scheme, next((b for b in BACKENDS if scheme in b.schemes), None))


def backend_for(uri: str | None) -> RegistryBackend:
    """The backend of a registry at ``uri``: the embedded file for None, else the backend
    listing the URI's scheme (Neo4j for a scheme none lists, which refuses it when opening)."""
    if uri is None:
        return EMBEDDED
    return claim_of(uri).backend or NEO4J
