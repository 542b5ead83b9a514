"""How a command reports: progress and error lines, JSON, control frames, ``explain`` text.

The result types and exit statuses are in :mod:`builder.pipeline.results`. With ``--frames``
the same events are also told as control frames (:mod:`mindrian.frames`, namespace
``MINDRIAN``): per skill READY, one PHASE per phase reached, ERROR when it stopped, DONE with
its verdict; then one DONE without a skill for the whole command. Frames carry no times, so the
same build prints the same frames.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from builder.pipeline.contract import CheckResult
from builder.pipeline.errors import SourceLocation
from builder.pipeline.results import EXIT_OK, Problem, ValidationReport
from builder.pipeline.terminal import terminal_safe

if TYPE_CHECKING:  # a build's records: mindrian validate prints without defining them
    from builder.pipeline.build_results import BuildReport, PhaseReport, PhaseStatus
    from mindrian.frames import Frame

__all__ = [
    "FRAME_NAMESPACE",
    "agent_tools",
    "build_json",
    "done_frame",
    "error_frame",
    "error_json",
    "explain_json",
    "explain_text",
    "key_decisions",
    "phase_frame",
    "progress_line",
    "ready_frame",
    "terminal_safe",
    "validation_line",
    "warning_line",
    "warning_lines",
]

#: Namespace of every control frame the commands print.
FRAME_NAMESPACE = "MINDRIAN"

#: What a phase status looks like at the end of a progress line.
_STATUS_TEXT: Mapping[PhaseStatus, str] = {
    "ok": "ok",
    "cached": "ok (cached)",
    "loaded": "ok (from checkpoint)",
    "failed": "FAILED",
    "error": "error",
}


def progress_line(report: PhaseReport, total: int, *, timings: bool = False) -> str:
    """``[1/7] skill_analysis … ok (cached)``, with the time when asked."""
    status = _STATUS_TEXT[report.status]
    if report.status == "failed":
        failed = [c.name for c in report.checks if not c.passed]
        status = f"FAILED ({', '.join(failed)})"
    line = f"[{report.number}/{total}] {report.name} … {status}"
    return f"{line} [{report.seconds * 1000:.1f} ms]" if timings else line


def _location_json(location: SourceLocation | None) -> dict[str, Any] | None:
    return (
        None
        if location is None
        else {"path": location.path, "line": location.line, "column": location.column}
    )


def _problem_json(problem: Problem | None) -> dict[str, Any] | None:
    if problem is None:
        return None
    return {
        "code": problem.code,
        "message": problem.message,
        "location": _location_json(problem.location),
        "text": problem.render(),
    }


def _check_json(check: CheckResult) -> dict[str, Any]:
    return {
        "name": check.name,
        "passed": check.passed,
        "reason": check.reason,
        "location": _location_json(check.location),
    }


def build_json(reports: Sequence[BuildReport], removed: Sequence[str] = ()) -> str:
    """The machine-readable report of ``build --json`` (keys are stable; ``removed``, the ids
    a whole-project build unregistered because their skill is gone, only when there are some)."""
    builds = [
        {
            "path": r.path,
            "agent_id": r.agent_id,
            "ok": r.problem is None,
            "exit_code": r.exit_code,
            "phases": [
                {
                    "number": p.number,
                    "name": p.name,
                    "status": p.status,
                    "checks": [_check_json(c) for c in p.checks],
                    "warnings": list(p.warnings),
                    "seconds": round(p.seconds, 4),
                    "cpu_seconds": round(p.cpu_seconds, 4),
                }
                for p in r.phases
            ],
            "error": _problem_json(r.problem),
        }
        for r in reports
    ]
    status = max((r.exit_code for r in reports), default=EXIT_OK)
    extra = {"removed": list(removed)} if removed else {}
    return json.dumps(
        {"ok": status == EXIT_OK, "exit_code": status, "builds": builds, **extra},
        indent=2,
        ensure_ascii=False,
    )


def error_json(problem: Problem) -> str:
    """The ``--json`` output of a command that stopped before its report: usage errors and the
    like (``{"ok": false, "exit_code": 2, "error": {...}}``)."""
    return json.dumps(
        {"ok": False, "exit_code": problem.exit_code, "error": _problem_json(problem)},
        indent=2,
        ensure_ascii=False,
    )


def _frame(kind: str, payload: dict[str, Any]) -> Frame:
    # mindrian.frames (logging, datetime) only when a frame is printed: validate prints none.
    from mindrian.frames import Frame

    return Frame(FRAME_NAMESPACE, kind, payload)


def ready_frame(stage: str, skill: str) -> Frame:
    """READY: ``stage`` (``build``, ``register``, ``regenerate``) of one SKILL.md begins."""
    return _frame("READY", {"stage": stage, "skill": skill})


def phase_frame(skill: str, report: PhaseReport) -> Frame:
    """PHASE: one phase of ``skill`` finished; ``failed`` names the checks that do not hold."""
    payload: dict[str, Any] = {
        "skill": skill,
        "phase": report.name,
        "number": report.number,
        "status": report.status,
    }
    failed = [c.name for c in report.checks if not c.passed]
    if failed:
        payload["failed"] = failed
    return _frame("PHASE", payload)


def error_frame(problem: Problem, skill: str | None = None) -> Frame:
    """ERROR: the problem's code, message and, when known, its place in the sources."""
    payload: dict[str, Any] = {"code": problem.code, "message": problem.message}
    if problem.location is not None:
        payload["location"] = _location_json(problem.location)
    if skill is not None:
        payload["skill"] = skill
    return _frame("ERROR", payload)


