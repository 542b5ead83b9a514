"""The one exception the registry raises for database trouble."""

from __future__ import annotations

__all__ = ["GraphError"]


class GraphError(RuntimeError):
    """The registry database is unreachable, refused us, or failed a statement.

    Messages name the database (a Neo4j URI with any password redacted, or the
    embedded file) and never contain a password.
    """
