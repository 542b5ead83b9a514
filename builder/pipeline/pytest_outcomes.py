"""Pytest plugin of the shared generated-test session: every outcome, as data, in a JSON file.

Loaded with ``-p builder.pipeline.pytest_outcomes --mindrian-outcomes PATH`` by
:mod:`builder.orchestration.shared_tests`, which runs the tests of many generated
packages in one pytest session and attributes the outcomes to each package
from this file. The plugin records what the terminal reporter counted (the
categories its summary line is built from, in report order) and the
collection order; it decides no outcome. Under xdist the controller writes the
file, and every worker asks to be killed when the controller dies. In a shared
session it collects only each package's ``tests`` folder, as a run of the package
alone does: not the rest of the package, whose ``skill/`` holds a copy of the
skill's own files (every one of them a path for pytest to look at, and a script
named ``test_*.py`` among them would have been collected in a session only).

Once the file is written nothing the session does can change what it reports, so
the plugin spares it pytest's collections of every object it made, which pytest
runs after the summary to report the exceptions of objects that die only then.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from builder.pipeline.children import die_with_parent

if TYPE_CHECKING:  # the builder imports OPTION from here without paying for pytest
    import pytest

__all__ = ["OPTION"]

#: The command-line option naming the JSON file to write.
OPTION = "--mindrian-outcomes"
_CONTROLLER = "mindrian_controller_pid"
#: Names xdist's plugin is registered under: its entry point's, or its module's (``-p
#: xdist.plugin``, as the builder loads it with no plugin found through entry points).
_XDIST = ("xdist", "xdist.plugin")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(OPTION, default=None, help="write every test outcome to this JSON file")


class _Xdist:
    """The xdist controller's side: collection order from the workers, the controller's pid."""

    def __init__(self) -> None:
        self.order: list[str] | None = None

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[_CONTROLLER] = os.getpid()

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.order is None:  # every worker collects the same items in the same order
            self.order = list(ids)


class _Recorder:
    """Collects the order and writes the file at the end of the session."""

    def __init__(self, path: Path, xdist: _Xdist | None) -> None:
        self.path = path
        self.xdist = xdist
        self.order: list[str] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.order = [item.nodeid for item in session.items]

    def pytest_terminal_summary(
        self, terminalreporter: Any, exitstatus: int, config: pytest.Config
    ) -> None:
        import pytest

        reports = [
            {
                "category": category,
                "nodeid": getattr(report, "nodeid", "") or "",
                "counts": bool(getattr(report, "count_towards_summary", True)),
                "collect": isinstance(report, pytest.CollectReport),
                **_where(report, config.rootpath),
            }
            for category, found in terminalreporter.stats.items()
            if category  # setup/teardown reports of passing tests have no category
            for report in found
        ]
        order = self.xdist.order if self.xdist is not None and self.xdist.order else self.order
        data = {"exitstatus": int(exitstatus), "order": order, "reports": reports}
        self.path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _where(report: Any, rootdir: Path) -> dict[str, Any]:
    """A warning's place: its file relative to the rootdir ("" outside it), line and message."""
    import pytest

    place = getattr(report, "fslocation", None)
    if not isinstance(report, pytest.TestReport | pytest.CollectReport) and place:
        try:
            path = Path(str(place[0])).resolve().relative_to(rootdir.resolve()).as_posix()
        except ValueError:
            path = ""
        return {"path": path, "line": place[1], "message": str(getattr(report, "message", ""))}
    return {}


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Anything two levels down the rootdir (a session's folder) but a package's ``tests``."""
    try:
        parts = collection_path.relative_to(config.rootpath).parts
    except ValueError:
        return None
    return True if len(parts) > 1 and parts[1] != "tests" else None


def _no_collections_after_the_summary(config: pytest.Config) -> None:
    """No garbage collection when pytest ends the session (see the module docstring): each walked
    every object the session made (twice, at unconfigure and at cleanup), a twentieth of a
    session's CPU. The tests' own unraisable exceptions are still reported, test by test."""
    from _pytest import unraisableexception  # the key pytest's own pytester sets for this

    key = getattr(unraisableexception, "gc_collect_iterations_key", None)
    if key is not None:
        config.stash[key] = 0


def pytest_configure(config: pytest.Config) -> None:
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        die_with_parent(worker.get(_CONTROLLER))
        return
    target = config.getoption(OPTION)
    if target is None:
        return
    _no_collections_after_the_summary(config)
    xdist = _Xdist() if any(map(config.pluginmanager.hasplugin, _XDIST)) else None
    if xdist is not None:
        config.pluginmanager.register(xdist, "mindrian-outcomes-xdist")
    config.pluginmanager.register(_Recorder(Path(target), xdist), "mindrian-outcomes")
