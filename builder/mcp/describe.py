"""Custom tools described in a child process: the builder never imports a skill's modules.

A skill's ``custom_tools[].function`` names any importable module, and importing a
module runs its code: it may print (breaking ``--json``), exit, hang, or call the
builder's own command line. So phase 4 asks a child interpreter to import the
functions and describe them: isolated mode (no ``PYTHON*`` variables, no user
site), the builder's own ``sys.path`` (a function resolves as it would in the
builder), output captured, killed after a timeout and with the builder. The child
moves its standard output onto standard error before importing anything the skill
names and answers in JSON on the original standard output, so nothing a module
prints can pass for the answer.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.mcp.tooldefs import UnsupportedSignature, definition_from_function, definition_to_plain
from builder.pipeline.children import run_captured
from builder.skill.spec import ToolDefinition
from mindrian.errors import MindrianError

__all__ = [
    "DESCRIBE_TIMEOUT_SECONDS",
    "DescribeFailed",
    "Described",
    "ToolRequest",
    "child_main",
    "describe_tools",
    "tool_sources_digest",
]

#: How long the child may take to import and describe every custom tool of one skill.
DESCRIBE_TIMEOUT_SECONDS = 60.0

#: The child's whole program: take the builder's ``sys.path``, then describe (``-I`` dropped cwd).
_BOOTSTRAP = (
    "import json, sys\n"
    "request = json.loads(sys.argv[1])\n"
    "sys.path[:] = request['path']\n"
    "from builder.mcp.describe import child_main\n"
    "child_main(request)\n"
)


@dataclass(frozen=True)
class ToolRequest:
    """One custom tool to describe."""

    function: str
    """Dotted path ``package.module.function``."""
    name: str
    """Tool name the model will see."""
    description: str
    """The skill's own description, empty to use the docstring's summary."""


@dataclass(frozen=True)
class Described:
    """What the child found for one custom tool: a definition or the reason there is none."""

    definition: ToolDefinition | None
    """The tool as the model sees it; None when it could not be imported or described."""
    failure: str
    """``import`` (the function cannot be imported) or ``signature`` (it cannot be
    described); empty when ``definition`` is set."""
    reason: str
    """Why, as the exception said it; empty when ``definition`` is set."""


class DescribeFailed(MindrianError):
    """The child as a whole failed (timed out, died, or gave no answer); says how."""


def describe_tools(
    requests: Sequence[ToolRequest],
    *,
    cwd: Path,
    timeout: float = DESCRIBE_TIMEOUT_SECONDS,
) -> tuple[Described, ...]:
    """Describe ``requests`` in one child, in order; raises :class:`DescribeFailed`."""
    if not requests:
        return ()
    request = {
        "path": [os.path.abspath(entry) for entry in sys.path],
        "tools": [
            {"function": r.function, "name": r.name, "description": r.description} for r in requests
        ],
    }
    command = [sys.executable, "-I", "-c", _BOOTSTRAP, json.dumps(request)]
    env = {
        k: os.environ[k] for k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR") if k in os.environ
    }
    try:
        done = run_captured(command, cwd=cwd, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise DescribeFailed(f"importing the tool modules took longer than {timeout:g} s") from exc
    answers = _answers(done.stdout)
    if done.returncode != 0 or answers is None or len(answers) != len(requests):
        raise DescribeFailed(
            f"the process importing the tool modules exited with status {done.returncode} "
            f"without describing them{_tail(done.stderr)}"
        )
    return tuple(_described(answer) for answer in answers)


def _answers(stdout: str) -> list[Mapping[str, Any]] | None:
    try:
        answers = json.loads(stdout)
    except ValueError:
        return None
    if not isinstance(answers, list) or not all(isinstance(a, dict) for a in answers):
        return None
    return answers


def _tail(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    return f": {lines[-1].strip()}" if lines else ""


def _described(answer: Mapping[str, Any]) -> Described:
    plain = answer.get("definition")
    if isinstance(plain, dict):
        definition = ToolDefinition(
            name=str(plain["name"]),
            description=str(plain["description"]),
            parameters=plain["parameters"],
        )
        return Described(definition, "", "")
    return Described(None, str(answer.get("failure", "import")), str(answer.get("reason", "")))


def child_main(request: Mapping[str, Any]) -> None:
    """In the child: describe every tool of ``request`` and write the answers on stdout.

    Whatever the imported modules write, to ``sys.stdout`` or to file descriptor 1,
    goes to standard error; the answer goes to a private copy of the original stdout.
    """
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    sys.argv = [sys.argv[0]]
    answers = [_describe_one(tool) for tool in request["tools"]]
    with os.fdopen(answer_fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(answers))
    # Threads or exit handlers a module left behind must not hold the answer back.
    os._exit(0)


def _describe_one(tool: Mapping[str, str]) -> dict[str, Any]:
    function = tool["function"]
    module_name, _, attribute = function.rpartition(".")
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except BaseException as exc:  # a module's own SystemExit or KeyboardInterrupt is its failure
        return {"failure": "import", "reason": _reason(exc)}
    if not callable(target):
        return {
            "failure": "import",
            "reason": f"TypeError: {function} is a {type(target).__name__}, not a function",
        }
    try:
        definition = definition_from_function(
            target, name=tool["name"], description=tool["description"] or None
        )
        plain = json.loads(json.dumps(definition_to_plain(definition), allow_nan=False))
    except UnsupportedSignature as exc:
        return {"failure": "signature", "reason": str(exc)}
    except Exception as exc:  # any other way a foreign callable defeats inspection
        return {"failure": "signature", "reason": f"{function}: {type(exc).__name__}: {exc}"}
    return {"definition": plain}


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"the module exited during import (SystemExit: {exc.code!r})"
    return f"{type(exc).__name__}: {exc}"


def tool_sources_digest(functions: Sequence[str]) -> str:
    """``sha256:`` over the source files the child would import for ``functions``, found on
    ``sys.path`` as the child searches it, without importing anything.

    Part of phase 4's input digest, so editing a tool's module describes it again. A module not
    found as a file (built in, or absent: phase 4 then reports it) adds only its name.
    """
    digest = hashlib.sha256()
    for function in sorted(set(functions)):
        module = function.rpartition(".")[0] or function
        for path in _module_files(module):
            data = path.read_bytes()
            digest.update(b"%d:%s%d:" % (len(function), function.encode(), len(data)) + data)
        digest.update(b"\x00" + function.encode("utf-8", "replace"))
    return "sha256:" + digest.hexdigest()


def _module_files(module: str) -> tuple[Path, ...]:
    """The files of ``module`` and its parent packages under the first path entry holding it."""
    parts = module.split(".")
    for entry in (os.path.abspath(e) for e in sys.path):
        base, files = Path(entry), []
        for depth, part in enumerate(parts, start=1):
            package, plain = base.joinpath(*parts[:depth]), base.joinpath(*parts[: depth - 1], part)
            if (package / "__init__.py").is_file():
                files.append(package / "__init__.py")
            elif depth == len(parts) and plain.with_suffix(".py").is_file():
                files.append(plain.with_suffix(".py"))
            elif not package.is_dir():  # a namespace package is a folder without __init__.py
                break
        else:
            if files:
                return tuple(files)
    return ()
