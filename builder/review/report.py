"""``mindrian diff`` output: Markdown for a pull-request comment, or JSON.

The Markdown starts with a one-line verdict, then one section per agent that changed (unchanged
agents get nothing). Skill text is quoted as inline code or JSON strings, never as Markdown that
could render as something else.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict

from builder.review.semantic import ASPECTS, AgentDiff, Change, ReviewDiff

__all__ = ["markdown", "to_json", "verdict"]

_STATUS_WORDS = {
    "added": "added",
    "removed": "removed",
    "unbuilt": "without a package (the skill does not build, or was not built)",
}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _joined(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def verdict(diff: ReviewDiff) -> str:
    """One line: how many agents changed, in which aspects, and whether a schema changed."""
    if not diff.agents:
        return "No agent changed."
    parts = []
    changed = [a for a in diff.agents if a.status in ("changed", "renamed")]
    if changed:
        aspects = [x for x in ASPECTS if any(x in a.aspects for a in changed)]
        parts.append(f"{_plural(len(changed), 'agent')} changed: {_joined(aspects)}")
    for status in ("added", "removed", "unbuilt"):
        count = sum(1 for a in diff.agents if a.status == status)
        if count:
            parts.append(f"{_plural(count, 'agent')} {_STATUS_WORDS[status]}")
    schema = any("schema" in a.aspects for a in diff.agents)
    tail = "schema changed" if schema else "no schema change"
    granted = [f"{a.agent} {_granted(c)}" for a in diff.agents for c in a.permission_changes]
    if granted:
        tail += f"; permission change: {_joined(granted)}"
    return "; ".join(parts) + f"; {tail}."


def _granted(change: Change) -> str:
    """``gets "Write"`` for a host tool granted, ``pre-approves "Bash(git:*)"`` for a pattern
    (skill text, quoted as everywhere in the report)."""
    verb = "gets" if change.field == "host tool" else "pre-approves"
    return f"{verb} {_quote(change.name)}"


def _quote(text: str | None) -> str:
    """Skill text as a JSON string inside a code span: no Markdown inside renders."""
    shown = json.dumps(text, ensure_ascii=False).replace("`", "\\u0060")
    return f"`{shown}`"


def _change_line(change: Change) -> str:
    where = f" (SKILL.md line {change.line})" if change.line is not None else ""
    # The aspect heads the line, so a field does not repeat it ("prompt: line", "type: …").
    label = change.field.removeprefix(change.aspect).strip()
    what = " ".join(p for p in (label, _quote(change.name) if change.name else "") if p)
    head = f"- {change.aspect}: {what}" if what else f"- {change.aspect}"
    if change.kind == "changed":
        return f"{head}{where}: {_quote(change.old)} → {_quote(change.new)}"
    value = change.new if change.kind == "added" else change.old
    shown = f": {_quote(value)}" if value else ""
    return f"{head} {change.kind}{where}{shown}"


def _section(agent: AgentDiff) -> Iterator[str]:
    yield f"### `{agent.agent}` ({_quote(agent.source)})"
    yield ""
    if agent.status in ("added", "removed", "unbuilt"):
        yield f"Agent {_STATUS_WORDS[agent.status]}."
    else:
        yield from (_change_line(c) for c in agent.changes)
    yield ""


def markdown(diff: ReviewDiff) -> str:
    """The PR-comment text: verdict, then one section per agent that differs."""
    lines = [
        f"**{verdict(diff)}**",
        "",
        f"Agents at `{diff.head}` compared with `{diff.base}`.",
        "",
    ]
    if diff.not_rebuilt:
        edited = ", ".join(f"`{path}`" for path in diff.not_rebuilt)
        lines.extend(
            [
                f"Edited but not rebuilt: {edited}; run `mindrian build --all` to see what the "
                "edit changes.",
                "",
            ]
        )
    for agent in diff.agents:
        lines.extend(_section(agent))
    return "\n".join(lines).rstrip("\n") + "\n"


def to_json(diff: ReviewDiff) -> str:
    """The same report as JSON (sorted keys, one object)."""
    data = asdict(diff)
    data["verdict"] = verdict(diff)
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
