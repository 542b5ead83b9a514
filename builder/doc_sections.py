"""Generated sections of hand-written Markdown, so a table cannot drift from the code it describes.

A generated section is the text between two HTML-comment markers; the module that owns the
facts regenerates it (``python -m builder.schemas.reference`` for the skill field reference,
``python -m builder.pipeline.codes_doc`` for README's workflow codes, ``make docs`` for both)
and a test fails while the committed file differs from what it would write.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from mindrian.atomic import atomic_write_text

__all__ = ["Writer", "fill_section", "main", "sync_file"]


class Writer(Protocol):
    """A generator's ``write``: regenerate its files under ``root`` and list those that changed
    (with ``check``, those that would)."""

    def __call__(self, root: Path, *, check: bool = False) -> list[Path]: ...


def fill_section(text: str, begin: str, end: str, content: str, *, where: Path) -> str:
    """``text`` with what lies between the markers ``begin`` and ``end`` replaced by ``content``;
    ValueError naming ``where`` when a marker is missing."""
    head, found_begin, rest = text.partition(begin)
    _, found_end, tail = rest.partition(end)
    if not found_begin or not found_end:
        raise ValueError(f"{where} lacks the markers {begin!r} and {end!r}")
    return f"{head}{begin}\n{content}\n{end}{tail}"


def sync_file(path: Path, text: str, *, check: bool) -> bool:
    """Whether ``path`` is missing or differs from ``text``; unless ``check``, it is then
    replaced by ``text`` (atomically, line endings as given)."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    if not check:
        atomic_write_text(path, text)
    return True


def main(write: Writer, argv: Sequence[str]) -> int:
    """A generator's command line: rewrite its files under the current folder, printing those
    that changed; ``--check`` only prints the stale ones and returns 1 when there are any."""
    check = "--check" in argv
    changed = write(Path.cwd(), check=check)
    for path in changed:
        print(path)
    return 1 if changed and check else 0
