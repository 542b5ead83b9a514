"""The host's tools, named and shaped as Claude Code's, as Agno functions.

``Bash(command, timeout?)``, ``Read(file_path, offset?, limit?)``,
``Write(file_path, content)``, ``Edit(file_path, old_string, new_string,
replace_all?)``, ``Glob(pattern, path?)``, ``Grep(pattern, path?, glob?)`` and
``WebFetch(url, prompt?)``: an agent whose skill was written for a host that
runs commands and reads files gets the tools its text and ``allowed-tools``
name, under the same names, so a model's habits carry over. Each call is
confined (:mod:`mindrian.host.confine`), checked (:mod:`mindrian.host.gate`),
run, and recorded; a call that does not run returns one plain sentence saying
why, which the model reads and the user sees.

They are Agno ``Function`` objects of their own rather than Agno's
``ShellTools``/``FileTools``/``Workspace`` toolkits: those take other names and
parameters (``run_shell_command(args)``, ``read_file(path)``), and their command
runner neither kills a process group on timeout, nor caps output while reading,
nor leaves the parent's keys out of the environment, which these tools promise.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agno.tools.function import Function

from mindrian.host.confine import Confinement, OutsideError
from mindrian.host.fetch import FetchRefusedError, fetch, target_of
from mindrian.host.gate import (
    Approver,
    Denying,
    Gate,
    HostGrant,
    Outcome,
    ToolLog,
    ToolRecord,
    ToolRequest,
)
from mindrian.host.process import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, run_command, shell_argv
from mindrian.host.rules import Rule, glob_regex, parse_command

__all__ = ["HostSession", "HostTools", "host_functions", "host_note", "scoped_session"]

#: Lines Read returns unless asked for fewer, and the longest line it shows whole.
_READ_LINES = 2000
_LINE_CHARS = 2000
#: Matches Glob and Grep list at most.
_MATCHES = 500
#: Files larger than this are not searched by Grep, nor read by Read.
_FILE_CAP = 10_000_000
#: Files Glob and Grep look at, at most.
_FILES_WALKED = 100_000


@dataclass(frozen=True)
class HostSession:
    """What a run gives every agent's host tools: where they work, who approves, the log."""

    workspace: Path
    """The folder the tools work in."""
    approver: Approver = field(default_factory=Denying)
    """Asked about calls no rule allows."""
    approved: tuple[Rule, ...] = ()
    """The user's own rules (``--approve``)."""
    log: ToolLog = field(default_factory=ToolLog)
    """Where every call is recorded."""
    confirm_in_run: bool = False
    """Serve: mark the tools as needing confirmation, so that Agno pauses the run on a call
    (the served agent confirms pre-approved calls itself and lets the client answer the rest)."""
    per_user: bool = False
    """Serve: each run works in its user's own folder (:func:`scoped_session`), so the model is
    told to use relative paths rather than this session's absolute workspace."""


#: The session of the run in progress when it is not the agent's own (serve: the user's folder).
_SCOPED: ContextVar[HostSession | None] = ContextVar("mindrian_host_session", default=None)


@contextmanager
def scoped_session(session: HostSession) -> Iterator[None]:
    """Run the block's host tool calls in ``session`` (a served user's folder and log)."""
    token = _SCOPED.set(session)
    try:
        yield
    finally:
        _SCOPED.reset(token)


class _Stop(Exception):
    """A call that does not run: its outcome and the sentence the model is told."""

    def __init__(self, outcome: Outcome, reason: str) -> None:
        super().__init__(reason)
        self.outcome: Outcome = outcome


