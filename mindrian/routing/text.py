"""Tokens for ranked free-text selection, in any script, with no dictionary or model.

:func:`tokens` turns a text into the units the ranked model (:mod:`mindrian.routing.rank`)
counts. Both sides of routing (a framework's stored fields and the user's sentence) go
through it, so they always agree. The rules, in order:

1. Unicode NFKC (fullwidth letters become ASCII) and case folding; apostrophes removed.
2. A run of a script written without spaces (Han, Hiragana, Katakana, Hangul, Thai, Lao,
   Khmer, Myanmar) becomes its overlapping character bigrams (a one-character run stays
   itself): ``单元测试`` gives ``单元``, ``元测``, ``测试``. Bigrams are the classic
   segmenter-free indexing of CJK text and need no word list.
3. Everything else is split into runs of letters and digits; hyphens and underscores
   separate words (``property-based`` is ``property`` and ``based``).
4. A word in :data:`mindrian.routing.terms.STOP_WORDS` or one character long is dropped.
   A word written in lowercase Latin letters gives two tokens: its singular
   (:func:`mindrian.routing.terms.normalise_term`) and its :func:`stem` (a light English
   suffix stripper) marked with :data:`STEM_MARK`: ``tests`` gives ``test`` and ``~test``,
   ``testing`` gives ``testing`` and ``~test``. A query word found in the same form scores
   on both, one sharing only the stem on one: stemming widens recall without making
   ``testing`` and ``tests`` the same word. Other words stay one token.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from mindrian.routing.terms import STOP_WORDS, normalise_term

__all__ = ["STEM_MARK", "body_prose", "is_unspaced", "prose", "script", "stem", "stemmed", "tokens"]

# Scripts written without spaces between words, each with the name :func:`script` gives
# it: Thai, Lao, Myanmar, Khmer, Hangul (jamo, compatibility jamo, syllables), kana
# (Hiragana and Katakana) and Han (with its extensions and compatibility block).
_UNSPACED_RANGES = (
    (0x0E00, 0x0E7F, "thai"),
    (0x0E80, 0x0EFF, "lao"),
    (0x1000, 0x109F, "myanmar"),
    (0x1780, 0x17FF, "khmer"),
    (0x1100, 0x11FF, "hangul"),
    (0x3040, 0x30FF, "kana"),
    (0x3130, 0x318F, "hangul"),
    (0x3400, 0x4DBF, "han"),
    (0x4E00, 0x9FFF, "han"),
    (0xAC00, 0xD7AF, "hangul"),
    (0xF900, 0xFAFF, "han"),
    (0x20000, 0x2FA1F, "han"),
)
_UNSPACED_CLASS = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi, _ in _UNSPACED_RANGES)
#: A run of one unspaced script's characters (group 1), or of letters and digits (group 2).
_RUN = f"([{_UNSPACED_CLASS}]+)|([^\\W_{_UNSPACED_CLASS}]+)"
#: What :data:`_RUN` finds in ASCII text, where no unspaced script can occur: compiling
#: :data:`_RUN`'s Unicode ranges costs a tenth of the interpreter's start, which a one-shot
#: ``select`` of an English sentence then does not pay.
_ASCII_RUN = re.compile("[A-Za-z0-9]+")
_APOSTROPHES = re.compile("['\u2018\u2019\u02bc\uff07]")
_LATIN = re.compile(r"[a-z]+")
# Longest first; each suffix comes off only if at least three letters stay.
_SUFFIXES = (
    ("ational", "ate"),
    ("ization", "ize"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("nesses", ""),
    ("ness", ""),
    ("ments", ""),
    ("ment", ""),
    ("ities", ""),
    ("ity", ""),
    ("ingly", ""),
    ("ings", ""),
    ("ing", ""),
    ("edly", ""),
    ("ied", "y"),
    ("ies", "y"),
    ("ed", ""),
    ("ers", ""),
    ("er", ""),
    ("ly", ""),
    ("es", ""),
    ("s", ""),
)
_KEEP_FINAL_S = ("ss", "us", "is")
#: Marks the stem token a Latin-script word gives besides its singular (``~test``): a stem
#: is never mistaken for a word written that way.
STEM_MARK = "~"
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_VOWELS = frozenset("aeiouy")


def is_unspaced(char: str) -> bool:
    """Whether ``char`` belongs to a script written without spaces between words."""
    return bool(script(char))


def script(token: str) -> str:
    """The unspaced script ``token`` is written in (``han``, ``kana``, ``hangul``, ``thai``,
    ``lao``, ``myanmar``, ``khmer``: that of its first character), or ``""`` for a word
    of any other script. The ranked model weighs a token among the documents holding
    tokens of the same script (:class:`mindrian.routing.rank.RankedIndex`)."""
    point = ord(token[0])
    return next((name for lo, hi, name in _UNSPACED_RANGES if lo <= point <= hi), "")


def stem(word: str) -> str:
    """A light English stem: one suffix off, a final ``e`` and a doubled consonant undone.

    ``testing``, ``tests`` and ``tested`` all give ``test``; ``validation``,
    ``validate`` and ``validating`` give ``validat``. Words not written in
    lowercase Latin letters come back unchanged.
    """
    if not _LATIN.fullmatch(word) or len(word) <= 3:
        return word
    if word.endswith(_KEEP_FINAL_S):
        return word
    for suffix, replacement in _SUFFIXES:
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and _VOWELS.intersection(base):
            word = base + replacement
            break
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "lsz" + "".join(_VOWELS):
        word = word[:-1]
    return word


def tokens(text: str) -> list[str]:
    """The ranked model's tokens of ``text``, in order, repeats kept (they are counts)."""
    folded = _APOSTROPHES.sub("", unicodedata.normalize("NFKC", text).casefold())
    found: list[str] = []
    if folded.isascii():
        runs: list[tuple[Any, ...]] = [(None, w) for w in _ASCII_RUN.findall(folded)]
    else:
        runs = [match.groups() for match in _runs().finditer(folded)]
    for unspaced, word in runs:
        if unspaced is not None:
            if len(unspaced) == 1:
                found.append(unspaced)
            else:
                found.extend(unspaced[i : i + 2] for i in range(len(unspaced) - 1))
        elif len(word) > 1 and word not in STOP_WORDS:
            if _LATIN.fullmatch(word):
                found += (normalise_term(word), STEM_MARK + stem(word))
            else:
                found.append(word)
    return found


