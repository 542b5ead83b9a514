"""Phase code digests kept across processes: reused while no file of the packages changed,
computed again after any edit, addition or removal."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from builder.pipeline import code_digest


@dataclass(frozen=True)
class _Key:
    """What phase_code_digest reads of a phase."""

    code_module: str = "builder.phases.alpha"
    code_packages: tuple[str, ...] = ()


_FILES = {
    "builder/__init__.py": "",
    "builder/phases/__init__.py": "",
    "builder/phases/alpha.py": "from builder.helper import shout\nimport builder.extra\n",
    "builder/helper.py": "def shout() -> str:\n    return 'A'\n",
    "mindrian/__init__.py": "",
}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    code = tmp_path / "code"
    for name, text in _FILES.items():
        (code / name).parent.mkdir(parents=True, exist_ok=True)
        (code / name).write_text(text, encoding="utf-8")
    old = 1_000_000_000 * 10**9  # 2001: older than any cache file written by the test
    for folder, _, files in os.walk(code):
        for name in files:
            os.utime(os.path.join(folder, name), ns=(old, old))
    monkeypatch.setattr(code_digest, "ROOT", code)
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path / "cache"))
    return code


def _digest() -> str:
    """The digest as a new process computes it (every in-process cache emptied)."""
    for cached in (code_digest._digest, code_digest._known, code_digest._module):
        cached.cache_clear()
    code_digest._read_once.cache_clear()
    return code_digest.phase_code_digest(_Key())


def _uncached(monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as patch:
        patch.setenv("MINDRIAN_CACHE_DIR", "")
        return _digest()


def _unread(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> Callable[[], str]:
        raise AssertionError("the code was read again")

    monkeypatch.setattr(code_digest, "files_digest", refuse)


def test_a_later_process_reuses_the_digest_without_reading_the_code(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _digest()
    _unread(monkeypatch)
    assert _digest() == first


def test_the_cached_digest_is_the_computed_one(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _digest() == _digest() == _uncached(monkeypatch)


@pytest.mark.parametrize("restore_times", [False, True])
def test_an_edit_of_an_imported_module_is_seen(
    root: Path, monkeypatch: pytest.MonkeyPatch, restore_times: bool
) -> None:
    first = _digest()
    helper = root / "builder/helper.py"
    stat = helper.stat()
    helper.write_text(helper.read_text("utf-8").replace("'A'", "'B'"), "utf-8")  # same size
    if restore_times:  # ctime still moves
        os.utime(helper, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    edited = _digest()

    assert edited != first
    assert edited == _uncached(monkeypatch)


def test_a_module_that_appears_is_seen(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _digest()
    (root / "builder/extra.py").write_text("X = 1\n", encoding="utf-8")  # imported, was missing

    added = _digest()

    assert added != first
    assert added == _uncached(monkeypatch)


def test_a_file_anywhere_in_the_packages_discards_the_cache(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _digest()
    (root / "mindrian/unrelated.py").write_text("", encoding="utf-8")
    reads: list[object] = []
    real = code_digest.files_digest
    monkeypatch.setattr(
        code_digest, "files_digest", lambda *a, **k: reads.append(a) or real(*a, **k)
    )

    assert _digest() == first  # the same code, read again
    assert reads


def test_a_file_as_new_as_the_cache_is_read_again(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _digest()
    (cache,) = (root.parent / "cache" / "code-digests").iterdir()
    old = 1_000_000_000 * 10**9
    os.utime(cache, ns=(old, old))  # as if written in the same clock tick as the files
    reads: list[object] = []
    real = code_digest.files_digest
    monkeypatch.setattr(
        code_digest, "files_digest", lambda *a, **k: reads.append(a) or real(*a, **k)
    )

    assert _digest() == first
    assert reads
