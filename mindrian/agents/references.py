"""Reference elements on demand (seed 004, tier 3): ``read_reference(name)``.

A skill's ``references/*.md`` files are not pasted into the instructions; the
instructions list their names with a one-line summary, and the agent reads one
when it needs it. The package keeps each file once, byte-identical, in its ``skill/``
folder; ``spec.yaml`` names it (``instructions.elements``: name, path, digest), and the
tool reads it from there at the call, only by element name: anything that looks like a
path is refused before any lookup, and a spec whose path would leave the skill folder is
refused when the package loads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from agno.tools.function import Function

__all__ = ["READ_REFERENCE", "read_reference_tool", "reference_elements"]

#: Name of the tool, as the model sees it.
READ_REFERENCE = "read_reference"

_PATH_LIKE = re.compile(r"[/\\]|\.\.|^\.|^~|:")
#: The tool over each set of elements ((name, file) pairs in name order). A tool never changes and
#: Agno gives each run a copy of a Function of its own, so the agents of a package share one:
#: making it (Agno reads the function's signature and docstring into a schema) took 1.6 ms of
#: every agent's first run.
_TOOLS: dict[tuple[tuple[str, Path], ...], Function] = {}


def reference_elements(spec: Mapping[str, Any], skill_dir: Path) -> dict[str, Path]:
    """Element name -> its file in ``skill_dir`` (the package's copy of the skill's folder),
    from a package's spec (``SPEC["instructions"]["elements"]``); ValueError for a path that
    would leave that folder (a spec no build wrote)."""
    elements = (spec.get("instructions") or {}).get("elements") or ()
    found = {}
    for element in elements:
        path = PurePosixPath(str(element["path"]))
        if path.is_absolute() or ".." in path.parts or not path.parts:
            raise ValueError(
                f"reference {element['name']!r}: {str(path)!r} leaves the skill folder"
            )
        found[str(element["name"])] = skill_dir.joinpath(*path.parts)
    return found


def read_reference_tool(elements: Mapping[str, Path]) -> Function:
    """The ``read_reference`` tool over ``elements`` (a copy is kept), one per set of elements."""
    key = tuple(sorted(elements.items()))
    tool = _TOOLS.get(key)
    if tool is None:
        tool = _TOOLS[key] = _new_tool(dict(key))
    return tool


def _new_tool(known: Mapping[str, Path]) -> Function:
    """A new ``read_reference`` tool over ``known`` (element name -> its file)."""
    listing = ", ".join(sorted(known))

    def read_reference(name: str) -> str:
        """Read one reference element of your instructions, by the name they list.

        Args:
            name: The element's name, exactly as listed (not a file path).
        """
        if not isinstance(name, str) or _PATH_LIKE.search(name):
            return f"Refused: {name!r} is not a reference name. Ask by name: {listing}."
        file = known.get(name.strip())
        if file is None:
            return f"No reference named {name!r}. Available: {listing}."
        return _read(name.strip(), file)

    return Function.from_callable(read_reference)


def _read(name: str, file: Path) -> str:
    """The text of ``file``, or why it cannot be read (said to the model, not raised: the run
    goes on without it)."""
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else str(error)
        return f"Reference {name!r} could not be read from the package ({file.name}): {reason}"
