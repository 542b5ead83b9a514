"""Choose the registry backend: the one a configured URI names, else the embedded file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from mindrian.graph.backends import OpenRequest, backend_for
from mindrian.graph.base import Registry
from mindrian.routing.semantic import configured_encoder

__all__ = ["open_registry"]


def open_registry(
    uri: str | None,
    path: str | Path | None,
    *,
    user: str | None = None,
    password: str | None = None,
    database: str | None = None,
    env: Mapping[str, str] | None = None,
    read_only: bool = False,
    exclusive: bool = False,
) -> Registry:
    """The served registry at ``uri`` (or ``NEO4J_URI``) if either is set, else embedded at
    ``path`` (in memory when None; no default, as for :class:`EmbeddedRegistry`).

    A URI goes to the backend whose record lists its scheme (:mod:`mindrian.graph.backends`;
    Neo4j for any other). Neo4j's credentials come from the arguments, else
    ``NEO4J_USERNAME``/``NEO4J_PASSWORD``/``NEO4J_DATABASE``; a Neo4j URI without a user or
    password is an error rather than a silent fallback to the embedded registry. ``read_only``
    opens either for reading only (a Neo4j one then creates no constraint); ``exclusive`` makes a
    Neo4j registry hold the writer lock until closed (an embedded writer always holds its file's).
    ``MINDRIAN_ENCODER`` names the sentence encoder its selections use
    (:func:`mindrian.routing.semantic.configured_encoder`).
    """
    environ = os.environ if env is None else env
    uri = uri or environ.get("NEO4J_URI") or None
    request = OpenRequest(uri, path, user, password, database, environ, read_only, exclusive)
    registry = backend_for(uri).open(request)
    registry.use_encoder(configured_encoder(environ))
    return registry
