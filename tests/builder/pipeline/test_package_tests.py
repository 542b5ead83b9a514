"""Generated tests of many packages in one pytest session, each package getting its own result."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from builder.pipeline.package_tests import (
    TestRun,
    attribute,
    run_package_tests,
    run_session,
    tree_digest,
)

#: Three small packages laid out as phase 6 stages them: the same ``tests/conftest.py`` and
#: ``tests/test_agent.py`` names in each, different outcomes.
PACKAGES = {
    "alpha": {
        "test_agent.py": """
            import pytest

            from alpha import VALUE

            def test_value():
                assert VALUE == "alpha"

            @pytest.mark.skip(reason="not today")
            def test_skipped():
                pass

            def test_conftest_is_this_packages(marker):
                assert marker == "alpha"
        """,
    },
    "beta": {
        "test_agent.py": """
            import socket

            import pytest

            from beta import VALUE

            def test_fails():
                assert VALUE == "alpha"

            def test_passes():
                assert VALUE == "beta"

            @pytest.fixture
            def broken():
                raise RuntimeError("fixture broke")

            def test_errors(broken):
                pass

            def test_network_is_blocked():
                socket.create_connection(("192.0.2.1", 80), timeout=1)

            def test_conftest_is_this_packages(marker):
                assert marker == "beta"
        """,
    },
    "gamma": {
        "test_agent.py": """
            from gamma import VALUE

            class TestGamma:
                def test_one(self):
                    assert VALUE == "gamma"

                def test_two(self, marker):
                    assert marker == "gamma"

            class TestWithInit:  # pytest warns while collecting (every xdist worker collects)
                def __init__(self):
                    pass
        """,
    },
}


def stage(folder: Path, names: tuple[str, ...] = tuple(PACKAGES)) -> Path:
    """The packages under ``folder``, each with ``__init__.py`` files and its own conftest."""
    for name in names:
        tests = folder / name / "tests"
        tests.mkdir(parents=True)
        (folder / name / "__init__.py").write_text(f'VALUE = "{name}"\n', encoding="utf-8")
        (tests / "__init__.py").write_text("", encoding="utf-8")
        (tests / "conftest.py").write_text(
            f'import pytest\n\n@pytest.fixture\ndef marker():\n    return "{name}"\n',
            encoding="utf-8",
        )
        for file, text in PACKAGES[name].items():
            (tests / file).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def alone(tmp_path: Path, name: str) -> TestRun:
    """The package tested in a run of its own, as phase 6 of one skill does."""
    folder = stage(tmp_path / f"alone-{name}", (name,))
    run = run_package_tests(folder, name)
    return TestRun(run.passed, run.summary, run.failures, "")


# --- attribution, from an outcomes file ------------------------------------------------------


def report(category: str, nodeid: str, *, counts: bool = True, collect: bool = False) -> Any:
    return {"category": category, "nodeid": nodeid, "counts": counts, "collect": collect}


def test_each_package_gets_its_own_summary_and_failures_in_collection_order() -> None:
    order = ["a/tests/t.py::one", "a/tests/t.py::two", "a/tests/t.py::three", "b/tests/t.py::x"]
    data = {
        "exitstatus": 1,
        "order": order,
        # As xdist reports them: out of collection order.
        "reports": [
            report("failed", "a/tests/t.py::three"),
            report("passed", "b/tests/t.py::x"),
            report("error", "a/tests/t.py::one"),
            report("failed", "a/tests/t.py::two"),
            report("passed", "a/tests/t.py::one"),
            report("skipped", "b/tests/t.py::y"),
            report("error", "a/tests/t.py::three"),
            report("xfailed", "a/tests/t.py::four"),
        ],
    }
    runs = attribute(data, ["a", "b"])
    assert runs["a"] == TestRun(
        False,
        "2 failed, 1 passed, 1 xfailed, 2 errors",
        (
            "a/tests/t.py::two",
            "a/tests/t.py::three",
            "a/tests/t.py::one",
            "a/tests/t.py::three",
        ),
        "",
    )
    assert runs["b"] == TestRun(True, "1 passed, 1 skipped", (), "")


def test_singular_error_and_warning_and_uncounted_reports() -> None:
    data = {
        "exitstatus": 1,
        "order": [],
        "reports": [
            report("error", "a/tests/t.py::x"),
            report("warnings", "a/tests/t.py::x"),
            report("passed", "a/tests/t.py::y", counts=False),
            report("passed", "a/tests/t.py::z"),
        ],
    }
    assert attribute(data, ["a"])["a"].summary == "1 passed, 1 warning, 1 error"


def test_what_a_shared_session_cannot_promise_is_left_to_runs_of_their_own() -> None:
    passing = [report("passed", "a/tests/t.py::x"), report("passed", "b/tests/t.py::x")]
    both = ["a", "b"]
    assert attribute({"exitstatus": 2, "order": [], "reports": passing}, both) == {}
    assert attribute({"exitstatus": 3, "order": [], "reports": passing}, both) == {}
    foreign = [*passing, report("error", "c/tests", collect=True)]
    assert attribute({"exitstatus": 1, "order": [], "reports": foreign}, both) == {}
    # A warning from shared code counts once per process: its package depends on the order.
    shared = {**report("warnings", "a/tests/t.py::x"), "path": "", "line": 3, "message": "old"}
    warned = [*passing, shared]
    assert attribute({"exitstatus": 0, "order": [], "reports": warned}, both) == {}
    # A collection error stops a run of the package alone before its other tests.
    broken = [*passing, report("error", "b/tests/t.py", collect=True)]
    assert set(attribute({"exitstatus": 1, "order": [], "reports": broken}, both)) == {"a"}
    # No outcome at all: a run of its own reports "no tests ran" with its exit status.
    assert set(attribute({"exitstatus": 0, "order": [], "reports": passing[:1]}, both)) == {"a"}


def test_a_warning_belongs_to_the_package_whose_line_raised_it_counted_once() -> None:
    def warning(nodeid: str, path: str) -> Any:
        return {**report("warnings", nodeid), "path": path, "line": 22, "message": "Test*"}

    reports = [
        report("passed", "a/tests/t.py::x"),
        report("passed", "b/tests/t.py::x"),
        # Collected by two xdist workers: recorded twice, without a node id.
        warning("", "b/agent.py"),
        warning("", "b/agent.py"),
        warning("a/tests/t.py::x", "a/tests/t.py"),
    ]
    runs = attribute({"exitstatus": 0, "order": [], "reports": reports}, ["a", "b"])
    assert {name: run.summary for name, run in runs.items()} == {
        "a": "1 passed, 1 warning",
        "b": "1 passed, 1 warning",
    }
    # A test of one package warning from another package's line: no order-free owner.
    crossed = [*reports[:2], warning("a/tests/t.py::x", "b/agent.py")]
    assert attribute({"exitstatus": 0, "order": [], "reports": crossed}, ["a", "b"]) == {}


# --- real sessions -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("workers", [0, 2], ids=["one-process", "xdist"])
def test_a_shared_session_gives_each_package_what_a_run_of_its_own_gives(
    tmp_path: Path, workers: int
) -> None:
    folder = stage(tmp_path / "session")
    digests = {name: tree_digest(folder / name) for name in PACKAGES}
    shared = run_session(folder, jobs=2, workers=workers)
    assert shared == {name: (digests[name], alone(tmp_path, name)) for name in PACKAGES}
    beta = shared["beta"][1]
    assert not beta.passed and beta.summary == "2 failed, 2 passed, 2 errors"
    assert beta.failures == (
        "beta/tests/test_agent.py::test_fails",
        "beta/tests/test_agent.py::test_network_is_blocked",  # the offline guard holds...
        "beta/tests/test_agent.py::test_errors",
        "beta/tests/test_agent.py::test_network_is_blocked",  # ...and fails its teardown too
    )
    assert shared["alpha"][1] == TestRun(True, "2 passed, 1 skipped", (), "")
    assert shared["gamma"][1] == TestRun(True, "2 passed, 1 warning", (), "")
    assert sorted(p.name for p in folder.iterdir()) == sorted(PACKAGES)  # nothing left behind


#: The committed packages of the project's skills.
GENERATED = Path(__file__).resolve().parents[3] / "generated"


def committed(folder: Path, *names: str) -> Path:
    """Copies of the committed packages ``names`` staged side by side in ``folder``."""
    for name in names:
        shutil.copytree(
            GENERATED / name, folder / name, ignore=shutil.ignore_patterns("__pycache__")
        )
    return folder


@pytest.mark.slow
def test_each_package_of_a_session_is_held_to_its_own_expected_data(tmp_path: Path) -> None:
    folder = committed(tmp_path / "session", "larry", "pws_validation")
    # larry's tests now expect a line of the skill its prompt lacks; pws_validation's are as built.
    data = folder / "larry" / "tests" / "contract.json"
    expected = json.loads(data.read_text(encoding="utf-8"))
    expected["skill_items"].append("A line of the skill the prompt lacks.")
    data.write_text(json.dumps(expected), encoding="utf-8")
    shared = run_session(folder, jobs=1, workers=0)  # one process: both test modules side by side
    larry, pws = shared["larry"][1], shared["pws_validation"][1]
    assert larry.failures == (
        "larry/tests/test_agent.py::TestContract::test_every_skill_item_reaches_every_model",
    )
    assert pws.passed and "failed" not in pws.summary, pws


@pytest.mark.slow
def test_a_package_without_its_expected_data_fails_naming_the_file(tmp_path: Path) -> None:
    folder = committed(tmp_path / "alone", "pws_validation")
    data = folder / "pws_validation" / "tests" / "contract.json"
    data.unlink()
    run = run_package_tests(folder, "pws_validation")
    assert not run.passed
    assert f"ContractDataError: {data}: missing (the package's expected data)" in run.output


@pytest.mark.slow
def test_a_session_collects_each_package_s_tests_only_as_a_run_of_its_own_does(
    tmp_path: Path,
) -> None:
    folder = stage(tmp_path / "session")
    # A skill's own script, copied into its package, named as pytest names tests.
    scripts = folder / "alpha" / "skill" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "test_script.py").write_text("def test_it():\n    assert False\n", encoding="utf-8")
    shared = run_session(folder, jobs=1, workers=0)
    assert shared["alpha"][1] == run_package_tests_of(folder, "alpha")
    assert shared["alpha"][1] == TestRun(True, "2 passed, 1 skipped", (), "")


def run_package_tests_of(folder: Path, name: str) -> TestRun:
    run = run_package_tests(folder, name)
    return TestRun(run.passed, run.summary, run.failures, "")


@pytest.mark.slow
def test_a_package_that_does_not_import_is_left_to_a_run_of_its_own(tmp_path: Path) -> None:
    folder = stage(tmp_path / "session")
    (folder / "gamma" / "__init__.py").write_text("raise ImportError('no')\n", encoding="utf-8")
    shared = run_session(folder, jobs=1)
    assert sorted(shared) == ["alpha", "beta"]
    # Alone, its conftest.py fails to import at start-up; pytest's own words explain it.
    gamma = run_package_tests(folder, "gamma")
    assert not gamma.passed and gamma.failures == ()
    assert "ImportError while loading conftest" in gamma.output


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_the_session_and_its_workers_die_with_the_builder(tmp_path: Path) -> None:
    folder = tmp_path / "session"
    pids = tmp_path / "pids"
    pids.mkdir()
    for name in ("slow_a", "slow_b"):
        tests = folder / name / "tests"
        tests.mkdir(parents=True)
        (folder / name / "__init__.py").write_text("", encoding="utf-8")
        (tests / "__init__.py").write_text("", encoding="utf-8")
        (tests / "test_slow.py").write_text(
            "import os, time\n\ndef test_wait():\n"
            f"    open({str(pids / name)!r}, 'w').write(f'{{os.getpid()}} {{os.getppid()}}')\n"
            "    time.sleep(120)\n",
            encoding="utf-8",
        )
    builder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from builder.pipeline.package_tests import "
            f"run_session; run_session(Path({str(folder)!r}), jobs=2, workers=2)",
        ],
        cwd=Path(__file__).resolve().parents[3],
    )
    deadline = time.monotonic() + 120
    while len([p for p in pids.iterdir() if p.read_text()]) < 2:
        assert time.monotonic() < deadline and builder.poll() is None, "the session never started"
        time.sleep(0.2)
    started = {int(pid) for p in pids.iterdir() for pid in p.read_text().split()}
    assert len(started) == 3  # two workers and their controller
    builder.send_signal(signal.SIGKILL)
    builder.wait()
    deadline = time.monotonic() + 60  # a bound on a hang
    while any(alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in started if alive(pid)], "a test process outlived the builder"
    shutil.rmtree(folder, ignore_errors=True)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ")[-1][0] != "Z"


@pytest.mark.slow
def test_a_session_collects_no_garbage_once_its_outcomes_are_written(tmp_path: Path) -> None:
    folder = stage(tmp_path / "session", ("alpha",))
    # The package's conftest notes every full collection that starts after the terminal summary,
    # until the interpreter's own at its exit (a forked session exits without one).
    seen = tmp_path / "collections"
    conftest = folder / "alpha" / "tests" / "conftest.py"
    conftest.write_text(
        conftest.read_text(encoding="utf-8")
        + textwrap.dedent(
            f"""
            import atexit
            import gc

            def _note(phase, info):
                if phase == "start" and info["generation"] == 2:
                    with open({str(seen)!r}, "a", encoding="utf-8") as out:
                        out.write("collected\\n")

            def pytest_terminal_summary():
                gc.callbacks.append(_note)
                atexit.register(gc.callbacks.remove, _note)
            """
        ),
        encoding="utf-8",
    )
    shared = run_session(folder, jobs=1, workers=0)
    assert shared["alpha"][1] == TestRun(True, "2 passed, 1 skipped", (), "")
    assert not seen.exists(), seen.read_text(encoding="utf-8")


def _digest_by_rglob(package: Path) -> str:
    """tree_digest as it was first written, with Paths: what it must still give."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(package).as_posix().encode("utf-8") + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def test_a_package_digest_reads_what_rglob_lists(tmp_path: Path) -> None:
    """Files in path order by parts ("a/b" before "a-b"), a link to a file read through, a link
    to a folder and a dangling link not entered, an empty folder adding nothing; any change of
    name or bytes changes the digest."""
    package = tmp_path / "pkg"
    (package / "a").mkdir(parents=True)
    (package / "a" / "b").write_text("inner", encoding="utf-8")
    (package / "a-b").write_text("beside", encoding="utf-8")
    (package / "empty").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.txt").write_text("far", encoding="utf-8")
    (package / "to_file").symlink_to(outside / "far.txt")
    (package / "to_folder").symlink_to(outside, target_is_directory=True)
    (package / "dangling").symlink_to(tmp_path / "missing")
    first = tree_digest(package)
    assert first == _digest_by_rglob(package)
    (package / "a" / "b").write_text("changed", encoding="utf-8")
    assert tree_digest(package) == _digest_by_rglob(package) != first
    (package / "a-b").rename(package / "a_b")
    assert tree_digest(package) == _digest_by_rglob(package)
    assert tree_digest(tmp_path / "absent") == _digest_by_rglob(tmp_path / "absent")
