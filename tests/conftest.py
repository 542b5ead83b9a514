"""Suite-wide setup: every test runs behind the no-real-model, no-network guard."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ["mindrian.testing.pytest_plugin"]
pytest.register_assert_rewrite("golden_files")

from golden_files import Golden  # noqa: E402  (after the rewrite hook, so its asserts explain)

# Property tests never fail on time: a first example can take half a second on a loaded machine
# (imports, caches warming up), and generating one can take seconds when other processes hold
# the CPU; neither says anything about correctness. Under CI the examples are derandomised (a
# fixed seed per test, no example database), so a red CI run is reproducible.
_UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("dev", **_UNTIMED)
settings.register_profile("ci", **_UNTIMED, derandomize=True, database=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "dev")


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # Keep the suite out of the user's cache folder; subprocesses inherit the variable.
    patch = pytest.MonkeyPatch()
    patch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    yield
    patch.undo()


@pytest.fixture(scope="session")
def golden() -> Golden:
    """The one golden-file helper every golden test uses."""
    return Golden(update=os.environ.get("MINDRIAN_UPDATE_GOLDEN") == "1")
