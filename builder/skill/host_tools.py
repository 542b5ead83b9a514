"""Which of the host's tools an agent gets, and which calls run without asking (phase 4).

The one rule (README, "Host tools"), each grant citing the line that made it:

1. ``allowed-tools`` (Agent Skills): every entry naming a host tool grants that tool and is
   pre-approved as written. A malformed entry is T012 at its line and column; an entry naming
   a tool the runtime does not provide (``Task``, ``AskUserQuestion``) is warning W402 and left
   out; a pre-approval that runs arbitrary code (``Bash``, ``Bash(python3:*)``) is warning W403.
2. Mindrian ``tools.host`` (a list of host tool names) grants those tools without
   pre-approving any call. When present, even empty, it is the author's whole list: the body
   is not read for more (rule 3).
3. Otherwise the body, read conservatively:

   * ``Bash`` when a fenced code block is labelled as shell (``bash``, ``sh``, ``shell``,
     ``zsh``, ``console``, ``shell-session``, ``terminal``) or a line names one of the skill's
     ``scripts/`` files;
   * ``Read`` when a line names a file of the skill's folder that ``read_reference`` does not
     serve (anything but ``references/*.md``: scripts, assets, examples, templates …);
   * ``Write`` when an instruction tells the agent to write, save or create a file at a path
     it names in backticks (``Save the plan to `docs/plan.md```); ``Edit`` when it tells the
     agent to edit, update, modify or append to one;
   * never ``Glob``, ``Grep`` or ``WebFetch``: prose that searches or browses is too often
     description rather than instruction; an author grants them in ``allowed-tools`` or
     ``tools.host``.

Granting is not pre-approving: a granted tool's calls ask (or are denied without a terminal)
unless an ``allowed-tools`` pattern matches them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from builder.pipeline.errors import SourceLocation, ToolAssemblyError
from builder.skill.body import code_fences
from builder.skill.model import SkillDefinition
from builder.skill.spec import HostGrant, HostToolsConfig
from mindrian.host.patterns import (
    HOST_TOOLS,
    PatternError,
    is_host_tool,
    parse_pattern,
    runs_arbitrary_code,
)

__all__ = ["SHELL_LANGUAGES", "decide_host_tools"]

#: Info strings of a fenced code block that show shell commands.
SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "zsh", "console", "shell-session", "terminal"})

#: Warning: an allowed-tools entry names a tool the runtime does not provide.
_UNKNOWN_TOOL = "W402"
#: Warning: a pre-approved pattern runs arbitrary code.
_ARBITRARY = "W403"

#: A path in backticks: a file name with an extension, or a path with a folder.
_PATH = r"`\.?/?[\w.<>{}*-]+(?:/[\w.<>{}*-]+)*\.\w+`|`[\w.<>{}-]+/[\w.<>{}/*-]+`"
#: Where an instruction starts: the line's start after list markers, numbering and emphasis,
#: or after a sentence's end (not after a colon: "`scripts/x.py`: Create reports" describes).
_START = r"(?:^[\s>*_+-]*(?:\d+[.)]\s*)?(?:\*\*|__)?|[.;]\s+(?:\*\*|__)?)"
_WRITE = re.compile(
    _START + r"(?:write|save|create)\b[^`\n]{0,60}?(?:" + _PATH + ")",
    re.IGNORECASE | re.MULTILINE,
)
_EDIT = re.compile(
    _START + r"(?:edit|update|modify|append(?:\s+\w+)?\s+to)\b[^`\n]{0,60}?(?:" + _PATH + ")",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class _Found:
    """A grant found in the skill, before ordering."""

    tool: str
    reason: str
    line: int


def decide_host_tools(
    d: SkillDefinition, text: str, folder_files: Sequence[str]
) -> tuple[HostToolsConfig, tuple[str, ...]]:
    """(the host tools of the skill ``d``, warnings) by the module's rule.

    ``text`` is SKILL.md as decoded by phase 1 (to locate ``allowed-tools`` entries to the
    column); ``folder_files`` the folder-relative names of the skill's other files. Raises
    ToolAssemblyError T012 for a malformed ``allowed-tools`` entry.
    """
    warnings: list[str] = []
    found, allow = _from_allowed_tools(d, text.splitlines(), warnings)
    if d.host_tools is None:
        found += _from_body(d, folder_files)
    else:
        found += [
            _Found(r.tool, f"tools.host names it (line {r.line})", r.line) for r in d.host_tools
        ]
    first: dict[str, _Found] = {}
    for grant in found:
        first.setdefault(grant.tool, grant)
    ordered = [first[tool] for tool in HOST_TOOLS if tool in first]
    config = HostToolsConfig(
        grant=tuple(g.tool for g in ordered),
        allow=tuple(allow),
        reasons=tuple(HostGrant(g.tool, g.reason, g.line) for g in ordered),
    )
    return config, tuple(warnings)


def _entry_location(d: SkillDefinition, lines: list[str], index: int, entry: str) -> SourceLocation:
    """Where the ``index``-th allowed-tools entry is written: its own line in a YAML list, else
    the first line from the field's on where its text stands (a column when found)."""
    own = d.field_lines.get(f"allowed-tools.{index}")
    line = own or d.field_lines.get("allowed-tools", 0)
    # On the key's own line the entries follow "allowed-tools:"; a list item has a line of its own.
    skip = 0 if own else len("allowed-tools:")
    for number in range(line, min(line + 50, len(lines) + 1)) if line else ():
        column = lines[number - 1].find(entry, skip if number == line else 0)
        if column != -1:
            return SourceLocation(d.source_path, number, column + 1)
    return SourceLocation(d.source_path, line)


