"""The runtime's tests live in tests/mindrian without shadowing the ``mindrian`` package."""

from __future__ import annotations

from pathlib import Path

import mindrian

ROOT = Path(__file__).resolve().parents[2]


def test_mindrian_is_the_package_not_the_test_folder() -> None:
    # tests/ is on sys.path (rootdir conftest, no __init__.py): without pythonpath = ["."]
    # or with a tests/mindrian/__init__.py, `import mindrian` could find the test folder.
    assert Path(mindrian.__file__ or "").resolve() == ROOT / "mindrian" / "__init__.py"
    assert list(mindrian.__path__) == [str(ROOT / "mindrian")]
    assert not (ROOT / "tests" / "mindrian" / "__init__.py").exists()
