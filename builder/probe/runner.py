"""Running phase 7's end-to-end probe from the builder: a fresh process per probe, or a warm
worker's fork.

:mod:`builder.probe.e2e` is what runs inside the subprocess; this module starts it with a clean
environment (no API keys, the package folder and the runtime on the path) and turns its output
into a :class:`ProbeResult`.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from builder.pipeline.services import ProbeResult, ProbeRunner
from builder.pipeline.worker import ModuleRunner, WarmWorker, run_module

__all__ = [
    "E2E_TIMEOUT_SECONDS",
    "PROBE_MODULE",
    "ProbeResult",
    "ProbeRunner",
    "WarmProbes",
    "run_probe",
]

#: The module a probe runs as ``__main__``.
PROBE_MODULE = "builder.probe.e2e"
#: Upper bound for the end-to-end probe subprocess.
E2E_TIMEOUT_SECONDS = 120.0


def run_probe(
    out_dir: Path,
    identifier: str,
    timeout: float = E2E_TIMEOUT_SECONDS,
    runner: ModuleRunner = run_module,
) -> ProbeResult:
    """``python -m builder.probe.e2e IDENTIFIER`` with ``out_dir`` on the path (through
    ``runner``: a fresh process, or a :class:`~builder.pipeline.worker.WarmWorker`); its JSON
    verdict."""
    try:
        done = runner(PROBE_MODULE, (identifier,), out_dir, (out_dir,), timeout)
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


@dataclass
class WarmProbes:
    """A :data:`ProbeRunner` whose probes run in a :class:`~builder.pipeline.worker.WarmWorker`.

    Each probe is a fork of the worker, judged exactly as :func:`run_probe`
    judges a fresh process; only importing the runtime is shared. A batch
    :meth:`plan` s the probes it will ask for, in order: up to ``at_once`` of
    them run ahead at a time, and asking for one takes its result and starts
    the next.
    """

    worker: WarmWorker
    """Runs the probes."""
    at_once: int = 1
    """Planned probes running ahead at a time."""
    timeout: float = E2E_TIMEOUT_SECONDS
    """Seconds one probe may take."""
    _planned: list[tuple[Path, str]] = field(default_factory=list)
    _running: dict[tuple[Path, str], int] = field(default_factory=dict)

    def plan(self, probes: Sequence[tuple[Path, str]]) -> None:
        """Probes (folder, identifier) that will be asked for, in that order; some start now."""
        self._planned.extend(p for p in probes if p[1].isidentifier())
        self._top_up()

    def __call__(self, out_dir: Path, identifier: str) -> ProbeResult:
        """Probe ``identifier`` under ``out_dir`` (see :func:`run_probe`)."""
        key = (out_dir, identifier)
        if key in self._planned:
            self._planned.remove(key)
        ticket = self._running.pop(key, None)
        if ticket is None:
            ticket = self._submit(key)
        try:
            done = self.worker.result(ticket)
        except subprocess.TimeoutExpired:
            return _timed_out(self.timeout)
        finally:
            self._top_up()
        return _verdict(done.returncode, done.stdout, done.stderr)

    def _submit(self, key: tuple[Path, str]) -> int:
        folder, identifier = key
        return self.worker.submit(PROBE_MODULE, (identifier,), folder, (folder,), self.timeout)

    def _top_up(self) -> None:
        while self._planned and len(self._running) < self.at_once:
            key = self._planned.pop(0)
            self._running[key] = self._submit(key)
