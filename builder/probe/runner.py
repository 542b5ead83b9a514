"""Running phase 7's end-to-end probe from the builder: a fresh process per probe, or a warm
worker's fork.

:mod:`builder.probe.e2e` is what runs inside the subprocess; this module starts it with a clean
environment (no API keys, the package folder and the runtime on the path) and turns its output
into a :class:`ProbeResult`.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from builder.pipeline.package_tests import tree_digest
from builder.pipeline.probe_result import ProbeResult
from builder.pipeline.services import ProbeRunner
from builder.pipeline.worker import ModuleRunner, WarmWorker, run_module
from builder.probe.e2e import EACH

__all__ = [
    "E2E_TIMEOUT_SECONDS",
    "PROBES_PER_CHILD",
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


#: Planned probes one child runs one after the other (``--each``): a fork of the warm worker costs
#: a probe about as much as the probe itself (the pages it copies on write), and eight take
#: about a tenth of a second, so the first of them is not kept waiting long.
PROBES_PER_CHILD = 8

#: A probe: the folder its package is in, and the package's identifier.
Key = tuple[Path, str]


@dataclass
class WarmProbes:
    """A :data:`ProbeRunner` whose probes run in a :class:`~builder.pipeline.worker.WarmWorker`.

    Each probe is judged exactly as :func:`run_probe` judges a fresh process;
    only importing the runtime is shared. A batch :meth:`plan` s the probes it
    will ask for, in order: up to ``at_once`` children run ahead at a time,
    each probing up to ``per_child`` planned packages one after the other
    (:func:`builder.probe.e2e.probe_each`), and asking for one takes its
    result and starts the next. A package's success in such a child is its
    verdict; a package that fails there, or that the child did not report
    on (it timed out, crashed, or exited early), is probed again alone, so a
    failure is always what a process of its own found. A success found
    elsewhere (:meth:`passed`: a shared test session probing what it tested)
    answers for a package whose files are exactly the ones probed there; it is
    neither planned nor probed again.
    """

    worker: WarmWorker
    """Runs the probes."""
    at_once: int = 1
    """Children running planned probes ahead at a time."""
    timeout: float = E2E_TIMEOUT_SECONDS
    """Seconds one probe may take (and one child probing several)."""
    per_child: int = PROBES_PER_CHILD
    """Planned probes one child runs at most."""
    more: Callable[[], None] | None = None
    """Brings the plan up to date (:meth:`plan` s what is ready by now); asked for a probe it was
    not told of, it calls this first, so the probe shares a child with those."""
    _planned: list[Key] = field(default_factory=list)
    _running: dict[Key, int] = field(default_factory=dict)
    _children: dict[int, tuple[Key, ...]] = field(default_factory=dict)
    _found: dict[Key, ProbeResult] = field(default_factory=dict)
    #: By package identifier: the tree digest of the files a success elsewhere was found for, and
    #: that success (:meth:`passed`; filled from other threads, hence the lock).
    _passed: dict[str, tuple[str, ProbeResult]] = field(default_factory=dict)
    _passing: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def passed(self, successes: Mapping[str, tuple[str, ProbeResult]]) -> None:
        """Successes found elsewhere, by package identifier: the :func:`tree_digest` of the
        package probed and its verdict; each answers once, for a package with those files."""
        with self._passing:
            self._passed.update(successes)

    def plan(self, probes: Sequence[Key]) -> None:
        """Probes (folder, identifier) that will be asked for, in that order; some start now."""
        for key in probes:
            if key[1].isidentifier() and not self._known_passed(key):
                self._planned.append(key)
        self._top_up()

    def _known_passed(self, key: Key) -> bool:
        """Whether a success found elsewhere answers for ``key`` (kept as its verdict)."""
        folder, identifier = key
        with self._passing:
            found = self._passed.pop(identifier, None)
        if found is None or found[0] != tree_digest(folder / identifier):
            return False
        self._found[key] = found[1]
        return True

    def __call__(self, out_dir: Path, identifier: str) -> ProbeResult:
        """Probe ``identifier`` under ``out_dir`` (see :func:`run_probe`)."""
        key = (out_dir, identifier)
        if self.more is not None and not self._knows(key):
            self.more()
        if not self._knows(key):
            self._known_passed(key)
        if key in self._planned:
            # Not started yet: it starts now, first of a child of the probes planned after it.
            self._planned.remove(key)
            self._start(self._next_child(key))
        try:
            if key not in self._found and key in self._running:
                self._collect(self._running[key])
            found = self._found.pop(key, None)
            return found if found is not None else self._alone(key)
        finally:
            self._top_up()

    def _knows(self, key: Key) -> bool:
        return key in self._planned or key in self._running or key in self._found

    def _alone(self, key: Key) -> ProbeResult:
        """``key`` probed in a child of its own."""
        folder, identifier = key
        ticket = self.worker.submit(PROBE_MODULE, (identifier,), folder, (folder,), self.timeout)
        return self._verdicts(ticket, (key,)).get(key) or _timed_out(self.timeout)

    def _collect(self, ticket: int) -> None:
        """Keep the verdicts of a child running ahead until they are asked for."""
        keys = self._children.pop(ticket)
        for key in keys:
            del self._running[key]
        self._found.update(self._verdicts(ticket, keys))

    def _verdicts(self, ticket: int, keys: tuple[Key, ...]) -> dict[Key, ProbeResult]:
        """What the child of ``ticket`` found: a probe alone always gives its verdict, several
        probes in one child only their successes."""
        try:
            done = self.worker.result(ticket)
        except subprocess.TimeoutExpired:
            return {keys[0]: _timed_out(self.timeout)} if len(keys) == 1 else {}
        if len(keys) == 1:
            return {keys[0]: _verdict(done.returncode, done.stdout, done.stderr)}
        if done.returncode != 0:
            return {}
        passed = _passed(done.stdout)
        return {key: passed[key[1]] for key in keys if key[1] in passed}

    def _top_up(self) -> None:
        """Start children for the planned probes: up to :attr:`at_once`, each with
        :attr:`per_child` of them, but for one child started with fewer when none runs (probes are
        planned a few at a time as skills finish their parallel phases)."""
        while self._planned and len(self._children) < self.at_once:
            if self._children and len(self._planned) < self.per_child:
                break
            self._start(self._next_child())

    def _start(self, keys: tuple[Key, ...]) -> None:
        """One child probing ``keys`` (alone, as :func:`run_probe` does, when there is one)."""
        if len(keys) == 1:
            folder, identifier = keys[0]
            args: tuple[str, ...] = (identifier,)
        else:
            folder, _ = keys[0]
            args = (EACH, *(str(part) for key in keys for part in key))
        ticket = self.worker.submit(PROBE_MODULE, args, folder, (folder,), self.timeout)
        self._children[ticket] = keys
        self._running.update(dict.fromkeys(keys, ticket))

    def _next_child(self, first: Key | None = None) -> tuple[Key, ...]:
        """``first`` and the next planned probes, for one child: up to :attr:`per_child`,
        identifiers distinct."""
        keys = [first] if first is not None else []
        while self._planned and len(keys) < max(1, self.per_child):
            if any(k[1] == self._planned[0][1] for k in keys):
                break
            keys.append(self._planned.pop(0))
        return tuple(keys)


def _passed(stdout: str) -> dict[str, ProbeResult]:
    """By identifier, the packages an ``--each`` child reported a success for."""
    passed = {}
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue  # a library's log line
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and data.get("success") is True and "probe" in data:
            passed[str(data["probe"])] = ProbeResult(True, str(data.get("summary", "")))
    return passed
