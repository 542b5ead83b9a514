"""Children started with child_options die with their parent, even a SIGKILLed one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from builder.pipeline.children import BACKGROUND_NICE, child_options

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose (its parent just has not reaped it).
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ")[-1][0] != "Z"


def test_a_child_dies_when_its_parent_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    parent_code = textwrap.dedent(
        f"""
        import subprocess, sys, time
        from builder.pipeline.children import child_options
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"], **child_options()
        )
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code])
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the parent never started its child"
        time.sleep(0.05)
    child = int(pid_file.read_text())
    assert alive(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), "the child outlived its killed parent"


def test_a_timeout_ends_the_child_and_everything_it_started(tmp_path: Path) -> None:
    from builder.pipeline.children import run_captured

    pid_file = tmp_path / "grandchild.pid"
    code = textwrap.dedent(
        f"""
        import subprocess, sys, time
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(grandchild.pid))
        time.sleep(60)
        """
    )
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        # The grandchild inherits the output pipes: waiting for them to close would hang.
        run_captured([sys.executable, "-c", code], cwd=tmp_path, env=dict(os.environ), timeout=3)
    assert time.monotonic() - started < 30
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild), "the grandchild outlived the timed-out child"


#: Prints the niceness and the autogroup (``none`` without one) of a child started with
#: ``child_options(lowered=...)``.
SHOW_PRIORITY = (
    "import os, pathlib\n"
    "group = pathlib.Path('/proc/self/autogroup')\n"
    "print(os.nice(0), group.read_text().split()[-1] if group.exists() else 'none')\n"
)


def own_priority() -> tuple[int, str]:
    group = Path("/proc/self/autogroup")
    return os.nice(0), group.read_text().split()[-1] if group.exists() else "none"


@pytest.mark.parametrize("lowered", [False, True])
def test_a_lowered_child_runs_below_its_parent_and_its_session_group_too(lowered: bool) -> None:
    nice, group = own_priority()
    shown = subprocess.run(
        [sys.executable, "-c", SHOW_PRIORITY],
        capture_output=True,
        text=True,
        check=True,
        **child_options(lowered=lowered),
    ).stdout.split()
    steps = BACKGROUND_NICE if lowered else 0
    assert int(shown[0]) == min(19, nice + steps)
    if group != "none":
        # A session of its own is a scheduling group of its own where autogroups are on: as
        # heavy as the build's unless lowered with it.
        assert shown[1] == str(min(19, int(group) + steps) if lowered else 0)
