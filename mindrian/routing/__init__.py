"""Routing: term extraction for trigger inference, and ranked free-text selection.

:mod:`mindrian.routing.terms` gives the terms triggers are inferred from;
:mod:`mindrian.routing.text` the tokens, :mod:`mindrian.routing.rank` the BM25F model and
:mod:`mindrian.routing.score` the one formula free-text selection ranks with.
"""

from mindrian.routing.terms import (
    DEFAULT_TERM_LIMIT,
    STOP_WORDS,
    extract_terms,
    normalise_term,
)

__all__ = [
    "DEFAULT_TERM_LIMIT",
    "STOP_WORDS",
    "extract_terms",
    "normalise_term",
]