@dataclass(frozen=True)
class HostTools:
    """One agent's host tools in one run."""

    grant: HostGrant
    """What the agent's package grants."""
    own_session: HostSession
    """The agent's workspace, approver and log (a scoped session takes its place in a block)."""
    skill_dir: Path | None = None
    """The package's copy of the skill's files (``skill/``), when it has one."""

    @property
    def session(self) -> HostSession:
        """The session of the call in progress: the scoped one, else the agent's own."""
        return _SCOPED.get() or self.own_session

    def runs_without_asking(self, tool: str, arguments: dict[str, Any]) -> bool:
        """Whether a call needs nobody's confirmation: a rule allows it, or it will be refused
        whatever anyone says (nothing runs, the model is told why)."""
        try:
            request = self.request(tool, arguments)
        except (OutsideError, FetchRefusedError, _Stop):
            return True
        return self.gate.preapproved(request) is not None

    @property
    def confinement(self) -> Confinement:
        """Where the tools may read and write."""
        return Confinement.of(self.session.workspace, self.skill_dir)

    @property
    def gate(self) -> Gate:
        """The permission check: the skill's rules, the user's, the approver."""
        session = self.session
        return Gate(self.confinement, self.grant.allow, session.approved, session.approver)

    def request(self, tool: str, arguments: dict[str, Any]) -> ToolRequest:
        """The request a call makes (raises ``OutsideError`` or ``FetchRefusedError`` when the
        call is refused before anyone is asked)."""
        confinement = self.confinement
        if tool == "Bash":
            command = parse_command(str(arguments.get("command") or ""))
            if command.why_shell == "empty":
                raise _Stop("refused", "Refused: the command is empty.")
            return ToolRequest(tool, command.text, command=command)
        if tool == "WebFetch":
            url = str(arguments.get("url") or "")
            return ToolRequest(tool, url, target=target_of(url))
        if tool in ("Glob", "Grep"):
            where = confinement.readable(str(arguments.get("path") or "."))
            return ToolRequest(tool, str(arguments.get("pattern")), path=where)
        path = str(arguments.get("file_path") or "")
        resolved = confinement.readable(path) if tool == "Read" else confinement.writable(path)
        return ToolRequest(tool, path, path=resolved)

    async def acall(
        self, tool: str, arguments: dict[str, Any], work: Callable[[ToolRequest], str]
    ) -> str:
        """:meth:`call` in a thread, its turn taken now (in the order the model made the calls)."""
        slot = self.session.log.reserve()
        return await asyncio.to_thread(self.call, tool, arguments, work, slot)

    def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        work: Callable[[ToolRequest], str],
        slot: int | None = None,
    ) -> str:
        """Check, run and record one call (after the calls before ``slot``); returns what the
        model is told."""
        log = self.session.log
        slot = log.reserve() if slot is None else slot
        log.wait_turn(slot)
        outcome: Outcome = "ran"
        output = "Error: the tool failed."
        try:
            request = self.request(tool, arguments)
            decision = self.gate.decide(request)
            if not decision.allowed:
                raise _Stop("denied", f"Denied: {request.label}: {decision.reason}.")
            if request.command is not None and decision.by_command_rule:
                assert request.command.argv is not None  # a command rule matches plain commands
                self.confinement.check_arguments(request.command.argv)
            output = work(request)
        except _Stop as stop:
            output, outcome = str(stop), stop.outcome
        except (OutsideError, FetchRefusedError) as error:
            output, outcome = f"Refused: {error}.", "refused"
        except OSError as error:  # the call ran and failed (a missing folder, no permission)
            output = f"Error: {error.strerror or error}."
        finally:  # an unexpected error still ends the call's turn
            log.add(slot, ToolRecord(tool, dict(arguments), outcome, output))
        return output

    # -- the tools' work, once a call may run -------------------------------------------------

    def bash(self, request: ToolRequest, timeout_ms: Any) -> str:
        command = request.command
        assert command is not None
        seconds = _seconds(timeout_ms)
        argv = list(command.argv) if command.argv is not None else shell_argv(command.text)
        return run_command(argv, cwd=self.confinement.workspace, timeout=seconds).text(seconds)

    def read(self, request: ToolRequest, offset: Any, limit: Any) -> str:
        path = _existing_file(request)
        if path.stat().st_size > _FILE_CAP:
            raise _Stop("refused", f"Refused: {request.subject} is larger than 10 MB.")
        start = max(int(offset or 1), 1)
        count = max(int(limit or _READ_LINES), 1)
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            return f"[{request.subject}: binary file, {len(data)} bytes]"
        lines = data.decode("utf-8", errors="replace").splitlines()
        shown = [
            f"{number:6}\t{line[:_LINE_CHARS]}"
            for number, line in enumerate(lines[start - 1 : start - 1 + count], start)
        ]
        return "\n".join(shown) if shown else f"[{request.subject}: no lines from line {start}]"

    def write(self, request: ToolRequest, content: Any) -> str:
        path = request.path
        assert path is not None
        if path.is_dir():
            raise _Stop("refused", f"Refused: {request.subject} is a folder.")
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "" if content is None else str(content)
        path.write_text(text, encoding="utf-8")
        return f"Wrote {len(text.encode('utf-8'))} bytes to {request.subject}."

    def edit(self, request: ToolRequest, old: Any, new: Any, replace_all: Any) -> str:
        path = _existing_file(request)
        old_text, new_text = str(old or ""), str(new or "")
        if not old_text or old_text == new_text:
            raise _Stop("refused", "Refused: old_string must be non-empty and not new_string.")
        text = path.read_text(encoding="utf-8")
        found = text.count(old_text)
        if found == 0:
            raise _Stop("refused", f"Refused: old_string does not occur in {request.subject}.")
        if found > 1 and not replace_all:
            raise _Stop(
                "refused",
                f"Refused: old_string occurs {found} times in {request.subject}; give more "
                "context to make it unique, or set replace_all.",
            )
        path.write_text(text.replace(old_text, new_text), encoding="utf-8")
        return f"Replaced {found if replace_all else 1} occurrence(s) in {request.subject}."

    def glob(self, request: ToolRequest) -> str:
        root = request.path
        assert root is not None
        pattern = request.subject
        if pattern.startswith("/") or ".." in Path(pattern).parts:
            raise _Stop("refused", "Refused: a Glob pattern is relative to its path, without '..'.")
        wanted = glob_regex(pattern.removeprefix("./"))
        found = [shown for shown, _ in self._readable(root) if wanted.fullmatch(shown)]
        return _listing(found, "no file matches")

    def grep(self, request: ToolRequest, file_glob: Any) -> str:
        root = request.path
        assert root is not None
        try:
            regex = re.compile(request.subject)
        except re.error as error:
            raise _Stop("refused", f"Refused: not a regular expression: {error}.") from None
        names = str(file_glob or "**")
        wanted = glob_regex(names if "/" in names else "**/" + names)
        hits = []
        for shown, resolved in self._readable(root):
            if wanted.fullmatch(shown):
                hits.extend(_grep_file(resolved, regex, shown))
            if len(hits) > _MATCHES:
                break
        return _listing(hits, "no match")

    def webfetch(self, request: ToolRequest) -> str:
        assert request.target is not None
        # A call that reached this point was approved; a private address needs the user's word,
        # which the gate gave only if a user rule or the user allowed it.
        rule = self.gate.preapproved(request)
        user_approved = rule is None or rule in self.session.approved
        return fetch(request.target, allow_private=user_approved)

    def _readable(self, root: Path) -> Iterator[tuple[str, Path]]:
        """(path shown, resolved path) of each file under ``root`` that resolves inside what the
        tools may read, in name order. Links to folders are not followed (one leading to ``/``
        would walk the whole disk), and at most 100,000 files are looked at."""
        confinement = self.confinement
        if root.is_file():
            yield root.name, root
            return
        for count, path in enumerate(_files(root)):
            if count >= _FILES_WALKED:
                return
            try:
                yield path.relative_to(root).as_posix(), confinement.readable(str(path))
            except (OutsideError, OSError):
                continue


