"""Every folder the wheel ships is one setuptools is told about (issue 38, 8).

setuptools warns ("Package would be ignored") about a folder Python can import (a name that is
an identifier, files in it) that ``packages`` leaves out, and future versions may leave it out of
the wheel. setup.py is run here with ``setup`` replaced by a recorder, so the check needs no
build backend of a particular version.
"""

from __future__ import annotations

import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import setuptools

ROOT = Path(__file__).resolve().parents[2]
#: Folders that are never shipped: caches and the Cypher linter's installed Node packages.
_NOT_SHIPPED = {"__pycache__", "node_modules"}


def _importable(folder: Path, name: str) -> Iterator[str]:
    """``name`` and the dotted names of the folders below ``folder`` that Python could import."""
    if any(p.is_file() for p in folder.iterdir()):
        yield name
    for child in sorted(p for p in folder.iterdir() if p.is_dir()):
        if child.name.isidentifier() and child.name not in _NOT_SHIPPED:
            yield from _importable(child, f"{name}.{child.name}")


def _declared(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: seen.update(kwargs))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(ROOT / "setup.py"))
    return seen


def test_every_importable_folder_is_a_declared_package(monkeypatch: pytest.MonkeyPatch) -> None:
    declared = _declared(monkeypatch)
    assert declared["package_dir"] == {"builder._templates": "templates"}
    shipped = {
        *_importable(ROOT / "builder", "builder"),
        *_importable(ROOT / "mindrian", "mindrian"),
        *_importable(ROOT / "templates", "builder._templates"),
    }
    assert {"builder.schemas", "builder._templates.agent"} <= shipped
    assert sorted(shipped - set(declared["packages"])) == []
