"""Permission patterns: parsing, located faults, and the pre-approvals that run any code."""

from __future__ import annotations

import pytest

from mindrian.host.patterns import (
    HOST_TOOLS,
    Pattern,
    PatternError,
    is_host_tool,
    parse_pattern,
    runs_arbitrary_code,
)


@pytest.mark.parametrize(
    ("text", "tool", "specifier"),
    [
        ("Read", "Read", ""),
        ("Bash(git status:*)", "Bash", "git status:*"),
        ("Write(src/**)", "Write", "src/**"),
        ("WebFetch(domain:example.com)", "WebFetch", "domain:example.com"),
        ("Bash(echo (x))", "Bash", "echo (x)"),
        ("mcp__github__get_issue", "mcp__github__get_issue", ""),
        ("context7_resolve-library-id", "context7_resolve-library-id", ""),
        ("mcp__my-server__get.item", "mcp__my-server__get.item", ""),
    ],
)
def test_well_formed_patterns_parse(text: str, tool: str, specifier: str) -> None:
    pattern = parse_pattern(text)
    assert (pattern.tool, pattern.specifier, pattern.text) == (tool, specifier, text)


@pytest.mark.parametrize(
    ("text", "column", "says"),
    [
        ("", 1, "empty"),
        ("(Bash)", 1, "tool name"),
        ("Bash git", 5, "expected '('"),
        ("Bash(git status", 5, "never closed"),
        ("Bash(x)y", 8, "after the closing"),
        ("Bash()", 6, "empty parentheses"),
        ("Bash(git:* status)", 9, "':*' may only end"),
        ("WebFetch(https://x.org)", 10, "domain:HOST"),
    ],
)
def test_malformed_patterns_name_their_column(text: str, column: int, says: str) -> None:
    with pytest.raises(PatternError) as caught:
        parse_pattern(text)
    assert caught.value.column == column
    assert says in caught.value.message


def test_command_prefix_and_every_call() -> None:
    assert parse_pattern("Bash(git status:*)").command_prefix == "git status"
    assert parse_pattern("Bash(git status)").command_prefix is None
    assert parse_pattern("Bash(*)").every_call and parse_pattern("Bash").every_call
    assert not parse_pattern("Bash(ls)").every_call


def test_host_tools_are_the_seven_in_canonical_order() -> None:
    assert HOST_TOOLS == ("Bash", "Read", "Write", "Edit", "Glob", "Grep", "WebFetch")
    assert is_host_tool(Pattern("Glob")) and not is_host_tool(Pattern("Task"))


@pytest.mark.parametrize(
    "text",
    [
        "Bash",
        "Bash(*)",
        "Bash(python3:*)",
        "Bash(python3.12 -c:*)",
        "Bash(node *)",
        "Bash(bash:*)",
        "Bash(sh -c:*)",
        "Bash(/usr/bin/env:*)",
        "Bash(npx:*)",
        "Bash(py*:*)",
        "Bash(python3 scripts/*)",
        "Bash(git:*)",
    ],
)
def test_pre_approvals_that_run_any_code(text: str) -> None:
    assert runs_arbitrary_code(parse_pattern(text))


@pytest.mark.parametrize(
    "text",
    [
        "Bash(git status:*)",
        "Bash(python3 scripts/check.py:*)",
        "Bash(ls -la)",
        "Read",
        "Write(src/**)",
        "WebFetch(domain:example.com)",
    ],
)
def test_pre_approvals_that_do_not(text: str) -> None:
    assert not runs_arbitrary_code(parse_pattern(text))
