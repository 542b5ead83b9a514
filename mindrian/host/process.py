"""Running one command for the Bash tool: confined, bounded, and cleaned up.

The command runs in the workspace, in a new session (its own process group),
with stdin closed and an environment of a few harmless variables only (no
provider key, token or database URL of the parent process reaches it). Its
output (stdout and stderr together) is kept up to a cap and the rest counted;
when it outlives its timeout the whole process group is killed, and so are
children it left running after it exited. A process that starts a session of
its own leaves the group and is out of reach: the tool is no sandbox, which is
why commands need permission.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "KEPT_VARIABLES",
    "MAX_TIMEOUT_S",
    "OUTPUT_CAP",
    "CommandOutcome",
    "child_environment",
    "run_command",
    "shell_argv",
]

#: Seconds a command may run unless the call asks for less or more (Claude Code's default).
DEFAULT_TIMEOUT_S = 120.0
#: The longest a call may ask for.
MAX_TIMEOUT_S = 600.0
#: Characters of output the model is given (Claude Code's cap): the first and the last half.
OUTPUT_CAP = 30_000
#: The only variables a command inherits (when set): what programs need to find themselves.
KEPT_VARIABLES = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "USER", "LOGNAME")
_CHUNK = 65_536
#: Seconds given to the output of a killed group to drain.
_DRAIN_S = 2.0


@dataclass(frozen=True)
class CommandOutcome:
    """What a command did."""

    output: str
    """Its output, stdout and stderr interleaved; beyond the cap, its first and last halves
    around a line saying how much was cut."""
    exit_status: int | None
    """Its exit status; None when it was killed on timeout."""
    dropped: int = 0
    """Bytes of output cut from the middle."""

    def text(self, timeout: float) -> str:
        """The output as the model is told it, with how the command ended."""
        notes = []
        if self.exit_status is None:
            notes.append(f"[killed after {timeout:g} s: the command did not finish in time]")
        elif self.exit_status != 0:
            notes.append(f"[exit status {self.exit_status}]")
        return "\n".join([self.output.rstrip("\n"), *notes]).strip("\n")


def child_environment(parent: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``parent`` a command may see (see :data:`KEPT_VARIABLES`)."""
    return {name: parent[name] for name in KEPT_VARIABLES if name in parent}


def shell_argv(command: str) -> list[str]:
    """The argument vector running ``command`` in a shell (bash when there is one)."""
    return [shutil.which("bash") or "/bin/sh", "-c", command]


def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float = DEFAULT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    cap: int = OUTPUT_CAP,
) -> CommandOutcome:
    """Run ``argv`` in ``cwd`` and collect its output; never raises for the command's failure."""
    environment = child_environment(os.environ) if env is None else dict(env)
    program = shutil.which(argv[0], path=environment.get("PATH")) if "/" not in argv[0] else argv[0]
    if program is None:
        return CommandOutcome(f"{argv[0]}: command not found", 127)
    try:
        process = subprocess.Popen(
            [program, *argv[1:]],
            cwd=cwd,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as error:
        return CommandOutcome(f"{argv[0]}: {error.strerror}", 126)
    kept = _Kept(cap)
    timed_out = _collect(process, time.monotonic() + timeout, kept)
    process.wait()
    text, dropped = kept.text()
    return CommandOutcome(text, None if timed_out else process.returncode, dropped)


class _Kept:
    """The first and the last bytes of an output, enough for ``cap`` characters in all (the
    end of a test run's output says what failed), and how many bytes went by."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.half = cap * 2  # bytes for half the characters: a character takes at most four
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = max(0, self.half - len(self.head))
        self.head.extend(chunk[:room])
        self.tail.extend(chunk)
        del self.tail[: max(0, len(self.tail) - self.half)]

    def text(self) -> tuple[str, int]:
        """The output as text, cut in the middle beyond the cap; and the bytes cut."""
        whole = self.head.decode("utf-8", errors="replace")
        if self.total <= len(self.head) and len(whole) <= self.cap:
            return whole, 0
        first = whole[: self.cap // 2]
        last = self.tail.decode("utf-8", errors="replace")[-(self.cap // 2) :]
        cut = max(0, self.total - len(first.encode()) - len(last.encode()))
        return f"{first}\n[output cut: {cut} bytes not shown]\n{last}", cut


def _collect(process: subprocess.Popen[bytes], deadline: float, kept: _Kept) -> bool:
    """Read the output into ``kept`` until it ends; whether the command timed out.

    The group is killed at ``deadline``, and as soon as the command itself has
    exited (children it left behind would hold the pipe open).
    """
    assert process.stdout is not None
    timed_out = killed = False
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                if killed:
                    break  # the killed group's output did not drain in time
                timed_out = process.poll() is None
                killed = _kill_group(process)
                deadline = time.monotonic() + _DRAIN_S
                continue
            if not selector.select(timeout=min(left, 0.2)):
                if process.poll() is not None and not killed:
                    killed = _kill_group(process)
                continue
            chunk = os.read(process.stdout.fileno(), _CHUNK)
            if not chunk:
                break
            kept.add(chunk)
    process.stdout.close()
    _kill_group(process)
    return timed_out


def _kill_group(process: subprocess.Popen[bytes]) -> bool:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already
    return True
