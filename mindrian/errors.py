"""The root of every public exception the mindrian runtime raises."""

from __future__ import annotations

__all__ = ["MindrianError"]


class MindrianError(Exception):
    """Base of every public exception of the ``mindrian`` package.

    A caller of ``mindrian.run`` or ``mindrian.serve`` catches this to catch any
    mindrian failure. Subclasses keep a more specific built-in base (``ValueError``,
    ``LookupError``, ``RuntimeError``) as a second parent where callers rely on it.
    """
