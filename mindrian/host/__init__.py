"""The host's tools (Bash, Read, Write, Edit, Glob, Grep, WebFetch) and their permissions.

A package's ``spec.yaml`` grants them (``tools.host.grant``, decided by phase 4)
and pre-approves some calls (``tools.host.allow``, the skill's ``allowed-tools``);
a run gives them a workspace and someone to ask (:class:`HostSession`). The
patterns are parsed by :mod:`mindrian.host.patterns` (the builder's parser too)
and matched by :mod:`mindrian.host.rules`. See README, "Host tools".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mindrian.lazy import lazy_attributes

# Submodules load on first use: the builder reads patterns without paying for Agno's
# Function and the fetcher, which only a run needs.
if TYPE_CHECKING:
    from mindrian.host.confine import Confinement, OutsideError
    from mindrian.host.gate import (
        Approver,
        Approving,
        AskOnTerminal,
        Decision,
        Denying,
        Gate,
        HostGrant,
        ToolLog,
        ToolRecord,
        ToolRequest,
    )
    from mindrian.host.patterns import (
        HOST_TOOLS,
        Pattern,
        PatternError,
        is_host_tool,
        parse_pattern,
        runs_arbitrary_code,
    )
    from mindrian.host.rules import (
        Command,
        Rule,
        RuleError,
        allowed_rules,
        arbitrary_code_rules,
        parse_command,
        parse_rule,
        parse_rules,
    )
    from mindrian.host.tools import (
        HostSession,
        HostTools,
        host_functions,
        host_note,
        scoped_session,
    )

__all__ = [
    "HOST_TOOLS",
    "Approver",
    "Approving",
    "AskOnTerminal",
    "Command",
    "Confinement",
    "Decision",
    "Denying",
    "Gate",
    "HostGrant",
    "HostSession",
    "HostTools",
    "OutsideError",
    "Pattern",
    "PatternError",
    "Rule",
    "RuleError",
    "ToolLog",
    "ToolRecord",
    "ToolRequest",
    "allowed_rules",
    "arbitrary_code_rules",
    "host_functions",
    "host_note",
    "is_host_tool",
    "parse_command",
    "parse_pattern",
    "parse_rule",
    "parse_rules",
    "runs_arbitrary_code",
    "scoped_session",
]

_HOMES = {
    "Approver": "mindrian.host.gate",
    "Approving": "mindrian.host.gate",
    "AskOnTerminal": "mindrian.host.gate",
    "Command": "mindrian.host.rules",
    "Confinement": "mindrian.host.confine",
    "Decision": "mindrian.host.gate",
    "Denying": "mindrian.host.gate",
    "Gate": "mindrian.host.gate",
    "HOST_TOOLS": "mindrian.host.patterns",
    "HostGrant": "mindrian.host.gate",
    "HostSession": "mindrian.host.tools",
    "HostTools": "mindrian.host.tools",
    "OutsideError": "mindrian.host.confine",
    "Pattern": "mindrian.host.patterns",
    "PatternError": "mindrian.host.patterns",
    "Rule": "mindrian.host.rules",
    "RuleError": "mindrian.host.rules",
    "ToolLog": "mindrian.host.gate",
    "ToolRecord": "mindrian.host.gate",
    "ToolRequest": "mindrian.host.gate",
    "allowed_rules": "mindrian.host.rules",
    "arbitrary_code_rules": "mindrian.host.rules",
    "host_functions": "mindrian.host.tools",
    "host_note": "mindrian.host.tools",
    "is_host_tool": "mindrian.host.patterns",
    "parse_command": "mindrian.host.rules",
    "parse_pattern": "mindrian.host.patterns",
    "parse_rule": "mindrian.host.rules",
    "parse_rules": "mindrian.host.rules",
    "runs_arbitrary_code": "mindrian.host.patterns",
    "scoped_session": "mindrian.host.tools",
}

_lazy = lazy_attributes(__name__, _HOMES, globals())


def __getattr__(name: str) -> Any:
    return _lazy(name)
