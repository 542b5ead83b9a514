"""A warm worker: ``python -m MODULE ARGS`` children of the builder without paying their imports.

Phase 6 runs a package's generated tests (``python -m pytest ...``) and phase 7
its end-to-end probe (``python -m builder.probe.e2e IDENTIFIER``); each child
used to import Agno and the runtime itself, about 1.5 s. A :class:`WarmWorker`
starts one server (``python -m builder.pipeline.worker``) that imports them
once, while the build's first phases run, and then forks a child per request.
The child becomes what the command would have been: its working folder, its
folders first on ``sys.path`` and in ``PYTHONPATH``, its ``sys.argv``, its
own stdout and stderr, and the module run as ``__main__``. Nothing a child
does survives it, and several run at once (a batch's probes).

The server imports the pytest plugins the builder's test runs load (``-p``)
too: pytest would warn of a plugin imported before it could rewrite its
asserts, but those runs rewrite none (``--assert=plain``), so a forked run
counts the same outcomes and warnings as a fresh one. It imports no module a
child runs (``-m``), which would then run as a second copy. No provider's SDK is
imported: generated tests build their models as stand-ins
(:class:`~mindrian.testing.contract.StandInModel`) and probes script theirs.
Before the first fork it freezes what it imported out of the garbage
collector's reach, so a child's collections (pytest runs some at the end of a
session) neither walk nor copy those pages; while it imports it collects
nothing (collections cost a fresh process a sixth of its import time), and it
caches its imports' bytecode as the builder does.

Every child dies with the server and the server with the builder
(:mod:`builder.pipeline.children`); a child past its time is killed with its
process group. Where ``fork`` is missing, the runtime started a thread, or
the server dies, :meth:`WarmWorker.run` runs the command as a fresh process
(:func:`~builder.pipeline.children.run_captured`), so results never depend on
whether a worker was used.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import runpy
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO

from builder.pipeline.children import (
    background,
    child_options,
    die_with_parent,
    offline_env,
    run_captured,
    runtime_root,
)
from mindrian.agent_types import AGENT_TYPES

__all__ = [
    "REPLY_PREFIX",
    "WARM_MODULES",
    "ModuleRunner",
    "WarmWorker",
    "main",
    "run_module",
    "serve",
]

#: Starts every line the server writes for its caller; anything else on its stdout is noise.
REPLY_PREFIX = "mindrian-worker: "
#: pytest's own plugins a test run imports as it starts (``import pytest`` imports the others).
_SESSION_PLUGINS = (
    "faulthandler",
    "helpconfig",
    "setuponly",
    "setupplan",
    "skipping",
    "threadexception",
    "tracemalloc",
    "unraisableexception",
    "warnings",
    "_argcomplete",
)
#: What every test run and probe imports whatever the package: loaded once, before any fork.
WARM_MODULES = (
    "pytest",
    # pytest's plugins that ``import pytest`` leaves to a run's start, and what they import then
    # (debugging: pdb), besides those the builder's runs block; and the runs' own plugins (see the
    # module docstring): about 10 ms of every test run.
    *(f"_pytest.{name}" for name in _SESSION_PLUGINS),
    "pdb",
    "mindrian.testing.pytest_plugin",
    "builder.pipeline.pytest_outcomes",
    "builder.probe.session",
    "mindrian.testing",
    "mindrian.testing.contract",
    *(record.module for record in AGENT_TYPES),
    "mindrian.handoff",
    # What Agno and the runtime import on an agent's first run (a probe's, a test's), which every
    # child would import again: about 4 ms of a 15 ms probe.
    "mindrian.agents.package",
    "mindrian.agents.references",
    "mindrian.agents.tools",
    "agno.agent._hooks",
    "agno.agent._response",
    "agno.agent._telemetry",
    "agno.utils.callables",
    "pydantic.type_adapter",
)
#: Seconds the server may take to import :data:`WARM_MODULES` before requests go to fresh
#: processes instead.
_START_SECONDS = 60.0
#: Extra seconds the caller waits beyond a request's own timeout (the server kills the child at
#: its timeout and then answers).
_SLACK_SECONDS = 10.0

#: ``run(module, args, cwd, folders, timeout)``: ``python -m module *args`` in ``cwd`` with
#: ``folders`` first on the import path, offline; raises ``subprocess.TimeoutExpired`` after
#: ``timeout`` seconds.
ModuleRunner = Callable[
    [str, Sequence[str], Path, Sequence[Path], float], subprocess.CompletedProcess[str]
]


def run_module(
    module: str, args: Sequence[str], cwd: Path, folders: Sequence[Path], timeout: float
) -> subprocess.CompletedProcess[str]:
    """The cold :data:`ModuleRunner`: a fresh ``python -m`` process (see
    :func:`~builder.pipeline.children.run_captured`)."""
    env = offline_env(folders[0])
    env["PYTHONPATH"] = os.pathsep.join([*map(str, folders), str(runtime_root())])
    command = [sys.executable, "-m", module, *args]
    return run_captured(command, cwd=cwd, env=env, timeout=timeout)


@dataclass
class _Pending:
    """A request the server has not answered yet (caller side)."""

    command: tuple[str, tuple[str, ...], Path, tuple[Path, ...], float]
    """What to run, kept to run it cold if the server goes away."""
    deadline: float
    """When the caller stops waiting for the server's answer."""


