"""Phase 7's end-to-end probe: import a generated package and hand its agent one task.

Run as ``python -m builder.probe.e2e IDENTIFIER`` with the package's folder on
``PYTHONPATH``. It installs the offline guard of :mod:`mindrian.testing`, gives
the agent a :class:`~mindrian.testing.ScriptedModel` scripted for its type,
registers it with a :class:`~mindrian.handoff.HandoffManager`, runs one DELEGATE
handoff and prints one JSON object (:class:`ProbeOutcome`) on stdout. Exit
status 0 means the handoff succeeded offline; 1 means it did not, and the JSON
says why. This module is fixed code: nothing about the package is rendered into it.

A build usually runs it as a fork of :mod:`builder.pipeline.worker`, which has
the runtime imported already; the probe is the same either way.
``python -m builder.probe.e2e --each FOLDER IDENTIFIER [FOLDER IDENTIFIER ...]``
probes several packages one after the other in this process, each with its
folder as the working folder and in place of this process's own on the import
path, and prints one JSON line per package (its identifier under ``probe``):
a batch's probes then share the cost of a process (:class:`~builder.probe.runner.WarmProbes`,
which judges a package that fails among others again alone).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from mindrian.agents import MindrianAgent

__all__ = [
    "EACH",
    "PROBE_AGENT",
    "PROBE_TASK",
    "ProbeOutcome",
    "main",
    "probe",
    "probe_each",
]

#: The option that probes several packages in one process (see the module docstring).
EACH = "--each"

#: The agent the probe's handoff comes from.
PROBE_AGENT = "e2e-probe"
#: The task every probed agent is given.
PROBE_TASK = "End-to-end probe: assess the scripted challenge"
#: Seconds the one handoff may take (the scripted model answers at once).
HANDOFF_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class ProbeOutcome:
    """What the probe found, printed as JSON (no durations, so the text is deterministic)."""

    success: bool
    """The handoff returned ``success=True`` and nothing tried to reach a real model or the
    network."""
    agent_id: str
    """The agent's id, empty when the package could not be imported."""
    agent_type: str
    """The agent's type, empty when unknown."""
    summary: str
    """One line: what happened, or the error."""


def _agent_class(package: ModuleType) -> type[MindrianAgent]:
    from mindrian.agents import MindrianAgent

    names = getattr(package, "__all__", ())
    found = [getattr(package, n) for n in names if isinstance(getattr(package, n, None), type)]
    agents: list[type[MindrianAgent]] = [c for c in found if issubclass(c, MindrianAgent)]
    if len(agents) != 1:
        raise LookupError(
            f"package {package.__name__} must export exactly one agent class in __all__, found "
            f"{len(agents)}"
        )
    return agents[0]


