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
#: Characters of output the model is given (Claude Code's cap); the rest is counted, not kept.
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
    """Its output, stdout and stderr interleaved, cut at the cap."""
    exit_status: int | None
    """Its exit status; None when it was killed on timeout."""
    dropped: int = 0
    """Bytes of output beyond the cap."""

    def text(self, timeout: float) -> str:
        """The output as the model is told it, with what was cut and how the command ended."""
        notes = []
        if self.dropped:
            notes.append(f"[output cut: {self.dropped} more bytes not shown]")
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
    kept, dropped, timed_out = _collect(process, time.monotonic() + timeout, cap)
    process.wait()
    text = kept.decode("utf-8", errors="replace")
    if len(text) > cap:
        dropped += len(text[cap:].encode("utf-8"))
        text = text[:cap]
    return CommandOutcome(text, None if timed_out else process.returncode, dropped)


def _collect(
    process: subprocess.Popen[bytes], deadline: float, cap: int
) -> tuple[bytes, int, bool]:
    """Read the output until it ends: (kept bytes, bytes dropped, whether it timed out).

    The group is killed at ``deadline``, and as soon as the command itself has
    exited (children it left behind would hold the pipe open).
    """
    assert process.stdout is not None
    kept = bytearray()
    dropped = 0
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
            room = max(0, cap * 4 - len(kept))  # bytes: a character takes at most four
            kept.extend(chunk[:room])
            dropped += len(chunk) - min(room, len(chunk))
    process.stdout.close()
    _kill_group(process)
    return bytes(kept), dropped, timed_out


def _kill_group(process: subprocess.Popen[bytes]) -> bool:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already
    return True
