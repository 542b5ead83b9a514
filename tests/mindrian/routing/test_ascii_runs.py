"""ASCII text is tokenised without compiling the patterns of the unspaced scripts' Unicode
ranges (a one-shot ``select`` of an English sentence pays for neither), into the same tokens
as through them."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from mindrian.routing.glosses import chinese_words
from mindrian.routing.text import tokens

#: ASCII, with the characters tokens are cut at and kept by.
_ASCII = st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=60)


@given(_ASCII)
@settings(max_examples=300, deadline=None)
def test_ascii_text_gives_the_tokens_the_unicode_pattern_gives(text: str) -> None:
    # A lone accented letter sends the text through the Unicode pattern and adds no token
    # (a one-letter word is none).
    assert tokens(text) == tokens(text + " \u00e9")
    assert chinese_words(text) == []


def test_an_english_sentence_compiles_no_unicode_range_pattern() -> None:
    probe = (
        "from mindrian.routing import glosses, text\n"
        "for sentence in ('review the SQL migrations', '\u5e2e\u6211\u51c6\u5907\u9762\u8bd5'):\n"
        "    text.tokens(sentence), glosses.chinese_words(sentence, {})\n"
        "    print(text._runs.cache_info().currsize, glosses._han.cache_info().currsize)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["0 0", "1 1"]
