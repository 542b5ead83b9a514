"""Who decides whether a host tool call runs: the skill's rules, the user's, or the user asked.

Every call goes through :meth:`Gate.decide`, in this order:

1. a rule of the skill's ``allowed-tools`` (``spec.yaml`` ``tools.host.allow``)
   that matches the call: it runs;
2. a rule the user gave for this run (``--approve PATTERN``): it runs;
3. otherwise the :class:`Approver` is asked: a terminal asks y/N, ``--yes``
   approves everything, no terminal denies, and ``serve`` pauses the run for
   the client to confirm (AgentOS's human-in-the-loop).

Two calls are never pre-approved by the skill's rules: a command that needs a
shell (unless the rule is the bare ``Bash``) and a fetch from a private address.
Every call ends as a :class:`ToolRecord` in the run's :class:`ToolLog`:
``ran``, ``denied`` (nobody approved it) or ``refused`` (it leaves the
workspace, writes a skill file, or is malformed: no approval can make it run).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TextIO

from mindrian.host.confine import Confinement
from mindrian.host.fetch import Target
from mindrian.host.patterns import HOST_TOOLS
from mindrian.host.rules import Command, Rule, allowed_rules

__all__ = [
    "Approver",
    "Approving",
    "AskOnTerminal",
    "Decision",
    "Denying",
    "Gate",
    "HostGrant",
    "Outcome",
    "ToolLog",
    "ToolRecord",
    "ToolRequest",
]

#: How a call ended.
Outcome = Literal["ran", "denied", "refused"]


@dataclass(frozen=True)
class ToolRequest:
    """One call of a host tool, as a rule or a person judges it."""

    tool: str
    """Bash, Read, Write, Edit, Glob, Grep or WebFetch."""
    subject: str
    """What it acts on, as shown to the user: the command, the path or pattern, the URL."""
    command: Command | None = None
    """A Bash call's command."""
    path: Path | None = None
    """A file tool's resolved path (Glob, Grep: the folder searched)."""
    target: Target | None = None
    """A WebFetch call's checked URL."""

    @property
    def label(self) -> str:
        """``Tool(subject)``, the way rules are written."""
        return f"{self.tool}({self.subject})"


@dataclass(frozen=True)
class Decision:
    """Whether a call may run, and on whose word."""

    allowed: bool
    """Whether it runs."""
    rule: Rule | None = None
    """The rule that allowed it (None: a person, or nobody)."""
    reason: str = ""
    """Why it was denied."""

    @property
    def by_command_rule(self) -> bool:
        """Whether a rule naming a command (not a bare ``Bash``) allowed it: its arguments are
        then checked for paths leading out of the workspace."""
        return self.rule is not None and not self.rule.bare


class Approver(Protocol):
    """Asks the user about a call no rule allows."""

    def approve(self, request: ToolRequest) -> bool:
        """Whether the user approves ``request``."""
        ...

    @property
    def denial(self) -> str:
        """What the model is told when the user did not approve."""
        ...


@dataclass(frozen=True)
class Denying:
    """Approves nothing (no terminal, or a served agent that cannot pause)."""

    denial: str = (
        "it needs the user's approval and there is no terminal to ask "
        "(run it again with --approve PATTERN or --yes)"
    )
    """What the model is told."""

    def approve(self, request: ToolRequest) -> bool:
        """Never."""
        return False


@dataclass(frozen=True)
class Approving:
    """Approves everything (``--yes``, or a call a served run's client already confirmed)."""

    denial: str = ""
    """Never told: nothing is denied."""

    def approve(self, request: ToolRequest) -> bool:
        """Always."""
        return True


