"""The ``mindrian`` command line: a thin layer over the library.

``main`` (:func:`builder.cli.app.main`) is imported on first use, so the script's entry point
(:mod:`builder.entry`) can use a light module of this package (``extra``) without importing
the application."""

from __future__ import annotations

from typing import Any

__all__ = ["main"]


def __getattr__(name: str) -> Any:
    if name == "main":
        from builder.cli.app import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
