"""The one exception the registry raises for database trouble."""

from __future__ import annotations

from mindrian.errors import MindrianError

__all__ = ["GraphError", "RegistryBusy", "RegistryDamaged"]


class GraphError(MindrianError, RuntimeError):
    """The registry database is unreachable, refused us, or failed a statement.

    Messages name the database (a Neo4j URI with any password redacted, or the
    embedded file) and never contain a password. ``code`` is the error code the
    command line reports.
    """

    code = "G010"


class RegistryDamaged(GraphError):
    """The embedded database is empty, truncated, from another program or lost frameworks.

    The fix is always the same: rebuild it from the committed registry.yaml
    (``mindrian graph rebuild``).
    """

    code = "G012"


class RegistryBusy(GraphError):
    """Another process held the embedded database's writer lock for longer than we wait."""

    code = "G013"
