"""Deterministic term extraction: the words of a text that can route it to a framework.

Trigger inference reads a skill's name, tags, ``when_to_use`` and description through
:func:`extract_terms`; an explicit ``select --trigger`` matches those terms exactly.
Free-text selection ranks sentences with its own tokens (:mod:`mindrian.routing.text`),
which keep repeats and cut scripts written without spaces into bigrams.

The rules, applied in order, with no dependency on locale, dictionaries or models:

1. Unicode NFKC, then case folding (fullwidth ``STARTUP`` and ``Startup`` become ``startup``).
2. Every dash character (hyphen, en and em dash, minus sign, non-breaking hyphen)
   becomes ``-``; a hyphenated compound stays one term (``pre-mortem``, ``no-go``).
3. A possessive ``'s`` is dropped and other apostrophes are removed (``founder's``
   becomes ``founder``, ``don't`` becomes ``dont``).
4. Terms are runs of letters and digits joined by single hyphens; a term needs a
   letter and at least two characters.
5. Obvious plurals become singular: ``-ies`` to ``-y`` (``companies``), ``-sses``,
   ``-xes``, ``-ches``, ``-shes`` lose ``-es``, and a final ``-s`` goes unless the
   word ends in ``ss``, ``us``, ``is`` or ``ous`` or has three letters or fewer.
6. Stop-words (:data:`STOP_WORDS`) are dropped, as written or once singular
   (``does`` is dropped, not kept as ``doe``).
7. Duplicates are dropped, first occurrence kept, and at most ``limit`` terms
   are returned, in the order they appear.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "DEFAULT_TERM_LIMIT",
    "STOP_WORDS",
    "extract_terms",
    "normalise_term",
]

#: Most terms :func:`extract_terms` returns unless told otherwise.
DEFAULT_TERM_LIMIT: int = 16

#: Function words that never route anything: articles, pronouns, auxiliaries,
#: prepositions, conjunctions, question words, the commonest filler verbs, and the
#: contractions as they read once their apostrophe is gone (``cant``, ``im``, ``youre``).
STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can cannot could did do does doing done down
    dont during each either else ever every few for from further get gets getting give go
    going got had has have having he her here hers herself him himself his how however i
    if in into is it its itself just let lets like make makes may me might mine more most
    much must my myself neither no nor not now of off on once one only onto or other ought
    our ours ourselves out over own please really same shall she should so some such than
    that the their theirs them themselves then there these they this those through thus
    to too under until up upon us use very via want wants was we were what whatever when
    where whether which while who whom whose why will with within without would yes yet
    you your yours yourself yourselves
    aint arent cant couldnt didnt doesnt hadnt hasnt havent im isnt ive
    shouldnt thats theres theyd theyll theyre theyve wasnt weve werent whats wont
    wouldnt youd youll youre youve
    """.split()
)

_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d]")
_APOSTROPHES = re.compile("[\u2018\u2019\u02bc\uff07]")
_POSSESSIVE = re.compile(r"'s\b")
_TERM = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
_KEEP_FINAL_S = ("ss", "us", "is", "ous")
_ES_ENDINGS = ("sses", "xes", "ches", "shes")


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(_ES_ENDINGS):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(_KEEP_FINAL_S):
        return word[:-1]
    return word


def normalise_term(word: str) -> str:
    """One word as :func:`extract_terms` would return it (before stop-word removal)."""
    *head, last = word.split("-")
    return "-".join([*head, _singular(last)])


def _prepared(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = _DASHES.sub("-", folded)
    folded = _APOSTROPHES.sub("'", folded)
    return _POSSESSIVE.sub("", folded).replace("'", "")


def extract_terms(text: str, limit: int = DEFAULT_TERM_LIMIT) -> tuple[str, ...]:
    """The routing terms of ``text``: normalised, no stop-words or repeats, at most ``limit``."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    terms: dict[str, None] = {}
    for match in _TERM.finditer(_prepared(text)):
        # A stop-word is dropped as written too: "does" must not survive as the singular "doe".
        term = normalise_term(match.group())
        if match.group() in STOP_WORDS or term in STOP_WORDS:
            continue
        if len(term) < 2 or not any(c.isalpha() for c in term):
            continue
        terms.setdefault(term, None)
        if len(terms) == limit:
            break
    return tuple(terms)
