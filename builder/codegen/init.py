"""``mindrian init``: make a folder a mindrian project, touching only what it adds.

A project is a folder whose ``pyproject.toml`` has a ``[tool.mindrian]`` table
(:mod:`mindrian.project`). ``init`` appends that table as text to an existing
``pyproject.toml`` (or writes a file holding only it), so the rest of the file keeps every byte,
comment and key order; it creates ``skills/`` and ``generated/`` and adds the state folder and
pip's in-place build leftovers to ``.gitignore``. Running it again changes nothing. It never
replaces a file: a ``skills`` or ``generated`` that is not a folder, or a ``pyproject.toml``
the table cannot be appended to, is an error naming the file. A folder inside another project
is refused, naming that project (a nested one would capture every command run below it), unless
asked for (``--nested``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from builder.pipeline.errors import ScaffoldError, SourceLocation
from mindrian.project import DEFAULT_OUT_DIR, STATE_DIR_NAME, find_project_root

__all__ = ["GITIGNORE_LINES", "InitResult", "init_project"]

#: The table appended to pyproject.toml; the defaults need no keys (see builder.pipeline.config).
_TABLE = (
    "[tool.mindrian]\n"
    "# This folder is a mindrian project: skills/**/SKILL.md compile into generated/.\n"
    '# Per-type default models go in [tool.mindrian.models], e.g. operator = "openai:gpt-4o".\n'
)
#: What ``.gitignore`` must hold: the state folder, and what ``pip install generated/<pkg>``
#: leaves in a package folder (setuptools builds in place).
GITIGNORE_LINES = (
    f"/{STATE_DIR_NAME}/",
    f"/{DEFAULT_OUT_DIR}/*/build/",
    f"/{DEFAULT_OUT_DIR}/*/*.egg-info/",
)
_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


@dataclass(frozen=True)
class InitResult:
    """What ``init`` did in one folder."""

    root: Path
    """The project folder."""
    changed: tuple[str, ...]
    """What was created or added to, as ``"created skills/"``-style phrases, in order."""


def init_project(root: Path, *, nested: bool = False) -> InitResult:
    """Make ``root`` a mindrian project; idempotent, never overwrites; refuses a folder inside
    another project unless ``nested``."""
    if not nested:
        _refuse_nested(root)
    for name in ("skills", DEFAULT_OUT_DIR):
        if (root / name).exists() and not (root / name).is_dir():
            raise ScaffoldError(
                f"{name} exists and is not a folder; mindrian keeps its {name} there",
                location=SourceLocation((root / name).as_posix()),
                code="N002",
            )
    changed = [_pyproject(root / "pyproject.toml")]
    for name in ("skills", DEFAULT_OUT_DIR):
        if not (root / name).is_dir():
            (root / name).mkdir(parents=True)
            changed.append(f"created {name}/")
    changed.append(_gitignore(root / ".gitignore"))
    return InitResult(root, tuple(c for c in changed if c))


def _refuse_nested(root: Path) -> None:
    """Raise N004 when ``root`` is not a project but a folder above it is."""
    folder = root.absolute()
    if find_project_root(folder) == folder:
        return
    enclosing = find_project_root(folder.parent)
    if enclosing is not None:
        raise ScaffoldError(
            f"{root.as_posix()} is inside the mindrian project {enclosing.as_posix()}, whose "
            "commands it would capture; run mindrian there, or give --nested to make a project "
            "here anyway",
            location=SourceLocation((enclosing / "pyproject.toml").as_posix()),
            code="N004",
        )


def _pyproject(path: Path) -> str:
    """Add ``[tool.mindrian]``; returns what was done ("" when the table is there already)."""
    if not path.exists():
        path.write_text(_TABLE, encoding="utf-8")
        return "created pyproject.toml with [tool.mindrian]"
    raw = path.read_bytes()
    text = _toml_text(path, raw)
    if "mindrian" in tomllib.loads(text).get("tool", {}):
        return ""
    newline = "\r\n" if "\r\n" in text else "\n"
    separator = "" if not text else (newline if text.endswith("\n") else newline * 2)
    added = text + separator + _TABLE.replace("\n", newline)
    try:
        table = tomllib.loads(added).get("tool", {})
    except tomllib.TOMLDecodeError:
        table = {}
    if "mindrian" not in table:  # e.g. an inline `tool = {…}` that cannot take another table
        raise ScaffoldError(
            "[tool.mindrian] cannot be appended to this file without rewriting it; add the "
            "table by hand",
            location=SourceLocation(path.as_posix()),
            code="N003",
        )
    path.write_bytes(added.encode("utf-8"))
    return "added [tool.mindrian] to pyproject.toml"


def _toml_text(path: Path, raw: bytes) -> str:
    """The file's text, checked to be TOML; a located error when it is not."""
    try:
        text = raw.decode("utf-8")
        tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise ScaffoldError(
            f"not UTF-8: {exc.reason}", location=SourceLocation(path.as_posix()), code="N003"
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_POSITION.search(str(exc))
        line, column = (int(found.group(1)), int(found.group(2))) if found else (0, 0)
        raise ScaffoldError(
            f"not valid TOML: {_TOML_POSITION.sub('', str(exc)).strip()}",
            location=SourceLocation(path.as_posix(), line, column),
            code="N003",
        ) from exc
    return text


def _gitignore(path: Path) -> str:
    """Add the missing ignore lines; returns what was done ("" when none was missing)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in GITIGNORE_LINES if line not in present]
    if not missing:
        return ""
    lead = "" if not text or text.endswith("\n") else "\n"
    block = "# mindrian: state, and pip's in-place builds of generated packages\n"
    path.write_text(text + lead + block + "".join(f"{m}\n" for m in missing), encoding="utf-8")
    return f"{'added to' if text else 'created'} .gitignore ({', '.join(missing)})"
