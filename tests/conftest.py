"""Suite-wide setup: every test runs behind the no-real-model, no-network guard."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

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


#: The checkout's own project state (its registry, checkpoints): no test may write it.
_CHECKOUT_STATE = Path(__file__).resolve().parents[1] / ".mindrian"


def _state_files() -> dict[str, tuple[int, int]]:
    if not _CHECKOUT_STATE.is_dir():
        return {}
    return {
        path.relative_to(_CHECKOUT_STATE).as_posix(): (stat.st_size, stat.st_mtime_ns)
        for path in sorted(_CHECKOUT_STATE.rglob("*"))
        if path.is_file()
        for stat in (path.stat(),)
    }


@pytest.fixture(autouse=True)
def _checkout_state_untouched() -> Iterator[None]:
    # A registry opened at its default path (relative to the working directory) lands in the
    # checkout and changes what the developer's own `mindrian select` answers afterwards.
    before = _state_files()
    yield
    after = _state_files()
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"the test wrote the checkout's .mindrian/: {changed[:5]}"
