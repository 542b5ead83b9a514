"""Files the compiler ships besides its modules, found through :mod:`importlib.resources`.

The repository keeps the Jinja and copier templates in its top-level ``templates/`` folder;
``setup.py`` maps that folder to ``builder/_templates`` in every wheel and sdist, so an installed
mindrian finds them inside its own package, in any working directory. An editable install of
the checkout imports ``builder`` from the source tree, which has no ``_templates``: there the
templates are the checkout's own folder next to the package.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["templates_root"]

#: The folder name the templates have inside an installed ``builder`` package.
_SHIPPED = "_templates"


def templates_root() -> Path:
    """The folder holding ``agent/`` (package templates) and ``skill/`` (the copier scaffold)."""
    package = Path(str(resources.files("builder")))
    shipped = package / _SHIPPED
    if shipped.is_dir():
        return shipped
    # An editable install or a run from the checkout: the repository layout.
    return package.parent / "templates"
