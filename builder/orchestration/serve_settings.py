"""What ``[tool.mindrian.serve]`` says of ``mindrian serve``, apart from the build's
configuration (:mod:`builder.orchestration.project`, which checks the whole table) so that
reading a skill's configuration never defines the server's record."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from builder.orchestration.project import mindrian_table

__all__ = ["ServeSettings", "load_serve_settings"]


@dataclass(frozen=True)
class ServeSettings:
    """What ``[tool.mindrian.serve]`` says of ``mindrian serve``; a switch given overrides it."""

    host_tools: bool = False
    """``host-tools``: give served agents the host tools their packages grant (``--host-tools``,
    ``--no-host-tools``)."""


def load_serve_settings(root: Path) -> ServeSettings:
    """Read ``[tool.mindrian.serve]`` from ``root/pyproject.toml`` (the defaults without one);
    raises :class:`~builder.pipeline.errors.UsageError` (U042) for a file or table that cannot
    be used."""
    pyproject = root / "pyproject.toml"
    table = mindrian_table(pyproject) if pyproject.is_file() else {}
    serve = table.get("serve", {})
    return ServeSettings(host_tools=serve.get("host-tools", False))
