"""Permission patterns in Agent Skills / Claude Code syntax, parsed (pure: no I/O).

A pattern is a tool name alone (``Read``: every call of that tool) or a tool name with a
specifier in parentheses (``Bash(git status:*)``, ``Write(src/**)``,
``WebFetch(domain:example.com)``). The builder validates a skill's ``allowed-tools`` with
:func:`parse_pattern` and names the pre-approvals that run arbitrary code
(:func:`runs_arbitrary_code`); the runtime matches calls against the same parsed patterns.

Syntax checked here (each a :class:`PatternError` with its 1-based column in the pattern):

* the tool name is a letter followed by letters, digits, ``_``, ``-`` or ``.``
  (``mcp__my-server__tool``, ``context7_resolve-library-id``);
* a ``(`` is closed by the last character, which is ``)``, and nothing follows it;
* the specifier is not empty and not only blanks;
* in ``Bash``, the legacy prefix marker ``:*`` comes only at the end (Claude Code's rule);
* ``WebFetch`` takes ``domain:HOST`` and nothing else.

A well-formed pattern may name a tool this runtime does not provide (``Task``,
``AskUserQuestion``): :func:`is_host_tool` tells them apart, and the builder warns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mindrian.errors import MindrianError

__all__ = [
    "ARBITRARY_CODE_COMMANDS",
    "HOST_TOOLS",
    "Pattern",
    "PatternError",
    "is_host_tool",
    "parse_pattern",
    "runs_arbitrary_code",
]

#: The host tools, in canonical order (the order of ``tools.host.grant`` in spec.yaml).
HOST_TOOLS: tuple[str, ...] = ("Bash", "Read", "Write", "Edit", "Glob", "Grep", "WebFetch")

#: Programs whose arguments can make them run any code: shells, interpreters, package runners
#: and build tools (they run scripts from files the agent can write), and wrappers that run
#: another command (``git``: its ``-c`` options and aliases run shell commands). A
#: pre-approved ``Bash`` prefix that fixes only such a program (and its
#: options) runs arbitrary code.
ARBITRARY_CODE_COMMANDS: frozenset[str] = frozenset(
    """
    bash sh zsh dash ksh mksh fish csh tcsh pwsh powershell busybox
    python python2 python3 pypy pypy3 ipython node nodejs deno bun ruby irb perl php lua luajit
    rscript julia java jshell groovy scala osascript tclsh wish awk gawk
    npx npm pnpm yarn uv uvx pipx pip pip3 poetry pdm hatch conda make cmake cargo go dotnet
    gradle mvn docker podman kubectl
    env xargs sudo doas su nice nohup timeout time watch exec eval command builtin source
    find ssh script git
    """.split()
)

#: MCP tools' names carry their server's (``mcp__github-server__get_issue``): hyphens and dots.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
#: ``python3.11``, ``python3.12``: interpreters named with their version.
_VERSIONED = re.compile(r"^(python|pypy|ruby|perl|php|lua|node)[0-9.]*$")


class PatternError(MindrianError, ValueError):
    """A malformed pattern: ``message`` says why, ``column`` (1-based) where in the pattern."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message = message
        """What is wrong, one sentence."""
        self.column = column
        """1-based column in the pattern text where the fault is."""


@dataclass(frozen=True)
class Pattern:
    """A parsed permission pattern."""

    tool: str
    """The tool name as written (``Bash``)."""
    specifier: str = ""
    """What is inside the parentheses, as written; empty for the bare tool (every call)."""

    @property
    def text(self) -> str:
        """The pattern written out (``Bash(git status:*)``)."""
        return f"{self.tool}({self.specifier})" if self.specifier else self.tool

    @property
    def every_call(self) -> bool:
        """Whether the pattern matches every call of its tool (``Bash``, ``Bash(*)``)."""
        return self.specifier in ("", "*", ":*")

    @property
    def command_prefix(self) -> str | None:
        """For ``Bash(PREFIX:*)``, the prefix a command must start with; None otherwise."""
        if self.tool != "Bash" or not self.specifier.endswith(":*"):
            return None
        return self.specifier[:-2]


def parse_pattern(text: str) -> Pattern:
    """The pattern ``text`` names; raises :class:`PatternError` (with a column) when malformed."""
    if not text.strip():
        raise PatternError("the pattern is empty", 1)
    name = _NAME.match(text)
    if name is None:
        raise PatternError(f"{text!r} does not start with a tool name", 1)
    end = name.end()
    if end == len(text):
        return Pattern(text)
    if text[end] != "(":
        raise PatternError(
            f"{text!r}: expected '(' or the end after the tool name {text[:end]!r}", end + 1
        )
    close = _closing(text, end)
    if close is None:
        raise PatternError(f"{text!r}: the '(' is never closed", end + 1)
    if close != len(text) - 1:
        raise PatternError(f"{text!r}: text after the closing ')'", close + 2)
    specifier = text[end + 1 : -1]
    if not specifier.strip():
        raise PatternError(f"{text!r}: empty parentheses (write {text[:end]} alone)", end + 2)
    pattern = Pattern(text[:end], specifier)
    _check_specifier(pattern, end + 2)
    return pattern


def _closing(text: str, start: int) -> int | None:
    """Index of the ')' that closes the '(' at ``start`` (nesting counted); None if none does."""
    depth = 0
    for i in range(start, len(text)):
        depth += (text[i] == "(") - (text[i] == ")")
        if depth == 0:
            return i
    return None


def _check_specifier(pattern: Pattern, column: int) -> None:
    spec = pattern.specifier
    if pattern.tool == "Bash":
        marker = spec.find(":*")
        if marker != -1 and marker != len(spec) - 2:
            raise PatternError(
                f"{pattern.text!r}: ':*' may only end a Bash prefix", column + marker
            )
    if pattern.tool == "WebFetch" and not (spec.startswith("domain:") and spec[7:].strip()):
        raise PatternError(f"{pattern.text!r}: WebFetch takes domain:HOST", column)


def is_host_tool(pattern: Pattern) -> bool:
    """Whether the pattern names one of :data:`HOST_TOOLS`."""
    return pattern.tool in HOST_TOOLS


def runs_arbitrary_code(pattern: Pattern) -> bool:
    """Whether pre-approving ``pattern`` lets any code run without asking.

    True for every ``Bash`` call (``Bash``, ``Bash(*)``) and for a ``Bash`` prefix whose
    fixed part names only one of :data:`ARBITRARY_CODE_COMMANDS` (by its file name, any
    version suffix) and options: ``Bash(python3:*)``, ``Bash(node *)``, ``Bash(sh -c:*)``,
    ``Bash(/usr/bin/env:*)``. ``Bash(python3 scripts/check.py:*)`` fixes the script and is not.
    A wildcard inside the command word (``Bash(py*:*)``) counts as any program.
    """
    if pattern.tool != "Bash":
        return False
    if pattern.every_call:
        return True
    words = pattern.specifier.removesuffix(":*").split()
    if not words or "*" in words[0]:
        return True
    command = words[0].rsplit("/", 1)[-1].lower()
    fixed: list[str] = []
    for word in words[1:]:
        if "*" in word:  # a wildcard ends what the pattern fixes
            break
        fixed.append(word)
    arbitrary = command in ARBITRARY_CODE_COMMANDS or bool(_VERSIONED.match(command))
    return arbitrary and all(word.startswith("-") for word in fixed)
