"""Routing helpers shared by selection and trigger inference."""

from mindrian.routing.terms import (
    DEFAULT_TERM_LIMIT,
    STOP_WORDS,
    extract_terms,
    matching_phrases,
    normalise_term,
)

__all__ = [
    "DEFAULT_TERM_LIMIT",
    "STOP_WORDS",
    "extract_terms",
    "matching_phrases",
    "normalise_term",
]
