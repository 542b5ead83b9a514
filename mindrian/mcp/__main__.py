"""``python -m mindrian.mcp [--registry PATH]``: serve the registry over stdio.

The registry is ``--registry``, else ``$MINDRIAN_REGISTRY``, else Neo4j when ``NEO4J_URI`` is
set (with ``NEO4J_USERNAME``, ``NEO4J_PASSWORD`` and an optional ``NEO4J_DATABASE``), else the
project's embedded database, else its ``generated/registry.yaml``. The project is found
from its root (the nearest ``pyproject.toml`` with ``[tool.mindrian]`` above the
working directory, else above this installed package), never by paths relative
to the working directory, so an agent started from any folder of the project
finds the same registry.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from mindrian.graph import GraphError, Registry, open_registry
from mindrian.mcp.server import build_server, open_source_registry
from mindrian.project import (
    DEFAULT_OUT_DIR,
    REGISTRY_DB_NAME,
    REGISTRY_YAML_NAME,
    STATE_DIR_NAME,
    ProjectPaths,
    find_project_root,
)

#: Environment variable naming the registry to serve (a database file or a registry.yaml).
REGISTRY_ENV = "MINDRIAN_REGISTRY"
#: The project's embedded database as help and errors name it (relative to the project root).
PROJECT_DATABASE = Path(STATE_DIR_NAME) / REGISTRY_DB_NAME
#: The committed export, served from memory when no database has been built yet.
FALLBACK_YAML = Path(DEFAULT_OUT_DIR) / REGISTRY_YAML_NAME


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, open the registry, serve until stdin closes."""
    parser = argparse.ArgumentParser(prog="python -m mindrian.mcp", description=__doc__)
    parser.add_argument(
        "--registry",
        default=os.environ.get(REGISTRY_ENV) or None,
        help=(
            "embedded registry file, or a registry.yaml (loaded in memory); default "
            f"${REGISTRY_ENV}, else Neo4j at $NEO4J_URI, else {PROJECT_DATABASE}, "
            f"else {FALLBACK_YAML}"
        ),
    )
    args = parser.parse_args(argv)
    try:
        registry = _open(args.registry)
    except GraphError as error:
        parser.exit(1, f"{parser.prog}: {error}\n")
    if registry is None:
        parser.exit(
            1,
            f"{parser.prog}: no registry: no mindrian project with {PROJECT_DATABASE} or "
            f"{FALLBACK_YAML} above the working directory or this package; "
            f"pass --registry or set {REGISTRY_ENV} or NEO4J_URI\n",
        )
    with registry:
        build_server(registry).run("stdio")


def _open(explicit: str | None) -> Registry | None:
    """The registry to serve (see the module docstring for the order); None when there is none."""
    if explicit:
        return open_source_registry(explicit)
    if os.environ.get("NEO4J_URI"):
        return open_registry(None, None, read_only=True)
    source = _default_source()
    return None if source is None else open_source_registry(source)


def _default_source() -> Path | None:
    """The project's embedded registry, else its committed export, else nothing."""
    root = find_project_root(Path.cwd()) or find_project_root(Path(__file__).resolve().parent)
    if root is None:
        return None
    project = ProjectPaths(root)
    for candidate in (project.embedded_registry, project.registry_yaml):
        if candidate.exists():
            return candidate
    return None


if __name__ == "__main__":
    main()
