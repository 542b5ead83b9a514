"""Suite-wide setup: every test runs behind the no-real-model, no-network guard."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from mindrian.testing.neo4j_server import (
    TEST_SERVER_ENV,
    Neo4jServer,
    configured_server,
    exclusive,
    wipe,
)

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


#: Fixtures that reach the test Neo4j; a test using one, or run with ``engine="neo4j"`` (which
#: asks for the server when it runs), is marked ``neo4j`` (``-m neo4j``).
_NEO4J_FIXTURES = frozenset({"neo4j_server", "neo4j_test_server"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_neo4j = callspec is not None and callspec.params.get("engine") == "neo4j"
        if on_neo4j or _NEO4J_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.neo4j)


@pytest.fixture(scope="session")
def neo4j_test_server() -> Neo4jServer:
    """The Neo4j that ``ci/neo4j-server start DIR`` started, named by ``MINDRIAN_TEST_NEO4J=DIR``.

    Without one a developer's run skips the test; CI (``CI=true``, where ``.ci/run`` starts the
    server) fails it instead, so a Neo4j that did not start cannot pass as green.
    """
    server = configured_server()
    if server is not None:
        return server
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI runs the Neo4j tests: {TEST_SERVER_ENV} is not set (see .ci/run)")
    pytest.skip(
        f"no test Neo4j: `ci/neo4j-server start DIR` (Java 17, Maven), then {TEST_SERVER_ENV}=DIR"
    )


@pytest.fixture
def neo4j_server(neo4j_test_server: Neo4jServer) -> Iterator[Neo4jServer]:
    """The test Neo4j, emptied, held by this test alone (parallel workers take turns)."""
    with exclusive(neo4j_test_server) as server:
        wipe(server)
        yield server


@pytest.fixture
def made_folders(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every folder ``Path.mkdir`` is asked to make from now on, in order (each still made)."""
    made: list[Path] = []
    real = Path.mkdir

    def mkdir(self: Path, *args: object, **kwargs: object) -> None:
        made.append(self)
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", mkdir)
    return made
