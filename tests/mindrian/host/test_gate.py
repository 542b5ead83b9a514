"""Who approves a call: the skill's rules, the user's, then a terminal, ``--yes`` or nobody."""

from __future__ import annotations

import io
from pathlib import Path

from mindrian.host import (
    Approving,
    AskOnTerminal,
    Confinement,
    Denying,
    Gate,
    ToolRequest,
    parse_command,
    parse_rules,
)
from mindrian.model_choice import ModelChoice
from mindrian.project import ProjectPaths
from mindrian.run import RunRequest, host_session


def _bash(command: str) -> ToolRequest:
    return ToolRequest("Bash", command, command=parse_command(command))


def test_a_terminal_is_asked_y_or_n_and_anything_else_is_no() -> None:
    asked = io.StringIO()
    terminal = AskOnTerminal(io.StringIO("y\nno\n\n"), asked)
    assert [terminal.approve(_bash("rm -f a.txt")) for _ in range(3)] == [True, False, False]
    assert asked.getvalue() == "allow Bash(rm -f a.txt)? [y/N] " * 3


def test_the_skills_rules_come_first_then_the_users_then_the_approver(tmp_path: Path) -> None:
    gate = Gate(
        Confinement.of(tmp_path),
        allow=parse_rules(["Bash(git status:*)"]),
        approved=parse_rules(["Bash(npm test)"]),
        approver=Denying(),
    )
    assert gate.decide(_bash("git status")).rule == parse_rules(["Bash(git status:*)"])[0]
    assert gate.decide(_bash("npm test")).allowed
    refused = gate.decide(_bash("npm test; rm -rf ."))
    assert not refused.allowed and "--approve PATTERN or --yes" in refused.reason


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_run_asks_on_a_terminal_denies_without_one_and_yes_approves_all(tmp_path: Path) -> None:
    def approver(stdin: io.StringIO, yes: bool = False) -> object:
        request = RunRequest(
            ProjectPaths(tmp_path), "a", "m", ModelChoice(None), workspace=tmp_path,
            approve_all=yes,
        )  # fmt: skip
        return host_session(request, stdin, io.StringIO()).approver

    assert isinstance(approver(_Terminal()), AskOnTerminal)
    assert isinstance(approver(io.StringIO()), Denying)
    assert isinstance(approver(io.StringIO(), yes=True), Approving)
