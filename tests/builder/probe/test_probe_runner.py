"""Phase 7's probes of a batch take a success found in a shared test session for the same files."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builder.pipeline.package_tests import tree_digest
from builder.pipeline.probe_result import ProbeResult
from builder.probe.runner import PROBE_MODULE, WarmProbes

FAILED = '{"success": false, "summary": "import failed: probed in a child"}\n'


@dataclass
class Children:
    """Stands in for the warm worker: records each probe child, which fails every probe."""

    started: list[tuple[str, ...]] = field(default_factory=list)

    def submit(self, module: str, args: Sequence[str], *rest: Any, **options: Any) -> int:
        assert module == PROBE_MODULE
        self.started.append(tuple(args))
        return len(self.started) - 1

    def result(self, ticket: int) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess([], 1, FAILED, "")


def package(folder: Path, identifier: str) -> Path:
    (folder / identifier).mkdir(parents=True)
    (folder / identifier / "__init__.py").write_text("VALUE = 1\n", encoding="utf-8")
    return folder


def test_a_success_found_for_the_same_files_answers_without_a_child(tmp_path: Path) -> None:
    ready = package(tmp_path / "one.ready", "one")
    elsewhere = ProbeResult(True, "handoff e2e-probe -> one succeeded (structured, 1 finding(s))")
    children = Children()
    probes = WarmProbes(children, at_once=2)  # type: ignore[arg-type]
    probes.passed({"one": (tree_digest(ready / "one"), elsewhere)})
    probes.plan([(ready, "one")])
    assert probes(ready, "one") == elsewhere
    assert children.started == []


def test_a_success_found_for_other_files_is_not_taken(tmp_path: Path) -> None:
    ready = package(tmp_path / "one.ready", "one")
    tested = tree_digest(ready / "one")
    (ready / "one" / "__init__.py").write_text("VALUE = 2\n", encoding="utf-8")  # changed since
    children = Children()
    probes = WarmProbes(children)  # type: ignore[arg-type]
    probes.passed({"one": (tested, ProbeResult(True, "found for the files tested"))})
    # Asked for without a plan, as phase 7 of a skill alone asks.
    assert probes(ready, "one") == ProbeResult(False, "import failed: probed in a child")
    assert children.started == [("one",)]
