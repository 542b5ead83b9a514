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

from builder.pipeline.children import BACKGROUND_NICE

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
    deadline = time.monotonic() + 60  # a bound on a hang
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), "the child outlived its killed parent"


def test_a_timeout_ends_the_child_and_everything_it_started(tmp_path: Path) -> None:
    from builder.pipeline.children import run_captured

    pid_file = tmp_path / "grandchild.pid"
    code = textwrap.dedent(
        f"""
        import os, time
        grandchild = os.fork()  # no import to wait for: the pid is written at once
        if grandchild == 0:
            time.sleep(120)
            os._exit(0)
        open({str(pid_file)!r}, "w").write(str(grandchild))
        time.sleep(120)
        """
    )
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        # The grandchild inherits the output pipes: waiting for them to close would hang. The
        # timeout leaves a loaded machine time to start the child before it is ended.
        run_captured([sys.executable, "-c", code], cwd=tmp_path, env=dict(os.environ), timeout=10)
    assert time.monotonic() - started < 60
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 60  # a bound on a hang
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild), "the grandchild outlived the timed-out child"


#: Runs ``background`` below the process named by its argument, then prints its niceness and
#: its autogroup's (``none`` without autogroups).
LOWERED = (
    "import os, pathlib, sys\n"
    "from builder.pipeline.children import background\n"
    "background(int(sys.argv[1]))\n"
    "group = pathlib.Path('/proc/self/autogroup')\n"
    "shown = group.read_text().split() if group.exists() else []\n"
    "print(os.nice(0), shown[-1] if shown else 'none')\n"
)


def own_priority() -> tuple[int, str]:
    # Some sandboxes (the CI's among them) show an empty autogroup file: no groups there either.
    group = Path("/proc/self/autogroup")
    shown = group.read_text().split() if group.exists() else []
    return os.nice(0), shown[-1] if shown else "none"


@pytest.mark.parametrize("own_session", [False, True])
def test_a_helper_runs_below_the_build_and_so_does_its_session_s_group(own_session: bool) -> None:
    nice, group = own_priority()
    shown = subprocess.run(
        [sys.executable, "-c", LOWERED, str(os.getpid())],
        capture_output=True,
        text=True,
        check=True,
        start_new_session=own_session,
    ).stdout.split()
    assert int(shown[0]) == min(19, nice + BACKGROUND_NICE)
    if group != "none":
        # A session of its own is a scheduling group of its own where autogroups are on, as heavy
        # as the build's unless lowered with it; the build's own group is left as it is.
        lowered = min(19, int(group) + BACKGROUND_NICE)
        assert shown[1] == (str(lowered) if own_session else group)


@pytest.mark.parametrize("lowered", [False, True])
def test_a_warm_worker_s_child_dies_when_the_build_is_killed(tmp_path: Path, lowered: bool) -> None:
    """The build SIGKILLed alone (as the kill suite does): its warm worker and what the worker
    forked, a lowered child in a session of its own too, die with it; no killpg is needed."""
    pid_file = tmp_path / "child.pid"
    (tmp_path / "sleeper.py").write_text(
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(300)\n"
    )
    parent_code = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from builder.pipeline.worker import WarmWorker
        worker = WarmWorker()
        folder = Path({str(tmp_path)!r})
        worker.submit("sleeper", (), folder, (folder,), 60, lowered={lowered!r})
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code])
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the worker never started its child"
        time.sleep(0.05)
    child = int(pid_file.read_text())
    server = int(Path(f"/proc/{child}/stat").read_text().split(") ")[-1].split()[1])
    assert alive(child) and alive(server) and os.getsid(child) != os.getsid(parent.pid)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 60  # a bound on a hang
    while (alive(child) or alive(server)) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in (server, child) if alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "the warm worker or its child outlived the killed build"
