"""The ``mindrian`` command line: a thin layer over the library."""

from builder.cli.app import main

__all__ = ["main"]
