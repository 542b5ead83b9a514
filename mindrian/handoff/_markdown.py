"""Markdown pieces shared by the prompt and synthesis renderers."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["bullets", "quote"]


def bullets(items: Iterable[str]) -> str:
    """A markdown list; continuation lines are indented so a multi-line item stays one entry."""
    return "\n".join("- " + item.replace("\n", "\n  ") for item in items)


def quote(text: str) -> str:
    """A markdown block quote, so another agent's own headings cannot break the outline around
    it."""
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())
