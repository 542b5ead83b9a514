"""``python -m mindrian.mcp [--registry PATH]``: serve the registry over stdio."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from mindrian.graph import DEFAULT_EMBEDDED_PATH
from mindrian.mcp.server import build_server, open_source_registry


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, open the registry, serve until stdin closes."""
    parser = argparse.ArgumentParser(prog="python -m mindrian.mcp", description=__doc__)
    parser.add_argument(
        "--registry",
        default=str(DEFAULT_EMBEDDED_PATH),
        help="embedded registry file, or a registry.yaml (loaded in memory)",
    )
    args = parser.parse_args(argv)
    with open_source_registry(args.registry) as registry:
        build_server(registry).run("stdio")


if __name__ == "__main__":
    main()
