"""Suite-wide setup: every test runs behind the no-real-model, no-network guard."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest_plugins = ["mindrian.testing.pytest_plugin"]


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # Keep the suite out of the user's cache folder; subprocesses inherit the variable.
    patch = pytest.MonkeyPatch()
    patch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    yield
    patch.undo()