def done_frame(
    stage: str, exit_code: int, *, skill: str | None = None, agent_id: str | None = None
) -> Frame:
    """DONE: ``stage`` ended, for one skill or (without ``skill``) the whole command."""
    payload: dict[str, Any] = {"stage": stage, "ok": exit_code == EXIT_OK, "exit_code": exit_code}
    if skill is not None:
        payload["skill"] = skill
    if agent_id is not None:
        payload["agent_id"] = agent_id
    return _frame("DONE", payload)


def warning_line(warning: str, path: str) -> str:
    """A warning as printed: a located, coded one as it is; another prefixed with its file."""
    return warning if ": warning[" in warning else f"{path}: warning: {warning}"


def warning_lines(warnings: Iterable[str], path: str) -> tuple[str, ...]:
    """Each distinct warning of the skill at ``path`` once, as printed (:func:`warning_line`).

    Human output prints what ``--json`` reports, cached phases included: a warning stays true
    of the skill until the skill changes, so a no-op build says it again rather than hide it.
    """
    return tuple(dict.fromkeys(warning_line(w, path) for w in warnings))


def validation_line(report: ValidationReport) -> str:
    """``ok PATH (id, type)`` for a valid file."""
    return (
        f"ok {report.path} ({report.agent_id}, {report.agent_type or 'type inferred in phase 2'})"
    )


def key_decisions(output: Any, previous: Any = None) -> tuple[str, ...]:
    """Decisions recorded in a phase output that the previous phase's output did not already hold.

    A decision is the agent's ``id``/``type``, or any value under a key named
    ``decisions``, ``reason`` or ending in ``_reason``/``_rule``.
    """
    seen = set(_decision_items(previous, ())) if previous is not None else set()
    fresh = [
        (path, value) for path, value in _decision_items(output, ()) if (path, value) not in seen
    ]
    # A ``decisions`` list already reads as sentences; other values need their key.
    return tuple(
        value if path.endswith("decisions") else f"{path}: {value}" for path, value in fresh
    )


def _decision_items(data: Any, path: tuple[str, ...]) -> Iterable[tuple[str, str]]:
    if isinstance(data, Mapping):
        for key, value in data.items():
            here = (*path, str(key))
            if _is_decision(here) and value not in (None, "", []):
                yield from _flatten(".".join(here), value)
            else:
                yield from _decision_items(value, here)


def _is_decision(path: tuple[str, ...]) -> bool:
    key = path[-1]
    top_level = len(path) == 1 and key in ("id", "type")
    return top_level or key in ("decisions", "reason") or key.endswith(("_reason", "_rule"))


def _flatten(path: str, value: Any) -> Iterable[tuple[str, str]]:
    if isinstance(value, list):
        for item in value:
            yield path, str(item)
    else:
        yield path, str(value)


