"""Reading a project's configuration: ``[tool.mindrian]`` and ``mcp.yaml``.

The build's settings (``models``, ``mcp``) become a :class:`BuildConfig`; the server's
(``[tool.mindrian.serve]``, which no phase reads) are checked here with the rest of the table
and read by :mod:`builder.orchestration.serve_settings`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builder.mcp.project_file import read_mcp_yaml
from builder.pipeline.config import DEFAULT_MODELS, BuildConfig
from builder.pipeline.errors import SourceLocation, UsageError
from builder.pipeline.patterns import on_first_use
from mindrian.project_root import parsed_toml

__all__ = ["SERVE_KEYS", "load_config", "mindrian_table"]

#: The keys ``[tool.mindrian]`` may hold; anything else is a typo the build would ignore.
_KEYS = ("mcp", "models", "serve")
#: The keys ``[tool.mindrian.serve]`` may hold, each a boolean.
SERVE_KEYS = ("host-tools",)
#: The place tomllib (Python 3.11) names at the end of a syntax error's message.
_TOML_PLACE = on_first_use(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)$")
#: The code of every refusal below (builder.pipeline.codes).
_CODE = "U042"


def load_config(root: Path) -> BuildConfig:
    """Read ``[tool.mindrian]`` from ``root/pyproject.toml`` when present, else the built-in
    defaults; raises :class:`UsageError` (U042) for a file or table the build cannot use."""
    pyproject = root / "pyproject.toml"
    table = mindrian_table(pyproject) if pyproject.is_file() else {}
    models = {**DEFAULT_MODELS, **table.get("models", {})}
    # mcp.yaml beside pyproject.toml and [tool.mindrian.mcp] both extend the catalog; the
    # pyproject entry wins on a name clash because it is the file the build is configured by.
    catalog = {**read_mcp_yaml(root), **table.get("mcp", {})}
    return BuildConfig(root=str(root), models=models, mcp_catalog=catalog)


def mindrian_table(pyproject: Path) -> Mapping[str, Any]:
    """``[tool.mindrian]`` checked for shape: known keys, tables where tables belong, model
    strings under known agent types. The values themselves are the phases' to judge."""
    try:
        text = pyproject.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise _refusal(f"not UTF-8: {error.reason} at byte offset {error.start}") from None
    try:
        data = parsed_toml(text)
    except tomllib.TOMLDecodeError as error:
        raise _syntax_refusal(str(error), text) from None
    tool = _table(data.get("tool", {}), "[tool]")
    table = _table(tool.get("mindrian", {}), "[tool.mindrian]")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise _refusal(
            f"unknown key {unknown[0]!r} in [tool.mindrian] (it holds only {', '.join(_KEYS)})"
        )
    models = _table(table.get("models", {}), "[tool.mindrian.models]")
    for agent_type, model in models.items():
        if agent_type not in DEFAULT_MODELS:
            raise _refusal(
                f"unknown agent type {agent_type!r} in [tool.mindrian.models] "
                f"(the types are {', '.join(DEFAULT_MODELS)})"
            )
        if not isinstance(model, str):
            raise _refusal(
                f"[tool.mindrian.models] {agent_type} is {_kind(model)}; "
                'write it as a string "provider:model_id"'
            )
    _table(table.get("mcp", {}), "[tool.mindrian.mcp]")
    _check_serve(_table(table.get("serve", {}), "[tool.mindrian.serve]"))
    return table


def _check_serve(serve: Mapping[str, Any]) -> None:
    unknown = sorted(set(serve) - set(SERVE_KEYS))
    if unknown:
        raise _refusal(
            f"unknown key {unknown[0]!r} in [tool.mindrian.serve] "
            f"(it holds only {', '.join(SERVE_KEYS)})"
        )
    for key, value in serve.items():
        if not isinstance(value, bool):
            raise _refusal(
                f"[tool.mindrian.serve] {key} is {_kind(value)}; write it as true or false"
            )


def _syntax_refusal(message: str, text: str) -> UsageError:
    place = _TOML_PLACE().search(message)
    what = f"not TOML: {_TOML_PLACE().sub('', message)}"
    if place is None:
        return _refusal(what)
    if place[1] is None:  # the end of the document: after its last character
        last = text.split("\n")
        return _refusal(what, len(last), len(last[-1]) + 1)
    return _refusal(what, int(place[1]), int(place[2]))


def _table(value: object, name: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _refusal(f"{name} is {_kind(value)}; it must be a table")
    return value


def _kind(value: object) -> str:
    kinds = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    return kinds.get(type(value), "an array" if isinstance(value, list) else "a date or time")


def _refusal(message: str, line: int = 0, column: int = 0) -> UsageError:
    where = SourceLocation("pyproject.toml", line, column)
    return UsageError(
        f"the project configuration cannot be used: {message}", location=where, code=_CODE
    )
