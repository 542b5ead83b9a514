"""The compiler's own dependencies, the ``build`` extra, asked for by the commands that use them.

``pip install mindrian`` installs the runtime and the command line around it (``--help``,
``--version``, ``run``, ``serve``, ``select``, ``explain``, ``diff``, ``graph``, ``workflow``,
``init``); the commands that compile (``build``, ``check``, ``validate``, ``fmt``, ``register``,
``new``) also need ``pip install 'mindrian[build]'``. Each of those asks here first, so a
missing extra is one usage error naming the command and what to install, before any work and
before ``check`` could mistake the import failure for a skill that no longer builds.
"""

from __future__ import annotations

from importlib.util import find_spec

from builder.pipeline.errors import UsageError

__all__ = ["BUILD_MODULES", "require_build_extra"]

#: Top-level modules of the ``build`` extra's distributions (pyproject.toml), Typer aside: the
#: command line itself is a runtime dependency.
BUILD_MODULES = ("jinja2", "ruamel", "black", "copier", "packaging")
#: The registry code of this refusal (builder.pipeline.codes).
_MISSING_EXTRA = "U040"


def require_build_extra(command: str) -> None:
    """Raise a U040 :class:`UsageError` when ``mindrian COMMAND`` cannot run for want of the
    ``build`` extra; return quietly when every module of it is installed."""
    missing = [name for name in BUILD_MODULES if find_spec(name) is None]
    if missing:
        raise UsageError(
            f"mindrian {command} needs the compiler's dependencies (missing: "
            f"{', '.join(missing)}); install them with: pip install 'mindrian[build]'",
            code=_MISSING_EXTRA,
        )