@dataclass
class AskOnTerminal:
    """Asks y/N on the terminal, one call at a time (calls may come from several threads)."""

    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    """Where the answer is read."""
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    """Where the question is written."""
    denial: str = "the user did not approve it"
    """What the model is told after a no."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def approve(self, request: ToolRequest) -> bool:
        """Show the call and read y or yes (anything else, or the end of input, is no)."""
        with self._lock:
            self.stderr.write(f"allow {request.label}? [y/N] ")
            self.stderr.flush()
            answer = self.stdin.readline()
        return answer.strip().lower() in ("y", "yes")


@dataclass(frozen=True)
class HostGrant:
    """What a package's ``spec.yaml`` grants: ``tools.host.grant`` and ``tools.host.allow``."""

    grant: tuple[str, ...] = ()
    """The host tools the agent is given, in canonical order."""
    allow: tuple[Rule, ...] = ()
    """Rules whose calls run without asking."""

    @classmethod
    def from_spec(cls, host: Mapping[str, Any] | None) -> HostGrant:
        """The grant of a spec's ``tools.host`` mapping (None or empty: no host tool)."""
        host = host or {}
        granted = {str(name) for name in host.get("grant") or ()}
        return cls(
            grant=tuple(name for name in HOST_TOOLS if name in granted),
            allow=allowed_rules(host.get("allow") or ()),
        )


@dataclass(frozen=True)
class ToolRecord:
    """One call and how it ended."""

    tool: str
    """The tool called."""
    arguments: Mapping[str, Any]
    """Its arguments, as the model gave them."""
    outcome: Outcome
    """ran, denied or refused."""
    output: str
    """What the model was told."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data, the shape ``mindrian run --json`` prints."""
        return {
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "outcome": self.outcome,
            "output": self.output,
        }


class ToolLog:
    """Every call of a run's host tools, in the order the model made them.

    A call takes a slot when the model's turn hands it over (:meth:`reserve`,
    in the turn's order) and waits for the calls before it (:meth:`wait_turn`):
    calls of one turn run one after the other, as the model wrote them, so a
    Write before a Read in the same turn is written first, questions come in
    order, and the log is the same on every replay. ``listener`` hears each call
    as it ends.
    """

    def __init__(self, listener: Callable[[ToolRecord], None] | None = None) -> None:
        self._slots: list[ToolRecord | None] = []
        self._done = threading.Condition()
        self._listener = listener

    def reserve(self) -> int:
        """A slot for the next call."""
        with self._done:
            self._slots.append(None)
            return len(self._slots) - 1

    def wait_turn(self, slot: int) -> None:
        """Block until every call before ``slot`` has ended."""
        with self._done:
            self._done.wait_for(lambda: all(r is not None for r in self._slots[:slot]))

    def add(self, slot: int, record: ToolRecord) -> None:
        """Fill ``slot`` with how its call ended and tell the listener."""
        with self._done:
            self._slots[slot] = record
            self._done.notify_all()
        if self._listener is not None:
            self._listener(record)

    @property
    def records(self) -> tuple[ToolRecord, ...]:
        """The calls that ended, in the order they were made."""
        with self._done:
            return tuple(r for r in self._slots if r is not None)


@dataclass(frozen=True)
class Gate:
    """The permission check of one agent's host tools in one run."""

    confinement: Confinement
    """Where the tools may read and write."""
    allow: tuple[Rule, ...] = ()
    """The skill's rules (its ``allowed-tools``)."""
    approved: tuple[Rule, ...] = ()
    """The user's rules for this run (``--approve``)."""
    approver: Approver = field(default_factory=Denying)
    """Who is asked about the rest."""

    def preapproved(self, request: ToolRequest) -> Rule | None:
        """The first rule, the skill's then the user's, that allows ``request`` without asking."""
        for rule in self.allow:
            if _matches(rule, request, user=False, workspace=self.confinement.workspace):
                return rule
        for rule in self.approved:
            if _matches(rule, request, user=True, workspace=self.confinement.workspace):
                return rule
        return None

    def decide(self, request: ToolRequest) -> Decision:
        """Whether ``request`` runs: a rule, else the approver."""
        rule = self.preapproved(request)
        if rule is not None:
            return Decision(True, rule)
        if self.approver.approve(request):
            return Decision(True)
        return Decision(False, reason=self.approver.denial)


def _matches(rule: Rule, request: ToolRequest, *, user: bool, workspace: Path) -> bool:
    if request.command is not None:
        return rule.matches_command(request.command)
    if request.target is not None:
        # Only the user may open the way to a private address (see mindrian.host.fetch).
        return (user or not request.target.private) and rule.matches_host(request.target.host)
    if request.path is not None:
        return rule.matches_path(request.tool, request.path, workspace)
    return False


def rules_text(rules: Iterable[Rule]) -> str:
    """Rules as written, comma-separated (``none`` when there are none)."""
    return ", ".join(rule.text for rule in rules) or "none"
