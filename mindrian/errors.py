"""The root of every public exception mindrian raises, the runtime's and the compiler's
(``builder.pipeline.errors.CompilerError`` derives from it)."""

from __future__ import annotations

__all__ = ["MindrianError", "MindrianWarning"]


class MindrianError(Exception):
    """Base of every public exception of the ``mindrian`` package.

    A caller of ``mindrian.run`` or ``mindrian.serve`` catches this to catch any
    mindrian failure. Subclasses keep a more specific built-in base (``ValueError``,
    ``LookupError``, ``RuntimeError``) as a second parent where callers rely on it.
    """

    code: str | None = None
    """The registered code (builder/pipeline/codes.py) of an error that is the user's situation
    (a registry database refusing, a bad SKILL.md), which the command line reports as that code
    with exit status 1; None for the others, which reaching the command line are bugs."""


class MindrianWarning(MindrianError, UserWarning):
    """A problem the runtime reports with :func:`warnings.warn` rather than raises: the work goes
    on, but a user must hear of it. It carries what a located, coded line needs, so the command
    line prints it as ``PATH: warning[CODE]: message`` like the builder's own warnings; a library
    caller gets an ordinary Python warning whose text starts with the path.
    """

    code = "W000"
    """The registered code (builder/pipeline/codes.py) a subclass sets."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        """The file it is about, as the caller named it."""
        self.message = message
        """What is wrong, without the path."""
