"""A shared test session probes the packages whose tests passed, as a process of their own would."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from builder.orchestration.shared_tests import probing
from builder.pipeline.package_tests import run_session
from builder.probe.runner import run_probe
from builder.probe.session import read_probes

# Slow: real pytest sessions and probes in subprocesses.
pytestmark = pytest.mark.slow

AGENT = """
    import warnings

    from mindrian.agents import OperatorAgent

    __all__ = ["{cls}"]


    class {cls}(OperatorAgent):
        agent_id = "{agent_id}"
        name = "Probed"
        instructions = "Answer the task."

        def __init__(self, **options):
            # Only the probe builds the agent: its warning must not reach the tests' summary.
            warnings.warn("built by the probe", UserWarning, stacklevel=1)
            super().__init__(**options)
"""
NO_AGENT = """
    __all__ = ["VALUE"]
    VALUE = 1
"""
PASSES = "def test_passes():\n    assert True\n"
FAILS = "def test_fails():\n    assert False\n"

#: name -> (package body, its one test)
PACKAGES = {
    "good": (AGENT.format(cls="GoodAgent", agent_id="good"), PASSES),
    "no_agent": (NO_AGENT, PASSES),  # its tests pass, its probe fails
    "tests_fail": (AGENT.format(cls="FailingAgent", agent_id="failing"), FAILS),
}


def stage(folder: Path) -> Path:
    for name, (body, test) in PACKAGES.items():
        tests = folder / name / "tests"
        tests.mkdir(parents=True)
        (folder / name / "__init__.py").write_text(textwrap.dedent(body), encoding="utf-8")
        (tests / "__init__.py").write_text("", encoding="utf-8")
        (tests / "test_it.py").write_text(test, encoding="utf-8")
    return folder


def test_the_session_probes_what_passed_and_keeps_only_successes(tmp_path: Path) -> None:
    plain = run_session(stage(tmp_path / "plain"), jobs=1, workers=0)
    folder = stage(tmp_path / "session")
    probed = run_session(folder, jobs=1, workers=0, more=probing(folder))
    # Probing changes nothing the session says about the packages' tests.
    assert probed == plain
    assert {name: run.summary for name, (_, run) in probed.items()} == {
        "good": "1 passed",
        "no_agent": "1 passed",
        "tests_fail": "1 failed",
    }
    written = json.loads((folder / "probes.json").read_text(encoding="utf-8"))
    assert sorted(written) == ["good", "no_agent"]  # a package whose tests failed is not probed
    assert not written["no_agent"]["success"]
    # Only the success is a verdict, and it is the one a process of its own gives.
    alone = tmp_path / "alone"
    shutil.copytree(folder / "good", alone / "good")
    assert read_probes(folder / "probes.json") == {"good": run_probe(alone, "good")}
    assert run_probe(alone, "good").success


def test_a_missing_or_damaged_file_gives_no_verdict(tmp_path: Path) -> None:
    assert read_probes(tmp_path / "none.json") == {}
    (tmp_path / "cut.json").write_text('{"good": {"success": tr', encoding="utf-8")
    assert read_probes(tmp_path / "cut.json") == {}
    (tmp_path / "list.json").write_text("[]", encoding="utf-8")
    assert read_probes(tmp_path / "list.json") == {}
