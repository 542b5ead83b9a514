"""The one golden-file helper: compare output with committed files, or rewrite them on request.

Tests get it as the ``golden`` fixture (tests/conftest.py). Files under ``tests/**/golden`` are
output, byte for byte: no formatter or linter touches them (pyproject.toml excludes them).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Golden"]


@dataclass(frozen=True)
class Golden:
    """Compares output with committed golden files; ``MINDRIAN_UPDATE_GOLDEN=1`` rewrites them."""

    update: bool
    """Write the files from the output instead of comparing (review the diff, then commit)."""

    def check(self, path: Path, text: str) -> None:
        """``text`` is exactly the content of ``path`` (LF line endings, UTF-8)."""
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
        assert path.is_file(), f"missing golden file {path}; run with MINDRIAN_UPDATE_GOLDEN=1"
        assert text == path.read_text(encoding="utf-8"), (
            f"{path} differs; review the change, then run with MINDRIAN_UPDATE_GOLDEN=1"
        )

    def check_tree(self, folder: Path, files: Mapping[str, str]) -> None:
        """``folder`` holds exactly ``files`` (relative POSIX path → text), nothing more."""
        if self.update:
            shutil.rmtree(folder, ignore_errors=True)
        for relative, text in sorted(files.items()):
            self.check(folder / relative, text)
        on_disk = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        assert on_disk == sorted(files), f"{folder} has other files than the output"
