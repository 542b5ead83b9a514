"""Permission rules: Claude Code's syntax, and compound commands that never match a command rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from mindrian.host import RuleError, arbitrary_code_rules, parse_command, parse_rule, parse_rules


@pytest.mark.parametrize(
    ("rule", "command", "allowed"),
    [
        ("Bash(git status:*)", "git status", True),
        ("Bash(git status:*)", "git status --short", True),
        ("Bash(git status:*)", "git  status   -s", True),  # words, not spacing
        ("Bash(git status:*)", "git statusx", False),  # a word boundary
        ("Bash(git status:*)", "git -c core.pager=sh status", False),
        ("Bash(git status *)", "git status -s", True),
        ("Bash(git status)", "git status", True),
        ("Bash(git status)", "git status -s", False),
        ("Bash(git * main)", "git log main", True),
        ("Bash(ls*)", "lsof", True),
        ("Bash(python3:*)", "python3 scripts/x.py --n 3", True),
        ("Bash", "anything at all; rm -rf x", True),
        ("Bash(*)", "echo $HOME", True),
    ],
)
def test_command_rules_match_as_claude_code_documents(
    rule: str, command: str, allowed: bool
) -> None:
    assert parse_rule(rule).matches_command(parse_command(command)) is allowed


@pytest.mark.parametrize(
    "command",
    [
        "git status; cat ../secret.txt",
        "git status && rm -f a.txt",
        "git status || true",
        "git status | tee x",
        "git status & sleep 1",
        "git status $(rm -f a.txt)",
        'git status "$(rm -f a.txt)"',
        "git status `rm -f a.txt`",
        "git status > out.txt",
        "git status < in.txt",
        "git status\nrm -f a.txt",
        "git status 'a\nb'",
        "git status (x)",
    ],
)
def test_a_compound_command_never_matches_a_command_rule(command: str) -> None:
    parsed = parse_command(command)
    assert parsed.why_shell == "compound"
    assert not parse_rule("Bash(git status:*)").matches_command(parsed)
    assert not parse_rule("Bash(git *)").matches_command(parsed)
    assert parse_rule("Bash").matches_command(parsed)


@pytest.mark.parametrize(
    "command", ["git status $HOME", "git status *.txt", "git status ~/x", "X=1 git status"]
)
def test_a_command_needing_the_shells_expansions_matches_only_bare_bash(command: str) -> None:
    parsed = parse_command(command)
    assert parsed.argv is None and parsed.why_shell == "expansion"
    assert not parse_rule("Bash(git status:*)").matches_command(parsed)


def test_quoted_operators_are_words_and_the_command_runs_without_a_shell() -> None:
    parsed = parse_command("python3 -c 'print(1); print(2)' \"a|b\"")
    assert parsed.argv == ("python3", "-c", "print(1); print(2)", "a|b")
    assert parse_rule("Bash(python3:*)").matches_command(parsed)


def test_file_rules_are_gitignore_globs_from_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path.resolve()
    write_src = parse_rule("Write(src/**)")
    assert write_src.matches_path("Write", workspace / "src" / "a" / "b.py", workspace)
    assert not write_src.matches_path("Write", workspace / "docs" / "a.md", workspace)
    assert not write_src.matches_path("Edit", workspace / "src" / "a.py", workspace)
    # An Edit rule covers Write; a Read rule covers Glob and Grep (as in Claude Code).
    assert parse_rule("Edit(src/**)").matches_path("Write", workspace / "src" / "a.py", workspace)
    assert parse_rule("Read").matches_path("Grep", workspace, workspace)
    assert parse_rule("Read(*.md)").matches_path("Read", workspace / "x" / "y.md", workspace)
    assert parse_rule("Read(//etc/**)").matches_path("Read", Path("/etc/hosts"), workspace)
    assert not parse_rule("Read(//etc/**)").matches_path("Read", workspace / "etc", workspace)


def test_webfetch_rules_name_a_domain() -> None:
    assert parse_rule("WebFetch(domain:example.com)").matches_host("example.com")
    assert not parse_rule("WebFetch(domain:example.com)").matches_host("evil.example.com.net")
    with pytest.raises(RuleError, match="WebFetch takes domain:HOST"):
        parse_rule("WebFetch(example.com)")


@pytest.mark.parametrize("text", ["Bash(git", "Curl(x)", "read", ""])
def test_what_is_no_rule_is_an_error(text: str) -> None:
    with pytest.raises(RuleError):
        parse_rule(text)


def test_rules_that_run_arbitrary_code_are_named() -> None:
    rules = parse_rules(
        ["Bash(git status:*)", "Bash(python3:*)", "Bash(node *)", "Bash", "Read", "Bash(sh:*)"]
    )
    assert [r.text for r in arbitrary_code_rules(rules)] == [
        "Bash(python3:*)",
        "Bash(node *)",
        "Bash",
        "Bash(sh:*)",
    ]
