"""Choose the registry backend: Neo4j when a URI is configured, else the embedded file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from mindrian.graph.base import Registry
from mindrian.graph.embedded import EmbeddedRegistry
from mindrian.graph.errors import GraphError
from mindrian.graph.neo4j_registry import Neo4jRegistry

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
    """Neo4j at ``uri`` (or ``NEO4J_URI``) if either is set, else embedded at ``path``
    (in memory when None; no default, as for :class:`EmbeddedRegistry`).

    Credentials come from the arguments, else ``NEO4J_USERNAME``/``NEO4J_PASSWORD``/
    ``NEO4J_DATABASE``; a Neo4j URI without a user or password is an error rather than
    a silent fallback to the embedded registry. ``read_only`` opens either for reading only (a
    Neo4j one then creates no constraint); ``exclusive`` makes a Neo4j registry hold the writer
    lock until closed (an embedded writer always holds its file's).
    """
    environ = os.environ if env is None else env
    uri = uri or environ.get("NEO4J_URI") or None
    if uri is None:
        return EmbeddedRegistry(path, read_only=read_only)
    user = user or environ.get("NEO4J_USERNAME")
    password = password if password is not None else environ.get("NEO4J_PASSWORD")
    if not user or password is None:
        raise GraphError("a Neo4j URI is set but NEO4J_USERNAME or NEO4J_PASSWORD is missing")
    return Neo4jRegistry(
        uri,
        user,
        password,
        database or environ.get("NEO4J_DATABASE") or None,
        read_only=read_only,
        exclusive=exclusive,
    )
