"""Regular expressions compiled when first used rather than when their module is imported.

Compiling a pattern costs about a tenth of a millisecond, and ``mindrian validate`` of one
skill imports some forty: the patterns only some skills reach (a list, a numbered heading, a
block scalar, a chain's stage file, a subagent note, a refusal's message) wait for one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

__all__ = ["on_first_use"]


def on_first_use(pattern: str) -> Callable[[], re.Pattern[str]]:
    """A function returning ``re.compile(pattern)``, compiled on its first call and the same
    object afterwards."""
    return functools.cache(functools.partial(re.compile, pattern))