def _files(root: Path) -> Iterator[Path]:
    """The files under ``root``, folders in name order, links to folders not followed."""
    for folder, folders, files in os.walk(root, followlinks=False):
        folders.sort()
        for name in sorted(files):
            yield Path(folder) / name


def _seconds(timeout_ms: Any) -> float:
    if timeout_ms in (None, ""):
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(timeout_ms) / 1000
    except (TypeError, ValueError):
        raise _Stop("refused", "Refused: timeout is a number of milliseconds.") from None
    return min(max(seconds, 0.001), MAX_TIMEOUT_S)


def _existing_file(request: ToolRequest) -> Path:
    path = request.path
    assert path is not None
    if not path.is_file():
        raise _Stop("refused", f"Refused: {request.subject} is not a file.")
    return path


def _grep_file(file: Path, regex: re.Pattern[str], shown: str) -> list[str]:
    try:
        if file.stat().st_size > _FILE_CAP:
            return []
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return [
        f"{shown}:{number}:{line[:_LINE_CHARS]}"
        for number, line in enumerate(text.splitlines(), 1)
        if regex.search(line)
    ]


def _listing(items: list[str], empty: str) -> str:
    if not items:
        return f"[{empty}]"
    more = f"\n[{len(items) - _MATCHES} more not shown]" if len(items) > _MATCHES else ""
    return "\n".join(items[:_MATCHES]) + more


def host_functions(tools: HostTools) -> tuple[Function, ...]:
    """The granted tools as Agno functions, in canonical order."""
    made = {
        "Bash": _bash,
        "Read": _read,
        "Write": _write,
        "Edit": _edit,
        "Glob": _glob,
        "Grep": _grep,
        "WebFetch": _webfetch,
    }
    functions = []
    for name in tools.grant.grant:
        function = Function.from_callable(made[name](tools))
        if tools.own_session.confirm_in_run:
            function.requires_confirmation = True
        functions.append(function)
    return tuple(functions)


