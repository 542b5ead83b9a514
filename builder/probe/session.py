"""Pytest plugin: phase 7's end-to-end probe of each package a shared test session tested.

Loaded with ``-p builder.probe.session --mindrian-probes PATH`` by a batch's shared
test sessions (:mod:`builder.orchestration.shared_tests`). Once the session has
written its outcomes, each package of its folder whose tests all passed is probed in
this process, as :func:`builder.probe.e2e.probe` probes it in a process of its own:
the package is imported already and the runtime warm, so a probe costs its handoff,
not a fork and an import (about two thirds of a probe child's CPU). The verdicts go
to PATH as JSON, by package identifier (:func:`read_probes`).

Only a success is ever taken from here (:meth:`builder.probe.runner.WarmProbes.passed`),
and only for the files that were probed: a package that fails here, or that the
session did not probe, is probed again in a process of its own, so every failure is
what such a process found, as with the probes several packages share in one child.
Warnings the probes raise are dropped, as a probe alone drops them: they must not
join the session's warnings, which count in the packages' test summaries.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from builder.pipeline.probe_result import ProbeResult

if TYPE_CHECKING:
    import pytest

__all__ = ["OPTION", "read_probes"]

#: The command-line option naming the JSON file to write.
OPTION = "--mindrian-probes"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(OPTION, default=None, help="probe every package that passed into this file")


class _Prober:
    """Follows which packages' tests passed; probes them once the session is over."""

    def __init__(self, path: Path, root: Path) -> None:
        self.path = path
        self.root = root
        self.passed: set[str] = set()
        self.failed: set[str] = set()

    def _note(self, nodeid: str, failed: bool, passed: bool) -> None:
        package = nodeid.split("/", 1)[0]
        if failed:
            self.failed.add(package)
        elif passed:
            self.passed.add(package)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self._note(report.nodeid, report.failed, False)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._note(report.nodeid, report.failed, report.passed and report.when == "call")

    def probe_all(self) -> None:
        """Probe each package whose tests passed, in order; write the verdicts."""
        from builder.probe.e2e import probe

        found: dict[str, dict[str, Any]] = {}
        for identifier in sorted(self.passed - self.failed):
            if identifier.isidentifier() and (self.root / identifier).is_dir():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    found[identifier] = asdict(probe(identifier))
        self.path.write_text(json.dumps(found, ensure_ascii=False), encoding="utf-8")


_NAME = "mindrian-probes"


def pytest_configure(config: pytest.Config) -> None:
    target = config.getoption(OPTION)
    # An xdist worker leaves the probes to the controller, which sees every package's reports.
    if target is not None and getattr(config, "workerinput", None) is None:
        config.pluginmanager.register(_Prober(Path(target), config.rootpath), _NAME)


def pytest_unconfigure(config: pytest.Config) -> None:
    # After the terminal summary: the outcomes file is written, so nothing here can change what
    # the session reports for the packages' tests.
    prober = config.pluginmanager.get_plugin(_NAME)
    if isinstance(prober, _Prober):
        prober.probe_all()


def read_probes(path: Path) -> Mapping[str, ProbeResult]:
    """The successes a session's probes found, by package identifier (none when the file is
    missing or damaged: each package is then probed in a process of its own)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(identifier): ProbeResult(True, str(outcome.get("summary", "")))
        for identifier, outcome in data.items()
        if isinstance(outcome, dict) and outcome.get("success") is True
    }
