"""The host's tools (Bash, Read, Write, Edit, Glob, Grep, WebFetch) and their permissions.

A package's ``spec.yaml`` grants them (``tools.host.grant``, decided by phase 4)
and pre-approves some calls (``tools.host.allow``, the skill's ``allowed-tools``);
a run gives them a workspace and someone to ask (:class:`HostSession`). The
patterns are parsed by :mod:`mindrian.host.patterns` (the builder's parser too)
and matched by :mod:`mindrian.host.rules`. See README, "Host tools".
"""

from __future__ import annotations

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
