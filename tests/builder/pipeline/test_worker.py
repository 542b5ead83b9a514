"""The warm worker: a forked child is what a fresh ``python -m`` process would have been."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_package_tests import PACKAGES, stage

from builder.pipeline import worker as worker_module
from builder.pipeline.children import BACKGROUND_NICE
from builder.pipeline.package_tests import TestRun, run_package_tests
from builder.pipeline.worker import WarmWorker, run_module

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]

#: A module that reports how it was started, then exits with the status its first argument names.
SHOW = """
    import gc
    import json
    import os
    import sys

    print(json.dumps({
        "name": __name__,
        "argv": sys.argv[1:],
        "cwd": os.getcwd(),
        "path": sys.path,
        "pythonpath": os.environ.get("PYTHONPATH"),
        "offline": os.environ.get("MINDRIAN_OFFLINE"),
        "hashseed": os.environ.get("PYTHONHASHSEED"),
        "bytecode": [sys.dont_write_bytecode, os.environ.get("PYTHONDONTWRITEBYTECODE")],
        "plugins": os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"),
        "collecting": gc.isenabled(),
    }))
    print("to stderr", file=sys.stderr)
    code = sys.argv[1]
    sys.exit(int(code) if code.isdigit() else code)
"""

#: A module that waits until every child of its group has started: it only ends when they run
#: at the same time.
MEET = """
    import os
    import sys
    import time
    from pathlib import Path

    here = Path(sys.argv[1])
    (here / f"arrived-{os.getpid()}").touch()
    for _ in range(600):
        if len(list(here.glob("arrived-*"))) >= int(sys.argv[2]):
            print("met")
            sys.exit(0)
        time.sleep(0.1)
    sys.exit(5)
"""


def module(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return folder


def same(done: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("code", ["0", "3", "a message"])
def test_a_forked_child_sees_what_a_fresh_process_sees(tmp_path: Path, code: str) -> None:
    folder = module(tmp_path / "pkgs", "show", SHOW)
    work = tmp_path / "work"
    work.mkdir()
    with WarmWorker() as worker:
        warm = worker("show", (code,), work, (folder,), 60)
    cold = run_module("show", (code,), work, (folder,), 60)
    assert same(warm) == same(cold)
    assert warm.returncode == (int(code) if code.isdigit() else 1)
    assert '"name": "__main__"' in warm.stdout


def test_children_run_at_the_same_time(tmp_path: Path) -> None:
    folder = module(tmp_path / "pkgs", "meet", MEET)
    with WarmWorker() as worker:
        tickets = [
            worker.submit("meet", (str(tmp_path), "3"), tmp_path, (folder,), 120) for _ in range(3)
        ]
        done = [worker.result(t) for t in tickets]
    assert [(d.returncode, d.stdout) for d in done] == [(0, "met\n")] * 3


def test_threads_sharing_a_worker_each_get_their_own_answer_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = module(tmp_path / "pkgs", "meet", MEET)
    show = module(tmp_path / "other", "show", SHOW)
    cold: list[str] = []
    monkeypatch.setattr(worker_module, "run_module", lambda module, *args: cold.append(module))

    def meet_then_show(worker: WarmWorker, n: int) -> tuple[int, str, int]:
        # The four children end together, so their answers arrive while every thread waits.
        met = worker("meet", (str(tmp_path), "4"), tmp_path, (folder,), 20)
        shown = worker("show", (str(n),), tmp_path, (show,), 20)
        return met.returncode, met.stdout, json.loads(shown.stdout)["argv"] == [str(n)]

    with WarmWorker() as worker, ThreadPoolExecutor(4) as threads:
        done = list(threads.map(functools.partial(meet_then_show, worker), range(4)))
    assert cold == []
    assert done == [(0, "met\n", True)] * 4


def test_a_child_past_its_time_is_killed_and_the_others_finish(tmp_path: Path) -> None:
    folder = module(tmp_path / "pkgs", "meet", MEET)
    with WarmWorker() as worker:
        alone = worker.submit("meet", (str(tmp_path / "nobody"), "2"), tmp_path, (folder,), 2)
        (tmp_path / "nobody").mkdir()
        show = module(tmp_path / "other", "show", SHOW)
        fine = worker.submit("show", ("0",), tmp_path, (show,), 60)
        with pytest.raises(subprocess.TimeoutExpired):
            worker.result(alone)
        assert worker.result(fine).returncode == 0


def _kept(run: TestRun) -> tuple[bool, str, tuple[str, ...]]:
    return run.passed, run.summary, run.failures


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_generated_tests_have_the_outcome_of_a_fresh_pytest(tmp_path: Path, name: str) -> None:
    folder = stage(tmp_path, (name,))
    with WarmWorker() as worker:
        warm = run_package_tests(folder, name, runner=worker)
    assert _kept(warm) == _kept(run_package_tests(folder, name))


def test_a_real_package_s_tests_have_the_outcome_of_a_fresh_pytest(tmp_path: Path) -> None:
    """The worker has Agno and the runtime imported: pytest must still count the same outcomes
    and warnings (no plugin it loads was imported before it)."""
    shutil.copytree(ROOT / "generated" / "pws_validation", tmp_path / "pws_validation")
    with WarmWorker() as worker:
        warm = run_package_tests(tmp_path, "pws_validation", runner=worker)
    cold = run_package_tests(tmp_path, "pws_validation")
    assert _kept(warm) == _kept(cold)
    assert warm.passed and "warning" not in warm.summary
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pws_validation"]  # nothing left


#: A module that prints its niceness.
NICENESS = """
    import os

    print(os.nice(0))
"""


@pytest.mark.parametrize("lowered", [False, True])
def test_a_lowered_child_runs_below_the_build(tmp_path: Path, lowered: bool) -> None:
    folder = module(tmp_path / "pkgs", "niceness", NICENESS)
    with WarmWorker() as worker:
        done = worker("niceness", (), tmp_path, (folder,), 60, lowered=lowered)
    steps = BACKGROUND_NICE if lowered else 0
    assert int(done.stdout) == min(19, os.nice(0) + steps)
