"""The host's tools for generated agents: Bash, Read, Write, Edit, Glob, Grep, WebFetch.

A package's ``spec.yaml`` grants them (``tools.host.grant``) and pre-approves
some calls (``tools.host.allow``, the skill's ``allowed-tools``); a run gives
them a workspace and someone to ask (:class:`HostSession`). See README,
"Host tools", for the rule.
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
from mindrian.host.rules import (
    HOST_TOOLS,
    Command,
    Rule,
    RuleError,
    arbitrary_code_rules,
    parse_command,
    parse_rule,
    parse_rules,
)
from mindrian.host.tools import HostSession, HostTools, host_functions, host_note

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
    "Rule",
    "RuleError",
    "ToolLog",
    "ToolRecord",
    "ToolRequest",
    "arbitrary_code_rules",
    "host_functions",
    "host_note",
    "parse_command",
    "parse_rule",
    "parse_rules",
]