def _from_allowed_tools(
    d: SkillDefinition, lines: list[str], warnings: list[str]
) -> tuple[list[_Found], list[str]]:
    found: list[_Found] = []
    allow: list[str] = []
    for index, entry in enumerate(d.allowed_tools):
        where = _entry_location(d, lines, index, entry)
        try:
            pattern = parse_pattern(entry)
        except PatternError as exc:
            at = SourceLocation(where.path, where.line, where.column + exc.column - 1)
            raise ToolAssemblyError(
                f"allowed-tools: {exc.message}",
                location=at if where.column else where,
                code="T012",
            ) from None
        if not is_host_tool(pattern):
            warnings.append(
                f"{where}: warning[{_UNKNOWN_TOOL}]: allowed-tools names {pattern.tool!r}, which "
                f"is not a host tool this runtime provides ({', '.join(HOST_TOOLS)}); it is "
                "left out"
            )
            continue
        if runs_arbitrary_code(pattern):
            warnings.append(
                f"{where}: warning[{_ARBITRARY}]: allowed-tools pre-approves {pattern.text}, "
                "which runs arbitrary code without asking"
            )
        found.append(
            _Found(pattern.tool, f"allowed-tools names {entry} (line {where.line})", where.line)
        )
        if entry not in allow:
            allow.append(entry)
    return found, allow


def _from_body(d: SkillDefinition, folder_files: Sequence[str]) -> list[_Found]:
    lines = d.body.splitlines()
    scripts = [n for n in folder_files if n.startswith("scripts/")]
    shell = [
        (i, f"the body shows a {info.split()[0]} block")
        for i, info in code_fences(lines)
        if info and info.split()[0].lower() in SHELL_LANGUAGES
    ]
    bash = min([*shell[:1], *_first_naming(lines, scripts)], default=None)
    readable = [n for n in folder_files if not (n.startswith("references/") and n.endswith(".md"))]
    found = [_at(d, "Bash", bash)] if bash else []
    found += [_at(d, "Read", named) for named in _first_naming(lines, readable)]
    for tool, rule, verb in (("Write", _WRITE, "write"), ("Edit", _EDIT, "edit")):
        match = rule.search(d.body)
        if match:
            index = d.body.count("\n", 0, match.end() - 1)
            found.append(_at(d, tool, (index, f"the body tells the agent to {verb} a file")))
    return found


def _at(d: SkillDefinition, tool: str, hit: tuple[int, str]) -> _Found:
    line = d.body_line + hit[0]
    return _Found(tool, f"{hit[1]} (line {line})", line)


def _first_naming(lines: list[str], names: Iterable[str]) -> list[tuple[int, str]]:
    """[(0-based line, reason)] of the first line naming one of ``names``; empty when none does."""
    patterns = [
        (name, re.compile(r"(?<![\w/.-])(?:\./)?" + re.escape(name) + r"(?![\w/-])"))
        for name in names
    ]
    for index, line in enumerate(lines):
        for name, pattern in patterns:
            if pattern.search(line):
                return [(index, f"the body names the skill's file {name}")]
    return []
