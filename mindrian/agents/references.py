"""Reference elements on demand (seed 004, tier 3): ``read_reference(name)``.

A skill's ``references/*.md`` files are not pasted into the instructions; the
instructions list their names with a one-line summary, and the agent reads one
when it needs it. The texts come from the package's own ``spec.yaml``, so the
tool reads nothing but the package's data, and only by element name: anything
that looks like a path is refused before any lookup.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agno.tools.function import Function

__all__ = ["READ_REFERENCE", "read_reference_tool", "reference_elements"]

#: Name of the tool, as the model sees it.
READ_REFERENCE = "read_reference"

_PATH_LIKE = re.compile(r"[/\\]|\.\.|^\.|^~|:")


def reference_elements(spec: Mapping[str, Any]) -> dict[str, str]:
    """Element name -> text, from a package's spec (``SPEC["instructions"]["elements"]``)."""
    elements = (spec.get("instructions") or {}).get("elements") or ()
    return {str(e["name"]): str(e["text"]) for e in elements}


def read_reference_tool(elements: Mapping[str, str]) -> Function:
    """The ``read_reference`` tool over ``elements`` (a copy is kept)."""
    known = dict(elements)
    listing = ", ".join(sorted(known))

    def read_reference(name: str) -> str:
        """Read one reference element of your instructions, by the name they list.

        Args:
            name: The element's name, exactly as listed (not a file path).
        """
        if not isinstance(name, str) or _PATH_LIKE.search(name):
            return f"Refused: {name!r} is not a reference name. Ask by name: {listing}."
        text = known.get(name.strip())
        if text is None:
            return f"No reference named {name!r}. Available: {listing}."
        return text

    return Function.from_callable(read_reference)
