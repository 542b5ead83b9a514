"""GitHub workflow-command annotations of the located diagnostics the human format prints.

``--format github`` prints one ``::error file=…,line=…,col=…,title=CODE::message`` line per
problem (``::warning …`` per warning) on stdout, where a GitHub Actions runner turns it into an
annotation on that line of the pull request. The values are escaped as the runner's parser
expects (``%``, CR and LF everywhere; ``:`` and ``,`` also in properties), so a message can hold
any text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from builder.pipeline.errors import SourceLocation

__all__ = ["FORMATS", "Annotation", "github_line", "warning_annotation"]

#: The values of ``--format``: the human lines, GitHub annotations, or a JSON report.
FORMATS = ("human", "github", "json")

_DATA_ESCAPES = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
_PROPERTY_ESCAPES = (*_DATA_ESCAPES, (":", "%3A"), (",", "%2C"))


@dataclass(frozen=True)
class Annotation:
    """One finding as GitHub shows it."""

    code: str
    """The registry code (``S204``), the annotation's title."""
    message: str
    """What went wrong, as the human format says it."""
    location: SourceLocation | None = None
    """Where, when known: the file relative to the project root, 1-based line and column."""
    level: str = "error"
    """``error`` or ``warning``: the workflow command."""


#: A located, coded warning as the compiler prints it: ``PATH:LINE:COL: warning[W123]: …``.
_WARNING = re.compile(
    r"(?P<path>.+?)(?::(?P<line>\d+))?(?::(?P<column>\d+))?: warning\[(?P<code>[A-Z]\d{3})\]: "
    r"(?P<message>.*)",
    re.S,
)


def warning_annotation(line: str) -> Annotation | None:
    """The annotation of a warning printed as ``PATH:LINE:COL: warning[CODE]: message``; None
    for a line of another form."""
    found = _WARNING.fullmatch(line)
    if found is None:
        return None
    where = SourceLocation(found["path"], int(found["line"] or 0), int(found["column"] or 0))
    return Annotation(found["code"], found["message"], where, level="warning")


def _escape(text: str, escapes: tuple[tuple[str, str], ...]) -> str:
    for raw, escaped in escapes:
        text = text.replace(raw, escaped)
    return text


def github_line(annotation: Annotation) -> str:
    """The ``::error …::message`` (or ``::warning``) workflow command of ``annotation``."""
    place = annotation.location
    properties = []
    if place is not None and place.path:
        properties.append(("file", place.path))
        if place.line:
            properties.append(("line", str(place.line)))
            if place.column:
                properties.append(("col", str(place.column)))
    properties.append(("title", annotation.code))
    text = ",".join(f"{key}={_escape(value, _PROPERTY_ESCAPES)}" for key, value in properties)
    return f"::{annotation.level} {text}::{_escape(annotation.message, _DATA_ESCAPES)}"