def _structured_answer(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A structured answer valid for the agent's output schema (when it has one): every declared
    score at mid-range, and the least ``data`` of the skill's output example when it shows one."""
    from mindrian.agents.output import data_sample

    scores = {
        s["name"]: (float(s["minimum"]) + float(s["maximum"])) / 2 for s in spec.get("scores") or ()
    }
    answer = {
        "output": "# Probe result\n\nScripted answer of the end-to-end probe.",
        "key_findings": ["the package imports and answers a handoff"],
        "recommendations": ["none: this is a probe"],
        "confidence": 0.5,
        "scores": scores,
        "open_questions": [],
    }
    data = ((spec.get("handoff") or {}).get("returns") or {}).get("data_schema")
    if data:
        answer["data"] = data_sample(data)
    return answer


def _scripted(cls: type[MindrianAgent], spec: Mapping[str, Any], state_dir: Path) -> MindrianAgent:
    """An instance of the agent class whose every model is scripted for one handoff, as its
    type's contract scripts it."""
    from mindrian.testing.contract import contract_for

    return contract_for(cls).probe_agent(PROBE_TASK, _structured_answer(spec), state_dir)


def _handoff(agent_id: str, agent: Any) -> Any:
    from mindrian.handoff import HandoffManager

    manager = HandoffManager()
    manager.register_agent(agent_id, agent)
    # An agent that names its callers refuses anyone else, the probe included.
    callers = sorted(getattr(agent, "allowed_callers", ()))
    context = manager.create_delegation(
        from_agent=callers[0] if callers else PROBE_AGENT,
        to_agent=agent_id,
        task=PROBE_TASK,
        problem_clarity={
            "what": "a scripted challenge",
            "who": "the builder",
            "success": "a successful result",
            "what_clarity": 1.0,
            "who_clarity": 1.0,
            "success_clarity": 1.0,
        },
        timeout_seconds=HANDOFF_TIMEOUT_SECONDS,
        session_id="e2e-probe",
    )
    import asyncio  # here: the batch imports this module (for EACH) on a no-op, which runs no probe

    return asyncio.run(manager.execute(context))


def _without_mcp_servers(cls: type[MindrianAgent]) -> tuple[type[MindrianAgent], str]:
    """``cls`` without its MCP toolkits, and a note naming them ("" when it has none).

    The probe is offline and its scripted model calls no tool, while starting a
    server could need the network or credentials; whether the servers answer is
    checked by the agent itself before each real run.
    """
    from mindrian.agents.mcp import is_mcp_toolkit

    names = [str(s["name"]) for s in cls.mcp_servers]
    if not names and not any(map(is_mcp_toolkit, cls.tools)):
        return cls, ""
    tools = tuple(t for t in cls.tools if not is_mcp_toolkit(t))
    attributes = {"__module__": cls.__module__, "tools": tools, "mcp_servers": ()}
    offline = cast("type[MindrianAgent]", type(cls.__name__, (cls,), attributes))
    return (
        offline,
        f"; MCP servers not started by the offline probe: {', '.join(names) or 'unnamed'}",
    )


def _describe(result: Any) -> str:
    shape = f"{result.output_format}, {len(result.key_findings)} finding(s)"
    paused = ", paused for the user" if result.needs_human_input else ""
    return f"handoff {PROBE_AGENT} -> {result.from_agent} succeeded ({shape}{paused})"


def probe(identifier: str) -> ProbeOutcome:
    """Import ``identifier``, run one scripted handoff, and report; never raises for a broken
    package."""
    from mindrian.testing.pytest_plugin import OfflineGuard

    guard = OfflineGuard()
    guard.install()
    agent_id = agent_type = ""
    try:
        package = importlib.import_module(identifier)
        cls = _agent_class(package)
        agent_id, agent_type = cls.agent_id, cls.agent_type
        package_data = getattr(sys.modules[cls.__module__], "PACKAGE", None)
        spec = getattr(package_data, "spec", None) or {}
        cls, left_out = _without_mcp_servers(cls)
        with tempfile.TemporaryDirectory(prefix="mindrian-e2e-") as state:
            result = _handoff(agent_id, _scripted(cls, spec, Path(state)))
    except Exception as exc:  # a broken package is a finding, reported as data
        where = "import" if not agent_id else "handoff"
        return ProbeOutcome(False, agent_id, agent_type, f"{where} failed: {_one_line(exc)}")
    finally:
        guard.uninstall()
    blocked = guard.take()
    if blocked:
        return ProbeOutcome(
            False, agent_id, agent_type, "blocked (must stay offline): " + "; ".join(blocked)
        )
    if not result.success:
        return ProbeOutcome(False, agent_id, agent_type, f"handoff failed: {result.error}")
    return ProbeOutcome(True, agent_id, agent_type, _describe(result) + left_out)


def _one_line(exc: BaseException) -> str:
    lines = traceback.format_exception_only(type(exc), exc)
    return " ".join(line.strip() for line in lines if line.strip())


def probe_each(packages: Sequence[tuple[str, str]]) -> None:
    """Probe each (folder, identifier) in turn, printing one JSON line per package.

    Each runs as :func:`probe` would in a process started in its folder: that
    folder is the working folder and stands where this process's working
    folder stood on the import path and in ``PYTHONPATH``; afterwards the
    package's modules are forgotten, so a later package cannot import them
    by name.
    """
    start = os.getcwd()
    path, python_path = list(sys.path), os.environ.get("PYTHONPATH")
    entries = python_path.split(os.pathsep) if python_path is not None else []
    # Which entries name the working folder, judged before it changes (an entry may be relative).
    on_path, in_env = _naming(path, start), _naming(entries, start)
    try:
        for folder, identifier in packages:
            here = str(Path(folder).resolve())
            os.chdir(here)
            sys.path[:] = _put(here, path, on_path)
            if python_path is not None:
                os.environ["PYTHONPATH"] = os.pathsep.join(_put(here, entries, in_env))
            outcome = probe(identifier)
            _forget(identifier)
            line = {"probe": identifier, **asdict(outcome)}
            print(json.dumps(line, sort_keys=True, ensure_ascii=False), flush=True)
    finally:
        os.chdir(start)
        sys.path[:] = path
        if python_path is not None:
            os.environ["PYTHONPATH"] = python_path


def _naming(entries: Sequence[str], folder: str) -> list[bool]:
    """For each path entry, whether it names ``folder`` (``""`` names the working folder)."""
    return [os.path.realpath(entry or ".") == folder for entry in entries]


def _put(folder: str, entries: Sequence[str], where: Sequence[bool]) -> list[str]:
    """``entries`` with ``folder`` in each place ``where`` marks."""
    return [folder if mark else entry for entry, mark in zip(entries, where, strict=True)]


def _forget(identifier: str) -> None:
    for name in [n for n in sys.modules if n == identifier or n.startswith(identifier + ".")]:
        del sys.modules[name]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m builder.probe.e2e IDENTIFIER``: print the outcome as JSON; 0 on success.
    With ``--each FOLDER IDENTIFIER ...``, one line per package (:func:`probe_each`) and 0 once
    every package has its line, whatever the verdicts."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == [EACH] and len(args) > 1 and len(args) % 2:
        probe_each(list(zip(args[1::2], args[2::2], strict=True)))
        return 0
    if len(args) != 1 or args[0] == EACH:
        print(
            f"usage: python -m builder.probe.e2e IDENTIFIER | {EACH} FOLDER IDENTIFIER ...",
            file=sys.stderr,
        )
        return 2
    outcome = probe(args[0])
    print(json.dumps(asdict(outcome), sort_keys=True, ensure_ascii=False))
    return 0 if outcome.success else 1


if __name__ == "__main__":
    raise SystemExit(main())
