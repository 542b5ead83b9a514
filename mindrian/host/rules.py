"""Permission rules in Agent Skills / Claude Code syntax, and what a shell command is.

A rule is ``Tool`` (every call of the tool) or ``Tool(specifier)``:

* ``Bash(git status)`` is that command exactly; ``Bash(git status:*)`` (or
  ``Bash(git status *)``) is ``git status`` alone or followed by arguments, on a
  word boundary; any other ``*`` matches any run of characters. A command is
  matched on its words (``shlex``), so spacing and quoting do not matter.
* ``Read(path)``, ``Edit(path)``, ``Write(path)``, ``Glob(path)``, ``Grep(path)``:
  a gitignore-style glob (``*`` within a folder, ``**`` across folders) matched
  against the resolved path: ``//abs/path`` from the file-system root,
  ``~/path`` from the home folder, ``/path`` and ``path`` from the workspace; a
  pattern without ``/`` matches a name at any depth. As in Claude Code, a
  ``Read`` rule also covers ``Glob`` and ``Grep``, and an ``Edit`` rule ``Write``.
* ``WebFetch(domain:example.com)``: fetches from that host.

Only a *plain* command ever matches a rule that names a command: words,
quotes and escapes, nothing else. A compound command (``;``, ``&&``, ``||``,
``|``, ``&``, ``$(…)``, backticks, redirection ``<``/``>``, newlines,
parentheses) or one that needs the shell's expansions (``$VAR``, globs, ``~``,
braces, an ``X=1`` prefix, comments) matches only the bare rule ``Bash``. A
plain command runs as an argument vector, without a shell, so what was matched
is what runs.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mindrian.errors import MindrianError
from mindrian.host.patterns import (
    HOST_TOOLS,
    Pattern,
    PatternError,
    is_host_tool,
    parse_pattern,
    runs_arbitrary_code,
)

__all__ = [
    "Command",
    "Rule",
    "RuleError",
    "allowed_rules",
    "arbitrary_code_rules",
    "glob_regex",
    "parse_command",
    "parse_rule",
    "parse_rules",
]

#: Rules of one tool that also cover another (Claude Code applies Read rules to every tool that
#: reads files, Edit rules to every tool that edits them).
_COVERS: Mapping[str, frozenset[str]] = {
    "Read": frozenset({"Read", "Glob", "Grep"}),
    "Edit": frozenset({"Edit", "Write"}),
}
#: Characters that make a command compound or redirected, outside quotes.
_OPERATORS = frozenset(";&|<>()\n\r")
#: Characters the shell expands outside quotes (variables and substitution are separate).
_EXPANSIONS = frozenset("*?[]{}~!#")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class RuleError(MindrianError, ValueError):
    """A permission rule that cannot be read."""


@dataclass(frozen=True)
class Command:
    """A Bash command as the permission check sees it."""

    text: str
    """The command as the model wrote it."""
    argv: tuple[str, ...] | None
    """Its words when it is plain (runs without a shell); None when it needs a shell."""
    why_shell: str = ""
    """Why it needs a shell (``compound``, ``expansion``), empty when plain."""

    @property
    def plain(self) -> bool:
        """Whether it runs as an argument vector and may match a command rule."""
        return self.argv is not None


def parse_command(text: str) -> Command:
    """``text`` as a :class:`Command`: its words when plain, else why it needs a shell."""
    why = _shell_feature(text)
    if why:
        return Command(text, None, why)
    try:
        words = tuple(shlex.split(text, posix=True))
    except ValueError:  # an unclosed quote: only a shell can say what it means
        return Command(text, None, "expansion")
    if not words or _ASSIGNMENT.match(words[0]):
        return Command(text, None, "expansion" if words else "empty")
    return Command(text, words)


def _shell_feature(text: str) -> str:
    """``compound`` or ``expansion`` when ``text`` uses the shell beyond words and quotes."""
    if "\n" in text or "\r" in text:
        return "compound"  # a newline separates commands; inside quotes too, to be safe
    quote = ""
    escaped = False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            escaped = True
        elif char == "`" or text.startswith("$(", index):
            return "compound"  # command substitution, even inside double quotes
        elif char == "$":
            return "expansion"
        elif quote == '"':
            quote = "" if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char in _OPERATORS:
            return "compound"
        elif char in _EXPANSIONS:
            return "expansion"
    return ""


@dataclass(frozen=True)
class Rule:
    """One permission rule."""

    text: str
    """The rule as written."""
    tool: str
    """The tool it names."""
    specifier: str | None
    """What is inside the parentheses; None for a bare tool name (or ``Tool(*)``)."""
    pattern: Pattern
    """The pattern as :mod:`mindrian.host.patterns` parsed it (the builder's parser too)."""

    @property
    def bare(self) -> bool:
        """Whether it allows every call of its tool."""
        return self.specifier is None

    def covers(self, tool: str) -> bool:
        """Whether the rule's tool is ``tool`` or a tool family that includes it."""
        return tool == self.tool or tool in _COVERS.get(self.tool, frozenset())

    def matches_command(self, command: Command) -> bool:
        """Whether a Bash rule allows ``command`` (only a bare rule allows one needing a shell)."""
        if self.tool != "Bash":
            return False
        if self.specifier is None:
            return True
        if command.argv is None:
            return False
        return _command_pattern(self.specifier).fullmatch(" ".join(command.argv)) is not None

    def matches_path(self, tool: str, path: Path, workspace: Path) -> bool:
        """Whether a file rule allows ``tool`` on the resolved ``path``."""
        if not self.covers(tool):
            return False
        if self.specifier is None:
            return True
        return _path_matches(self.specifier, path, workspace)

    def matches_host(self, host: str) -> bool:
        """Whether a WebFetch rule allows fetching from ``host``."""
        if self.tool != "WebFetch":
            return False
        if self.specifier is None:
            return True
        domain = self.specifier.removeprefix("domain:").strip().lower()
        return self.specifier.startswith("domain:") and host.lower().rstrip(".") == domain

    @property
    def runs_arbitrary_code(self) -> bool:
        """Whether a Bash rule pre-approves a program that runs any code it is given."""
        return runs_arbitrary_code(self.pattern)


def parse_rule(text: str) -> Rule:
    """A rule naming a host tool; raises :class:`RuleError` for anything else."""
    try:
        pattern = parse_pattern(text.strip())
    except PatternError as error:
        raise RuleError(f"{error.message} (column {error.column})") from None
    if not is_host_tool(pattern):
        raise RuleError(
            f"{text.strip()!r}: unknown tool {pattern.tool!r} (one of {', '.join(HOST_TOOLS)})"
        )
    specifier = None if pattern.every_call else pattern.specifier.strip()
    return Rule(pattern.text, pattern.tool, specifier, pattern)


def parse_rules(texts: Iterable[Any]) -> tuple[Rule, ...]:
    """Every rule of ``texts`` (command-line values), in order; any that is no rule raises."""
    return tuple(parse_rule(str(text)) for text in texts)


def allowed_rules(texts: Iterable[Any]) -> tuple[Rule, ...]:
    """The rules of a spec's ``tools.host.allow`` that name a host tool (an ``allowed-tools``
    entry for a tool this runtime lacks, ``Task``, was warned about at build: W402)."""
    rules = []
    for text in texts:
        try:
            rules.append(parse_rule(str(text)))
        except RuleError:
            continue
    return tuple(rules)


def arbitrary_code_rules(rules: Iterable[Rule]) -> tuple[Rule, ...]:
    """The rules that pre-approve running arbitrary code (bare ``Bash``, ``Bash(python3:*)``…)."""
    return tuple(rule for rule in rules if rule.runs_arbitrary_code)


def _command_pattern(specifier: str) -> re.Pattern[str]:
    """A command rule as a regular expression over the command's words joined by spaces."""
    if specifier.endswith(":*"):
        specifier = specifier[:-2].rstrip() + " *"
    try:
        words = shlex.split(specifier.replace("*", "\0"), posix=True)
    except ValueError:
        words = specifier.replace("*", "\0").split()
    pattern = " ".join(words)
    # "cmd *" with its only star at the end: the arguments are optional, on a word boundary.
    if pattern.endswith(" \0") and pattern.count("\0") == 1:
        return re.compile(re.escape(pattern[:-2]) + r"(?: .*)?", re.DOTALL)
    return re.compile(".*".join(re.escape(part) for part in pattern.split("\0")), re.DOTALL)


def _path_matches(specifier: str, path: Path, workspace: Path) -> bool:
    if specifier.startswith("//"):
        base, glob = Path("/"), specifier[2:]
    elif specifier.startswith("~/"):
        base, glob = Path.home(), specifier[2:]
    else:
        base, glob = workspace, specifier.removeprefix("./").lstrip("/")
        if "/" not in glob:
            glob = "**/" + glob
    try:
        relative = path.relative_to(base.resolve()).as_posix()
    except ValueError:
        return False
    # A folder pattern covers what is inside it.
    return re.fullmatch(glob_regex(glob).pattern + "(?:/.*)?", relative, re.DOTALL) is not None


def glob_regex(glob: str) -> re.Pattern[str]:
    """A glob over ``/``-separated relative paths: ``**/`` any folders (none too), ``**``
    anything, ``*`` and ``?`` within one name."""
    out = []
    index = 0
    while index < len(glob):
        if glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif glob[index] == "*":
            out.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(glob[index]))
            index += 1
    return re.compile("".join(out), re.DOTALL)
