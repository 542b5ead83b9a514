"""Running phase 7's end-to-end probe from the builder: one subprocess per probe, or a server.

:mod:`builder.probe.e2e` is what runs inside the subprocess; this module starts it with a clean
environment (no API keys, the package folder and the runtime on the path) and turns its output
into a :class:`ProbeResult`.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.pipeline.children import child_options, offline_env, run_captured

__all__ = ["E2E_TIMEOUT_SECONDS", "ProbeResult", "ProbeRunner", "ProbeServer", "run_probe"]

#: Upper bound for the end-to-end probe subprocess.
E2E_TIMEOUT_SECONDS = 120.0


@dataclass(frozen=True)
class ProbeResult:
    """The end-to-end probe's verdict, as parsed from the subprocess."""

    success: bool
    """The handoff succeeded offline."""
    summary: str
    """What happened, one line."""


#: Runs the probe for package ``identifier`` installed under ``out_dir``.
ProbeRunner = Callable[[Path, str], ProbeResult]


def run_probe(out_dir: Path, identifier: str, timeout: float = E2E_TIMEOUT_SECONDS) -> ProbeResult:
    """``python -m builder.probe.e2e IDENTIFIER`` with ``out_dir`` on the path; its JSON verdict."""
    command = [sys.executable, "-m", "builder.probe.e2e", identifier]
    try:
        done = run_captured(command, cwd=out_dir, env=offline_env(out_dir), timeout=timeout)
    except subprocess.TimeoutExpired:
        return _timed_out(timeout)
    return _verdict(done.returncode, done.stdout, done.stderr)


def _timed_out(timeout: float) -> ProbeResult:
    return ProbeResult(False, f"the end-to-end probe timed out after {timeout:g} s")


def _verdict(returncode: int, stdout: str, stderr: str) -> ProbeResult:
    """The probe's verdict from its exit status and output: the last JSON line of stdout."""
    # Libraries may log other lines before it.
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                break
            return ProbeResult(
                bool(data.get("success")) and returncode == 0, str(data.get("summary", ""))
            )
    tail = " | ".join(line.strip() for line in (stdout + stderr).splitlines()[-5:] if line.strip())
    return ProbeResult(False, f"the end-to-end probe exited {returncode} without a verdict: {tail}")


class ProbeServer:
    """A :data:`ProbeRunner` for batches: one ``python -m builder.probe.e2e --serve`` per output
    folder.

    Each probe still runs in a fresh process (a fork of the server, see
    :mod:`builder.probe.e2e`) and is judged exactly as :func:`run_probe` judges
    it; only importing the runtime is done once. :meth:`start` may be called
    early so the server loads while other work runs. A probe that times out
    fails as with :func:`run_probe` (the server is stopped, the next probe
    starts another); a server that cannot fork or dies hands its probes to
    :func:`run_probe`. Close it (or use it as a context manager) to stop it.
    """

    def __init__(self, timeout: float = E2E_TIMEOUT_SECONDS) -> None:
        self.timeout = timeout
        """Seconds one probe may take, the server's start included."""
        self._process: subprocess.Popen[bytes] | None = None
        self._out_dir: Path | None = None
        self._ready: bool | None = None
        self._pending = b""
        self._usable = True

    def __enter__(self) -> ProbeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, out_dir: Path) -> None:
        """Start the server for packages under ``out_dir`` unless it already runs there (or cannot
        serve)."""
        if not self._usable or (self._process is not None and self._out_dir == out_dir):
            return
        self.close()
        self._out_dir, self._ready, self._pending = out_dir, None, b""
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "builder.probe.e2e", "--serve"],
                cwd=out_dir,
                env=offline_env(out_dir),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                # One process group: a timeout stops the server and its forked probe; and
                # the server dies with the builder.
                **child_options(),
            )
        except OSError:
            self._usable = False  # run_probe will meet (and report) the same problem

    def __call__(self, out_dir: Path, identifier: str) -> ProbeResult:
        """Probe ``identifier`` under ``out_dir`` (see :func:`run_probe`)."""
        self.start(out_dir)
        if not self._usable or not identifier.isidentifier():
            return run_probe(out_dir, identifier, self.timeout)
        deadline = time.monotonic() + self.timeout
        try:
            if self._ready is None:
                self._ready = bool(self._read(deadline).get("ready"))
            if not self._ready:
                raise EOFError
            self._send(identifier)
            reply = self._read(deadline)
            return _verdict(int(reply["returncode"]), str(reply["stdout"]), str(reply["stderr"]))
        except TimeoutError:
            self.close(kill=True)
            return _timed_out(self.timeout)
        except (OSError, EOFError, ValueError, KeyError, TypeError):
            # No server to ask: this probe and the later ones run the usual way.
            self.close()
            self._usable = False
            return run_probe(out_dir, identifier, self.timeout)

    def _send(self, identifier: str) -> None:
        assert self._process is not None and self._process.stdin is not None
        self._process.stdin.write(identifier.encode("utf-8") + b"\n")
        self._process.stdin.flush()

    def _read(self, deadline: float) -> dict[str, Any]:
        """The server's next reply; TimeoutError past ``deadline``, EOFError when it has gone."""
        from builder.probe.e2e import REPLY_PREFIX

        assert self._process is not None and self._process.stdout is not None
        fd = self._process.stdout.fileno()
        while True:
            line, newline, rest = self._pending.partition(b"\n")
            if newline:
                self._pending = rest
                text = line.decode("utf-8", errors="replace")
                if text.startswith(REPLY_PREFIX):
                    reply = json.loads(text[len(REPLY_PREFIX) :])
                    if not isinstance(reply, dict):
                        raise ValueError("a reply must be a JSON object")
                    return reply
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError
            self._pending += chunk

    def close(self, *, kill: bool = False) -> None:
        """Stop the server; ``kill`` (or a server that does not stop) ends it and any probe it runs
        at once."""
        process, self._process = self._process, None
        if process is None:
            return
        if kill:
            _kill_group(process)
        try:
            if process.stdin is not None:
                process.stdin.close()  # the server's signal to finish
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            _kill_group(process)
        if process.stdout is not None:
            process.stdout.close()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the server's process group (it was started in a session of its own), else the server
    alone."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (AttributeError, OSError):
        process.kill()
    process.wait()
