"""Options shared by several commands are one definition each (``builder.cli.options``)."""

from __future__ import annotations

from collections.abc import Iterator

import typer
from typer.core import TyperGroup, TyperOption

from builder.cli.app import app

#: Flags with more than one meaning on purpose, and why.
OTHER_MEANINGS = {
    "--frames": "run prints handoff frames, not batch events",
    "--json": "run prints the agent's HandoffResult, not a report",
    "--model": "workflow run answers a graph's LLM steps, run and serve every agent",
    "--registry": "select and graph export read any registry file; build and register write one",
    "--neo4j-uri": "select and graph export read Neo4j; build and register register in it",
    "--format": "graph export's output format (yaml, json, cypher), not how findings print",
}
#: How many meanings each of those flags has (two unless said here).
MEANINGS = {"--format": 3}  # and diff's: a pull-request comment (markdown) or json


def commands(group: TyperGroup, prefix: str = "") -> Iterator[tuple[str, typer.core.TyperCommand]]:
    for name, command in sorted(group.commands.items()):
        path = f"{prefix}{name}"
        if isinstance(command, TyperGroup):
            yield from commands(command, f"{path} ")
        else:
            yield path, command


def test_a_flag_reads_the_same_in_every_command_that_shares_it() -> None:
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    seen: dict[str, dict[str, tuple[str | None, str | None]]] = {}
    for path, command in commands(root):
        for param in command.params:
            if isinstance(param, TyperOption) and param.opts[0] != "--help":
                seen.setdefault(param.opts[0], {})[path] = (param.metavar, param.help)
    shared = {flag: uses for flag, uses in seen.items() if len(uses) > 1}
    # The flags the issue names are among them, used by the commands that need them.
    assert {"--json", "--quiet", "--jobs", "--shard", "--frames", "--checkpoints", "--out"} <= set(
        shared
    )
    assert {"build", "register", "explain", "select"} <= set(shared["--json"])
    for flag, uses in shared.items():
        expected = MEANINGS.get(flag, 2) if flag in OTHER_MEANINGS else 1
        assert len(set(uses.values())) == expected, (flag, uses)
