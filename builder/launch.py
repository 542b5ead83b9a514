"""The ``mindrian`` script: the command line, or a clear message when the compiler's extra is
missing.

``pip install mindrian`` installs the runtime generated agents import; the compiler's own
dependencies come with ``pip install 'mindrian[build]'``. Without them the script says so
instead of ending in an import traceback.
"""

from __future__ import annotations

import sys
from importlib.util import find_spec

__all__ = ["BUILD_MODULES", "main"]

#: Top-level modules of the ``build`` extra's distributions (pyproject.toml).
BUILD_MODULES = ("typer", "jinja2", "ruamel", "black", "copier", "packaging")
#: The registry code of this refusal (builder.pipeline.codes).
_MISSING_EXTRA = "U040"


def main() -> int:
    """Run the command line; exit status 2 when the ``build`` extra is not installed."""
    missing = [name for name in BUILD_MODULES if find_spec(name) is None]
    if missing:
        print(
            f"error[{_MISSING_EXTRA}]: the mindrian command line needs the compiler's dependencies "
            f"(missing: {', '.join(missing)}); install them with: pip install 'mindrian[build]'",
            file=sys.stderr,
        )
        return 2
    from builder.cli.app import main as cli_main

    return cli_main()