def explain_text(agent_id: str, checkpoints: Sequence[Mapping[str, Any]]) -> str:
    """A readable account of an agent's checkpoints (plain data as stored)."""
    lines = [f"agent {agent_id}: {len(checkpoints)} checkpoint(s)"]
    previous_output = None
    for data in checkpoints:
        verdict = "passed" if data["passed"] else "FAILED"
        lines.append("")
        lines.append(f"[{data['number']}] {data['phase']}: {verdict}")
        for check in data["checks"]:
            mark = "ok" if check["passed"] else "FAILED"
            where = f" ({_location_text(check['location'])})" if check.get("location") else ""
            lines.append(f"  check {check['name']}: {mark} - {check['reason']}{where}")
        lines.extend(f"  warning: {w}" for w in data["warnings"])
        lines.extend(f"  decided {d}" for d in key_decisions(data["output"], previous_output))
        previous_output = data["output"]
    tools = agent_tools(checkpoints)
    lines += ["", "tools:", *map(_tool_line, tools)] if tools else ["", "tools: none"]
    return "\n".join(terminal_safe(line) for line in lines) + "\n"


def agent_tools(checkpoints: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The agent's tools from its last checkpoint with a ``tools`` block (phase 4 on), each
    with ``runs_without_asking``: ``all`` (every call), ``none`` or the pre-approved patterns
    that let some calls run (the rest ask)."""
    spec = next(
        (
            d["output"]
            for d in reversed(checkpoints)
            if isinstance(d.get("output"), Mapping) and d["output"].get("tools")
        ),
        None,
    )
    if spec is None:
        return []
    tools = spec["tools"]
    elements = (spec.get("instructions") or {}).get("elements") or ()
    found: list[dict[str, Any]] = [
        {"tool": "read_reference", "kind": "references", "runs_without_asking": "all"}
    ][: 1 if elements else 0]
    found += [
        {"tool": t, "kind": f"MCP server {s.get('name')}", "runs_without_asking": "all"}
        for s in tools.get("mcp_servers") or ()
        for t in s.get("tools") or ()
    ]
    found += [
        {"tool": c.get("name"), "kind": "custom tool", "runs_without_asking": "all"}
        for c in tools.get("custom_tools") or ()
    ]
    # Here, not at the top: every command imports this module, and the host package is large.
    from mindrian.host.patterns import parse_pattern

    host = tools.get("host") or {}
    reasons = {r.get("tool"): r.get("reason", "") for r in host.get("reasons") or ()}
    patterns = [parse_pattern(p) for p in host.get("allow") or ()]
    for tool in host.get("grant") or ():
        mine = [p for p in patterns if p.tool == tool]
        approved: str | list[str] = (
            "all" if any(p.every_call for p in mine) else [p.text for p in mine] or "none"
        )
        found.append(
            {
                "tool": tool,
                "kind": "host tool",
                "runs_without_asking": approved,
                "reason": reasons.get(tool, ""),
            }
        )
    return found


def _tool_line(tool: Mapping[str, Any]) -> str:
    approved = tool["runs_without_asking"]
    if approved == "all":
        how = "every call runs without asking"
    elif approved == "none":
        how = "every call asks"
    else:
        how = f"runs without asking: {', '.join(approved)}; other calls ask"
    why = f" ({tool['reason']})" if tool.get("reason") else ""
    return f"  {tool['kind']} {tool['tool']}{why}: {how}"


def explain_json(agent_id: str, checkpoints: Sequence[Mapping[str, Any]]) -> str:
    """``explain --json``: the checkpoints without their outputs, plus the key decisions."""
    phases = []
    previous_output = None
    for data in checkpoints:
        phases.append(
            {
                "phase": data["phase"],
                "number": data["number"],
                "passed": data["passed"],
                "input_digest": data["input_digest"],
                "checks": list(data["checks"]),
                "warnings": list(data["warnings"]),
                "decisions": list(key_decisions(data["output"], previous_output)),
            }
        )
        previous_output = data["output"]
    return json.dumps(
        {"agent_id": agent_id, "phases": phases, "tools": agent_tools(checkpoints)},
        indent=2,
        ensure_ascii=False,
    )


def _location_text(location: Mapping[str, Any]) -> str:
    return str(SourceLocation(location["path"], location.get("line", 0), location.get("column", 0)))
