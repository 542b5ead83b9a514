"""``python -m mindrian.mcp [--registry PATH]``: the project's MCP server over stdio.

What ``mindrian mcp`` serves (:mod:`mindrian.mcp.command`), without the
command line's other options, for agents that start it with only the runtime
installed. The registry is ``--registry``, else ``$MINDRIAN_REGISTRY``, else Neo4j
when ``NEO4J_URI`` is set (with ``NEO4J_USERNAME``, ``NEO4J_PASSWORD`` and an
optional ``NEO4J_DATABASE``), else the project's embedded database, else its
``generated/registry.yaml``. The project is found from its root (the nearest ``pyproject.toml``
with ``[tool.mindrian]`` above the working directory, else above this installed
package), never by paths relative to the working directory, so an agent started
from any folder of the project finds the same registry.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from mindrian.mcp.command import REGISTRY_ENV, McpConfig, McpSetupError, run_mcp
from mindrian.project import ProjectPaths, find_project_root


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, open the registry, serve until stdin closes."""
    parser = argparse.ArgumentParser(prog="python -m mindrian.mcp", description=__doc__)
    parser.add_argument(
        "--registry",
        default=os.environ.get(REGISTRY_ENV) or None,
        help=(
            "embedded registry file, or a registry.yaml (loaded in memory); default "
            f"${REGISTRY_ENV}, else Neo4j with NEO4J_URI, else the project's registry"
        ),
    )
    args = parser.parse_args(argv)
    root = find_project_root(Path.cwd()) or find_project_root(Path(__file__).resolve().parent)
    project = ProjectPaths(root) if root is not None else None
    try:
        run_mcp(McpConfig(project, registry=args.registry))
    except McpSetupError as error:
        parser.exit(1, f"{parser.prog}: {error}\n")


if __name__ == "__main__":
    main()
