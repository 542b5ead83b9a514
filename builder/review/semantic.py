"""What changed in each agent's behaviour between two snapshots, field by field.

Each aspect of an agent (type, model, prompt, schema, routing, tools, permissions, handoff,
workflow) is
flattened into ``(field, name) → value`` entries, so one comparison serves them all: an entry
only one side has was added or removed, an entry whose value differs was changed. The prompt is
compared line by line instead, and each line is cited with its SKILL.md line.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from builder.review.revisions import AgentSnapshot, Snapshot

__all__ = ["ASPECTS", "PERMISSIONS", "AgentDiff", "Change", "ReviewDiff", "compare"]

#: The aspects of an agent, in report order.
ASPECTS = (
    "identity",
    "type",
    "model",
    "prompt",
    "schema",
    "routing",
    "tools",
    "permissions",
    "handoff",
    "workflow",
)
#: The aspect whose additions are permission changes: a host tool granted or a call pre-approved.
PERMISSIONS = "permissions"

#: A flattened aspect: ``(field, name)`` → shown value ("" when presence is all there is).
Entries = dict[tuple[str, str], str]


@dataclass(frozen=True)
class Change:
    """One difference in one aspect of one agent."""

    aspect: str
    """One of :data:`ASPECTS`."""
    kind: str
    """``added``, ``removed`` or ``changed``."""
    field: str
    """What kind of thing changed (``trigger``, ``temperature``, ``prompt line`` …)."""
    name: str
    """Which one (a trigger's text, a score's name); empty when the field is single."""
    old: str | None
    """The value before; None when added."""
    new: str | None
    """The value after; None when removed."""
    line: int | None = None
    """SKILL.md line of a prompt line (after; before when removed); None elsewhere."""


@dataclass(frozen=True)
class AgentDiff:
    """Everything that changed in one agent."""

    agent: str
    """Agent id (after; before when removed)."""
    status: str
    """``added``, ``removed``, ``renamed``, ``changed`` or ``unbuilt`` (no package after)."""
    source: str
    """Its SKILL.md, project-relative."""
    changes: tuple[Change, ...] = ()
    """The differences, in aspect order; empty when added, removed or unbuilt."""

    @property
    def aspects(self) -> tuple[str, ...]:
        """The aspects that changed, in report order."""
        seen = {c.aspect for c in self.changes}
        return tuple(a for a in ASPECTS if a in seen)

    @property
    def permission_changes(self) -> tuple[Change, ...]:
        """Host tools newly granted and calls newly pre-approved (what a reviewer must see)."""
        return tuple(c for c in self.changes if c.aspect == PERMISSIONS and c.kind == "added")


@dataclass(frozen=True)
class ReviewDiff:
    """The semantic difference between two revisions of a project."""

    base: str
    """The revision compared from."""
    head: str
    """The revision compared to (or ``working tree``)."""
    agents: tuple[AgentDiff, ...]
    """One entry per agent that differs, sorted by id; unchanged agents are left out."""
    not_rebuilt: tuple[str, ...] = ()
    """SKILL.md paths whose text differs while the agent built from it does not: edited, not
    rebuilt yet (``mindrian build`` shows what the edit does), sorted."""


def _text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value) or "none"
    return str(value)


def _range(item: Mapping[str, Any]) -> str:
    return f"{_text(item.get('minimum'))} to {_text(item.get('maximum'))}"


def _type(spec: Mapping[str, Any], _: AgentSnapshot) -> Entries:
    return {("type", ""): _text(spec.get("type"))}


def _model(spec: Mapping[str, Any], _: AgentSnapshot) -> Entries:
    model = spec.get("model") or {}
    # ``string`` repeats provider and model_id; ``source`` says where the choice came from.
    return {(k, ""): _text(v) for k, v in model.items() if k not in ("string", "source")}


def _schema(spec: Mapping[str, Any], _: AgentSnapshot) -> Entries:
    entries: Entries = {("score", s["name"]): _range(s) for s in spec.get("scores") or ()}
    entries |= {("score band", b["label"]): _range(b) for b in spec.get("score_bands") or ()}
    returns = (spec.get("handoff") or {}).get("returns") or {}
    entries |= {("output field", f): "" for f in returns.get("fields") or ()}
    entries[("output format", "")] = _text(returns.get("output_format"))
    return entries


def _routing(spec: Mapping[str, Any], _: AgentSnapshot) -> Entries:
    entries: Entries = {("trigger", t): "" for t in spec.get("triggers") or ()}
    entries |= {("problem type", p): "" for p in spec.get("problem_types") or ()}
    entries |= {
        ("chain to", c["target"]): f"weight {c['weight']}" for c in spec.get("chains_to") or ()
    }
    entries |= {("good for", p): f"confidence {w}" for p, w in (spec.get("good_for") or {}).items()}
    return entries


def _tools(spec: Mapping[str, Any], _: AgentSnapshot) -> Entries:
    tools = spec.get("tools") or {}
    entries: Entries = {}
    for server in tools.get("mcp_servers") or ():
        need = "required" if server.get("required") else "optional"
        entries[("MCP server", server["name"])] = f"{need}; tools {_text(server.get('tools'))}"
    entries |= {
        ("custom tool", t["name"]): _text(t.get("function"))
        for t in tools.get("custom_tools") or ()
    }
    for action in tools.get("global_actions") or ():
        name = action.get("name", action) if isinstance(action, dict) else action
        entries[("global action", _text(name))] = ""
    return entries


def _permissions(spec: Mapping[str, Any], _: AgentSnapshot) -> Entries:
    """The host tools granted (with why) and the calls pre-approved (``tools.host``)."""
    host = (spec.get("tools") or {}).get("host") or {}
    why = {r.get("tool"): _text(r.get("reason")) for r in host.get("reasons") or ()}
    entries: Entries = {("host tool", str(t)): why.get(t, "") for t in host.get("grant") or ()}
    entries |= {("pre-approved", str(p)): "runs without asking" for p in host.get("allow") or ()}
    return entries


def _handoff(spec: Mapping[str, Any], _: AgentSnapshot) -> Entries:
    handoff = spec.get("handoff") or {}
    receives, routing = handoff.get("receives") or {}, handoff.get("routing") or {}
    return {
        ("min clarity", ""): _text(receives.get("min_clarity")),
        ("receives", ""): _text(receives.get("fields")),
        ("callers", ""): _text(routing.get("can_be_called_by")),
        ("delegates to", ""): _text(routing.get("can_delegate_to")),
        ("returns to", ""): _text(routing.get("default_return_to")),
        ("return behavior", ""): _text(routing.get("return_behavior")),
        ("supports", ""): _text(handoff.get("supports")),
    }


def _workflow(_: Mapping[str, Any], agent: AgentSnapshot) -> Entries:
    if agent.workflow is None:
        return {}
    from mindrian.workflow import WorkflowError, parse

    try:
        graph = parse(agent.workflow)
    except WorkflowError as error:  # a hand-edited file: say so rather than stop the report
        return {("workflow.dot", ""): f"unreadable: {error}"}
    entries: Entries = {
        ("node", n.id): _text(n.prompt or n.label or n.kind.value) for n in graph.nodes
    }
    for e in graph.edges:
        entries[("edge", f"{e.source} -> {e.target}")] = _text(e.label or e.condition or "")
    return entries


_FLAT: Mapping[str, Callable[[Mapping[str, Any], AgentSnapshot], Entries]] = {
    "type": _type,
    "model": _model,
    "schema": _schema,
    "routing": _routing,
    "tools": _tools,
    "permissions": _permissions,
    "handoff": _handoff,
    "workflow": _workflow,
}


def _entry_changes(aspect: str, old: Entries, new: Entries) -> Iterator[Change]:
    for key in sorted(old.keys() | new.keys()):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        kind = "added" if before is None else "removed" if after is None else "changed"
        yield Change(aspect, kind, key[0], key[1], before, after)


def _prompt_lines(agent: AgentSnapshot) -> list[str]:
    return [line.strip() for line in agent.instructions.splitlines() if line.strip()]


def _skill_line(agent: AgentSnapshot, text: str) -> int | None:
    """The first SKILL.md line that holds ``text`` (prompt lines are verbatim skill lines)."""
    for number, line in enumerate((agent.skill or "").splitlines(), start=1):
        if line.strip() == text:
            return number
    return None


def _prompt_changes(old: AgentSnapshot, new: AgentSnapshot) -> Iterator[Change]:
    before, after = _prompt_lines(old), _prompt_lines(new)
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(paired):
            line = _skill_line(new, after[j1 + k])
            yield Change(
                "prompt", "changed", "prompt line", "", before[i1 + k], after[j1 + k], line
            )
        for text in before[i1 + paired : i2]:
            yield Change("prompt", "removed", "prompt line", "", text, None, _skill_line(old, text))
        for text in after[j1 + paired : j2]:
            yield Change("prompt", "added", "prompt line", "", None, text, _skill_line(new, text))


def _agent_changes(old: AgentSnapshot, new: AgentSnapshot) -> tuple[Change, ...]:
    changes: list[Change] = []
    for aspect in ASPECTS:
        if aspect == "prompt":
            changes.extend(_prompt_changes(old, new))
        elif aspect in _FLAT:
            flat = _FLAT[aspect]
            changes.extend(_entry_changes(aspect, flat(old.spec, old), flat(new.spec, new)))
    return tuple(changes)


def _source(agent: AgentSnapshot) -> str:
    return str(agent.spec.get("source_path", ""))


def _renames(base: Snapshot, head: Snapshot) -> dict[str, str]:
    """New id → old id, for agents whose id changed while their SKILL.md stayed."""
    gone = {_source(a): i for i, a in base.agents.items() if i not in head.agents}
    return {
        i: gone[_source(a)]
        for i, a in head.agents.items()
        if i not in base.agents and _source(a) in gone
    }


def compare(base: Snapshot, head: Snapshot) -> ReviewDiff:
    """Every agent that differs between ``base`` and ``head``, sorted by id."""
    renamed = _renames(base, head)
    diffs: list[AgentDiff] = []
    for agent_id, new in head.agents.items():
        old_id = renamed.get(agent_id, agent_id)
        old = base.agents.get(old_id)
        if old is None:
            diffs.append(AgentDiff(agent_id, "added", _source(new)))
            continue
        changes = _agent_changes(old, new)
        if old_id != agent_id:
            changes = (Change("identity", "changed", "id", "", old_id, agent_id), *changes)
            diffs.append(AgentDiff(agent_id, "renamed", _source(new), changes))
        elif changes:
            diffs.append(AgentDiff(agent_id, "changed", _source(new), changes))
    for agent_id, old in base.agents.items():
        if agent_id in head.agents or agent_id in renamed.values():
            continue
        unbuilt = _source(old) in head.unbuilt
        diffs.append(AgentDiff(agent_id, "unbuilt" if unbuilt else "removed", _source(old)))
    diffs.extend(_newly_unbuilt(base, head))
    ordered = tuple(sorted(diffs, key=lambda d: d.agent))
    return ReviewDiff(base.label, head.label, ordered, _not_rebuilt(base, head, ordered))


def _not_rebuilt(base: Snapshot, head: Snapshot, diffs: Sequence[AgentDiff]) -> tuple[str, ...]:
    """The SKILL.md files of unchanged agents whose text differs between the revisions."""
    built = {_source(a) for a in head.agents.values()} - {d.source for d in diffs}
    return tuple(
        sorted(p for p in built if base.skills.get(p, head.skills.get(p)) != head.skills.get(p))
    )


def _newly_unbuilt(base: Snapshot, head: Snapshot) -> Sequence[AgentDiff]:
    """Skills without a package after whose SKILL.md is new or changed (named by their path)."""
    known = {_source(a) for a in base.agents.values()}
    return [
        AgentDiff(path, "unbuilt", path)
        for path in head.unbuilt
        if path not in known and base.skills.get(path) != head.skills[path]
    ]