@functools.cache
def _runs() -> re.Pattern[str]:
    return re.compile(_RUN)


def stemmed(text: str) -> frozenset[str]:
    """The distinct :func:`tokens` of ``text`` with each Latin-script word kept by its stem
    only: what a sentence must hold for a problem type to be named in it (``tests``
    names ``testing``)."""
    return frozenset(t for t in tokens(text) if not _LATIN.fullmatch(t))


def prose(markdown: str) -> str:
    """``markdown`` without its fenced code blocks: what a skill's body says in words.

    Code, sample output and file trees are how a skill works, not how people ask for it;
    headings and running text stay (one line per kept line). A fence closes on a line
    opening with the same character at least as many times, as in CommonMark; an unclosed
    fence runs to the end.
    """
    kept: list[str] = []
    fence = ""
    for line in markdown.splitlines():
        marker = _FENCE.match(line)
        if fence:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = ""
        elif marker:
            fence = marker.group(1)
        else:
            kept.append(line)
    return "\n".join(kept)


def body_prose(block_texts: Iterable[str]) -> str:
    """The routing body of a skill from its instruction blocks' texts, in order: their
    :func:`prose`. Phase 5 computes it from the AgentSpec and a registry rebuilt from
    registry.yaml from each package's spec.yaml, so both rank by the same text."""
    return prose("\n".join(block_texts))