@dataclass
class WarmWorker:
    """A :data:`ModuleRunner` backed by one warm server; see the module docstring.

    :meth:`start` may be called early so the server imports while other work
    runs; :meth:`submit` and :meth:`result` let several requests run at once,
    from several threads (a batch's shared test sessions beside its probes):
    one thread at a time reads the server's answers, for every waiting thread.
    Close it (or use it as a context manager) to stop the server.
    """

    home: Path | None = None
    """The server's working folder (the project being built, so it is seen to belong to it); None
    for the runtime's folder. Nothing is imported from it."""
    _process: subprocess.Popen[bytes] | None = None
    _ready: bool | None = None
    _usable: bool = True
    _buffer: bytes = b""
    _next: int = 0
    _pending: dict[int, _Pending] = field(default_factory=dict)
    _answers: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: Guards everything above; notified when answers arrive or the reader stops.
    _arrived: threading.Condition = field(
        default_factory=lambda: threading.Condition(threading.RLock()), repr=False
    )
    #: A thread is reading the server's answers (outside the lock).
    _reading: bool = False

    def __enter__(self) -> WarmWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the server unless it runs already (or cannot)."""
        with self._arrived:
            self._start()

    def _start(self) -> None:
        if self._process is not None or not self._usable:
            return
        self._buffer = b""
        runtime = runtime_root()
        env = offline_env(runtime)
        env["PYTHONPATH"] = str(runtime)  # a child's path is then a fresh process's (``_become``)
        if not sys.dont_write_bytecode:
            # The server's imports are the runtime's, their bytecode cached as the builder's is;
            # it writes none once it serves (``serve``), so no child does.
            del env["PYTHONDONTWRITEBYTECODE"]
        try:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "builder.pipeline.worker",
                    str(self.home or runtime),
                ],
                cwd=runtime,  # ``-m`` imports from here; the server then moves to ``home``
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                **child_options(),
            )
        except OSError:
            self._usable = False

    def pipes(self) -> tuple[int, ...]:
        """This process's ends of the server's pipes, none before it starts: a process forked
        from this one (a batch's pool worker) closes them."""
        with self._arrived:
            process = self._process
        if process is None:
            return ()
        return tuple(p.fileno() for p in (process.stdin, process.stdout) if p is not None)

    def __call__(
        self,
        module: str,
        args: Sequence[str],
        cwd: Path,
        folders: Sequence[Path],
        timeout: float,
        *,
        lowered: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """Run one command and wait for it (a :data:`ModuleRunner`)."""
        return self.result(self.submit(module, args, cwd, folders, timeout, lowered=lowered))

    def submit(
        self,
        module: str,
        args: Sequence[str],
        cwd: Path,
        folders: Sequence[Path],
        timeout: float,
        *,
        lowered: bool = False,
    ) -> int:
        """Start one command in a forked child; a ticket for :meth:`result`. ``lowered``: the
        child runs below the build, in a session of its own
        (:func:`~builder.pipeline.children.background`): nothing the build's own process does
        next waits for it (a shared test session, not a probe)."""
        with self._arrived:
            self._start()
            ticket, self._next = self._next, self._next + 1
            command = (module, tuple(args), cwd, tuple(folders), timeout)
            deadline = time.monotonic() + timeout + _SLACK_SECONDS
            self._pending[ticket] = _Pending(command, deadline)
            if self._serving():
                request = {
                    "id": ticket,
                    "module": module,
                    "args": list(args),
                    "cwd": str(cwd),
                    "path": [str(f) for f in folders],
                    "timeout": timeout,
                    "lowered": lowered,
                }
                self._send(request)
        return ticket

    def result(self, ticket: int) -> subprocess.CompletedProcess[str]:
        """The finished command of ``ticket``; ``subprocess.TimeoutExpired`` past its timeout."""
        with self._arrived:
            pending = self._pending[ticket]
        while (process := self._awaits(ticket, pending.deadline)) is not None:
            try:
                answers, failed = self._read(process, pending.deadline), False
            except (OSError, EOFError, TimeoutError, ValueError):
                answers, failed = {}, True
            with self._arrived:
                self._reading = False
                self._answers.update(answers)
                if failed:
                    self._fail()
                self._arrived.notify_all()
        with self._arrived:
            del self._pending[ticket]
            answer = self._answers.pop(ticket, None)
        module, args, cwd, folders, timeout = pending.command
        if answer is None:
            return run_module(module, args, cwd, folders, timeout)
        command = [sys.executable, "-m", module, *args]
        if answer.get("timed_out"):
            raise subprocess.TimeoutExpired(command, timeout)
        return subprocess.CompletedProcess(
            command, int(answer["returncode"]), str(answer["stdout"]), str(answer["stderr"])
        )

    def _awaits(self, ticket: int, deadline: float) -> subprocess.Popen[bytes] | None:
        """The server to read the answer of ``ticket`` from, this thread being the one reading;
        None once it is answered or the server is gone. Waits while another thread reads."""
        with self._arrived:
            while ticket not in self._answers and self._serving():
                if not self._reading:
                    self._reading = True
                    return self._process
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._fail()  # as a reader past its deadline would
                    break
                self._arrived.wait(remaining)
            return None

    def _fail(self) -> None:
        """The server stopped answering: stop it; this request and later ones run cold."""
        self.close()
        self._usable = False

    def _serving(self) -> bool:
        """Whether requests go to the server: it started and said it can fork."""
        if self._process is None or not self._usable:
            return False
        if self._ready is None:
            try:
                first = self._read(self._process, time.monotonic() + _START_SECONDS)
                self._ready = bool(first.get(-1, {}).get("ready"))
            except (OSError, EOFError, TimeoutError, ValueError):
                self._ready = False
            if not self._ready:
                self._fail()
        return bool(self._ready)

    def _send(self, request: dict[str, Any]) -> None:
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
            self._process.stdin.flush()
        except OSError:
            self._fail()

    def _read(self, process: subprocess.Popen[bytes], deadline: float) -> dict[int, dict[str, Any]]:
        """The next reply of the server ``process`` by ticket (-1 for its greeting); TimeoutError
        past ``deadline``, EOFError when it has gone."""
        assert process.stdout is not None
        fd = process.stdout.fileno()
        while True:
            line, newline, rest = self._buffer.partition(b"\n")
            if newline:
                self._buffer = rest
                text = line.decode("utf-8", errors="replace")
                if text.startswith(REPLY_PREFIX):
                    reply = json.loads(text[len(REPLY_PREFIX) :])
                    if not isinstance(reply, dict):
                        raise ValueError("a reply must be a JSON object")
                    return {int(reply.get("id", -1)): reply}
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError
            self._buffer += chunk

    def close(self) -> None:
        """Stop the server and any child it still runs, at once: it keeps nothing worth a clean
        shutdown, which would cost as long again as its imports."""
        with self._arrived:
            process, self._process, self._ready = self._process, None, None
            # A thread reading the server's output stops at its end of file, and its pipe is left
            # to close with the process object: the number must not name another file meanwhile.
            reading = self._reading
            self._arrived.notify_all()
        if process is None:
            return
        _kill_group(process.pid)
        process.wait()
        for pipe in (process.stdin, None if reading else process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):  # a request it never read
                    pipe.close()


def _kill_group(leader: int) -> None:
    """Kill a process group started with ``start_new_session`` (its leader's pid names it)."""
    try:
        os.killpg(leader, signal.SIGKILL)
    except OSError:
        pass


# The server side: ``python -m builder.pipeline.worker``.


@dataclass
class _Child:
    """A forked child the server runs (server side)."""

    ticket: int
    """The caller's ticket."""
    pid: int
    """Its process id (and process group)."""
    done: int
    """Read end of a pipe only the child holds open: end of file when it exits."""
    out: IO[bytes]
    """Its stdout."""
    err: IO[bytes]
    """Its stderr."""
    deadline: float
    """When it is killed."""
    timed_out: bool = False
    """It was killed at its deadline."""


def _reply(out: TextIO, **fields: Any) -> None:
    out.write(REPLY_PREFIX + json.dumps(fields, sort_keys=True, ensure_ascii=False) + "\n")
    out.flush()


def _fork_refusal() -> str:
    """Why this process must not fork, or ``""`` when it may."""
    if not hasattr(os, "fork"):
        return "os.fork is not available on this platform"
    if threading.active_count() != 1:
        # A fork copies locks held by other threads; the child could hang on one.
        return f"the runtime started {threading.active_count() - 1} thread(s) while importing"
    return ""


def _become(request: dict[str, Any]) -> int:
    """In the forked child: run ``python -m MODULE ARGS`` as the request says; its exit status."""
    cwd = str(request["cwd"])
    folders = [str(f) for f in request["path"]]
    os.chdir(cwd)
    os.environ["PYTHONPATH"] = os.pathsep.join([*folders, str(runtime_root())])
    sys.path[0:1] = [cwd, *folders]  # ``-m`` puts the working folder first
    sys.argv = [str(request["module"]), *map(str, request["args"])]
    importlib.invalidate_caches()  # the package may be newer than the path caches
    try:
        runpy.run_module(str(request["module"]), run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = stop.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    return 0


def _fork(request: dict[str, Any], replies: TextIO) -> _Child:
    """Start one request in a forked child (output kept in temporary files)."""
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    done, holds = os.pipe()
    server = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child
        status = 70
        try:
            die_with_parent(server)  # a killed server takes its children with it
            # A group of its own: a timeout kills whatever it started too.
            if request.get("lowered"):
                os.setsid()  # and a scheduling group of its own, below the server's
                background(server)
            else:
                os.setpgid(0, 0)
            os.close(replies.fileno())  # only the server answers the caller
            os.close(done)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            status = _become(request)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    os.close(holds)
    deadline = time.monotonic() + float(request["timeout"])
    return _Child(int(request["id"]), pid, done, out, err, deadline)


def _finish(child: _Child, replies: TextIO) -> None:
    """Reap a child whose pipe ended and answer for it."""
    _, status = os.waitpid(child.pid, 0)
    os.close(child.done)
    texts = []
    for handle in (child.out, child.err):
        handle.seek(0)
        texts.append(handle.read().decode("utf-8", errors="replace"))
        handle.close()
    _reply(
        replies,
        id=child.ticket,
        returncode=os.waitstatus_to_exitcode(status),
        stdout=texts[0],
        stderr=texts[1],
        timed_out=child.timed_out,
    )


def _warm_up() -> None:
    """Import what the children share, then leave the process as they should start."""
    # Imports make many objects and little garbage: collecting while they run costs a sixth of
    # their time, and collecting once at the end a tenth of a second to free a few thousand
    # objects, which stay (frozen: no child walks them).
    gc.disable()
    for name in WARM_MODULES:
        importlib.import_module(name)
    gc.freeze()
    gc.enable()  # for the children, as in a fresh process
    sys.dont_write_bytecode = True  # nor do they write bytecode (offline_env)
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"


def serve(requests: IO[Any], replies: TextIO) -> int:
    """Answer every request line of ``requests``, running them at once, until it ends and every
    child has finished; see the module docstring."""
    _warm_up()
    refusal = _fork_refusal()
    _reply(replies, ready=not refusal, reason=refusal)
    if refusal:
        return 0
    running: dict[int, _Child] = {}
    reading, pending = True, b""
    while reading or running:
        now = time.monotonic()
        for child in running.values():
            if not child.timed_out and child.deadline <= now:
                child.timed_out = True
                _kill_group(child.pid)
        waits = [c.deadline - now for c in running.values() if not c.timed_out]
        watched = [*running, *([requests.fileno()] if reading else [])]
        ready = select.select(watched, [], [], max(0.0, min(waits)) if waits else None)[0]
        for fd in ready:
            if fd in running:
                _finish(running.pop(fd), replies)
                continue
            chunk = os.read(fd, 65536)
            reading = bool(chunk)
            *lines, pending = (pending + chunk).split(b"\n")
            for line in filter(bytes.strip, lines):
                child = _fork(json.loads(line), replies)
                running[child.done] = child
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m builder.pipeline.worker HOME``: serve requests from stdin (see :func:`serve`)
    in the folder ``HOME``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m builder.pipeline.worker HOME", file=sys.stderr)
        return 2
    os.chdir(args[0])  # the import path is fixed already: nothing is imported from HOME
    # The protocol gets its own copy of stdout, so stray prints of the runtime cannot corrupt it.
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    return serve(sys.stdin, replies)


if __name__ == "__main__":
    raise SystemExit(main())