def host_note(tools: HostTools) -> str:
    """What the model is told at load time: where the skill's files and the workspace are."""
    lines = ["", "", "## Your tools' folders", ""]
    if tools.skill_dir is not None and tools.skill_dir.is_dir():
        lines.append(
            f"Base directory for this skill's files: {tools.skill_dir.resolve()} "
            "(read them and run its scripts from there; they are read-only)."
        )
    where = (
        "the current folder of your commands; give paths relative to it"
        if tools.session.per_user
        else str(tools.session.workspace.resolve())
    )
    lines.append(f"Workspace (where commands run and files are written): {where}")
    return "\n".join(lines) + "\n"


# -- the functions the model calls (their docstrings are the tools' descriptions) ------------


def _bash(tools: HostTools) -> Callable[..., Awaitable[str]]:
    async def Bash(command: str, timeout: int | None = None) -> str:
        """Run a command in the workspace and return its output (stdout and stderr).

        Args:
            command: The command line to run.
            timeout: Optional time limit in milliseconds (at most 600000; default 120000).
        """
        return await tools.acall(
            "Bash", _given(command=command, timeout=timeout), lambda r: tools.bash(r, timeout)
        )

    return Bash


def _read(tools: HostTools) -> Callable[..., Awaitable[str]]:
    async def Read(file_path: str, offset: int | None = None, limit: int | None = None) -> str:
        """Read a text file, with line numbers (up to 2000 lines unless limit says otherwise).

        Args:
            file_path: The file: absolute, or relative to the workspace.
            offset: Optional line number to start from (the first line is 1).
            limit: Optional number of lines to read.
        """
        arguments = _given(file_path=file_path, offset=offset, limit=limit)
        return await tools.acall("Read", arguments, lambda r: tools.read(r, offset, limit))

    return Read


def _write(tools: HostTools) -> Callable[..., Awaitable[str]]:
    async def Write(file_path: str, content: str) -> str:
        """Write a file in the workspace, replacing it if it exists.

        Args:
            file_path: The file: absolute, or relative to the workspace.
            content: The whole content to write.
        """
        arguments = _given(file_path=file_path, content=content)
        return await tools.acall("Write", arguments, lambda r: tools.write(r, content))

    return Write


def _edit(tools: HostTools) -> Callable[..., Awaitable[str]]:
    async def Edit(
        file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> str:
        """Replace exact text in a file of the workspace.

        Args:
            file_path: The file: absolute, or relative to the workspace.
            old_string: The text to replace; it must occur exactly once unless replace_all.
            new_string: The text to put in its place.
            replace_all: Replace every occurrence instead of exactly one.
        """
        arguments = _given(
            file_path=file_path, old_string=old_string, new_string=new_string,
            replace_all=replace_all or None,
        )  # fmt: skip
        work = lambda r: tools.edit(r, old_string, new_string, replace_all)  # noqa: E731
        return await tools.acall("Edit", arguments, work)

    return Edit


def _glob(tools: HostTools) -> Callable[..., Awaitable[str]]:
    async def Glob(pattern: str, path: str | None = None) -> str:
        """List the files whose path matches a glob pattern such as "**/*.py".

        Args:
            pattern: The glob pattern, relative to path.
            path: Optional folder to search (default: the workspace).
        """
        return await tools.acall("Glob", _given(pattern=pattern, path=path), tools.glob)

    return Glob


def _grep(tools: HostTools) -> Callable[..., Awaitable[str]]:
    async def Grep(pattern: str, path: str | None = None, glob: str | None = None) -> str:
        """Search file contents for a regular expression; returns file:line:text lines.

        Args:
            pattern: The regular expression (Python syntax).
            path: Optional file or folder to search (default: the workspace).
            glob: Optional glob the searched files' names must match, such as "*.md".
        """
        arguments = _given(pattern=pattern, path=path, glob=glob)
        return await tools.acall("Grep", arguments, lambda r: tools.grep(r, glob))

    return Grep


def _webfetch(tools: HostTools) -> Callable[..., Awaitable[str]]:
    async def WebFetch(url: str, prompt: str | None = None) -> str:
        """Fetch a web page (http or https) and return its text.

        Args:
            url: The URL to fetch.
            prompt: Optional note of what you are looking for in the page.
        """
        arguments = _given(url=url, prompt=prompt)
        # The page comes back whole: the model reads it with its prompt in mind.
        return await tools.acall("WebFetch", arguments, tools.webfetch)

    return WebFetch


def _given(**arguments: Any) -> dict[str, Any]:
    """The arguments the model gave (those left out are not recorded)."""
    return {name: value for name, value in arguments.items() if value is not None}
