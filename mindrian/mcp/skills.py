"""The MCP Skills extension (SEP-2640) over a project's compiled skills.

Each registered agent's skill folder is read once, when the server starts:
its ``SKILL.md`` and every other file become ``skill://<name>/<path>``
resources with the file's exact bytes, and ``skills/list`` / ``skills/get``
answer with the skill's front matter (verbatim, as JSON) and the digest and
size of every file.

A request never reaches the filesystem: ``resources/read`` and ``skills/get``
look the URI up, as given, among the URIs built at start, so ``..``, absolute
paths, percent-encoding and links leading out of a skill cannot name another
file. Links are followed while the files are collected only when their target
stays inside the skill's folder.

A skill's files are read from its package's own copy (``generated/<pkg>/skill/``,
byte-identical to the skill's folder), so a project serves its skills without
the source tree; a package without one (built before the copy) is left out with
a warning line.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import mimetypes
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import mcp_types
import yaml
from mcp.server.context import ServerRequestContext
from mcp.server.extension import Extension, MethodBinding, ResourceBinding
from mcp.server.mcpserver.resources import BinaryResource, TextResource
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field

from mindrian.packages import AgentPackage, PackageError, registered_packages
from mindrian.project import ProjectPaths

__all__ = [
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "PACKAGE_SKILL_DIR",
    "SKILLS_EXTENSION_ID",
    "ServedSkill",
    "SkillCatalog",
    "SkillFile",
    "SkillsExtension",
    "SkillsPage",
    "catalog_of_project",
]

#: The extension's identifier in the server's capabilities.
SKILLS_EXTENSION_ID = "io.modelcontextprotocol/skills"
#: Folder of a package that holds a copy of its skill's files.
PACKAGE_SKILL_DIR = "skill"
#: SEP-2640's limits per skill: a larger skill is not served (no conforming host must load it).
MAX_SKILL_FILES = 512
MAX_SKILL_BYTES = 16 * 1024 * 1024
#: Entries per ``skills/list`` page.
PAGE_SIZE = 100
#: Agent Skills' name rule; the name is the URI's authority, so nothing else may pass.
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_NAME_MAX = 64
_MARKDOWN = "text/markdown"
#: Python's built-in table only: the system's mime.types would make listings machine-dependent.
_MIME = mimetypes.MimeTypes(filenames=())
_SKIPPED_DIRS = frozenset({"__pycache__", ".git"})
_log = logging.getLogger("mindrian.mcp")


@dataclass(frozen=True)
class SkillFile:
    """One file of a served skill, with the bytes read at start."""

    path: str
    """Its path inside the skill folder, ``/``-separated (``references/guide.md``)."""
    uri: str
    """``skill://<name>/<path>``."""
    content: bytes
    """The file's bytes, exactly as on disk."""
    mime_type: str
    """``text/markdown`` for markdown, else by extension (Python's built-in table)."""

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of :attr:`content`, as SEP-2640 writes it."""
        return "sha256:" + hashlib.sha256(self.content).hexdigest()


@dataclass(frozen=True)
class ServedSkill:
    """One skill as the extension serves it."""

    name: str
    """Its front matter's ``name``: the URI's skill path."""
    frontmatter: Mapping[str, Any]
    """The ``SKILL.md`` front matter as JSON data (dates as ISO strings)."""
    files: tuple[SkillFile, ...]
    """Every file, ``SKILL.md`` included, sorted by path."""

    @property
    def uri(self) -> str:
        """The URI of its ``SKILL.md``, which names the skill."""
        return f"skill://{self.name}/SKILL.md"

    def entry(self) -> dict[str, Any]:
        """Its SEP-2640 ``Skill`` entry."""
        return {
            "uri": self.uri,
            "frontmatter": dict(self.frontmatter),
            "resources": [
                {"uri": f.uri, "digest": f.digest, "size": len(f.content)} for f in self.files
            ],
        }


@dataclass(frozen=True)
class SkillCatalog:
    """The skills a server serves, sorted by URI."""

    skills: tuple[ServedSkill, ...]
    """One per skill, unique URIs."""

    def get(self, uri: str) -> ServedSkill | None:
        """The skill whose ``SKILL.md`` has exactly this URI."""
        return next((s for s in self.skills if s.uri == uri), None)

    def page(self, cursor: str | None) -> SkillsPage:
        """The entries from ``cursor`` on (a page of :data:`PAGE_SIZE`), and the next cursor.

        Raises :class:`ValueError` for a cursor this catalog did not hand out.
        """
        start = 0 if cursor is None else _cursor_index(cursor, len(self.skills))
        end = start + PAGE_SIZE
        after = str(end) if end < len(self.skills) else None
        return SkillsPage(self.skills[start:end], after)


@dataclass(frozen=True)
class SkillsPage:
    """One page of ``skills/list``."""

    skills: tuple[ServedSkill, ...]
    """The page's skills, in catalog order."""
    next_cursor: str | None
    """The cursor of the next page; None on the last one."""


def _cursor_index(cursor: str, count: int) -> int:
    if not cursor.isdecimal() or len(cursor) > 9 or not 0 < int(cursor) < count:
        raise ValueError(f"invalid cursor {cursor[:40]!r}")
    return int(cursor)


def catalog_of_project(project: ProjectPaths) -> SkillCatalog:
    """The skills of the project's registered agents (each skipped one logged once)."""
    found: dict[str, list[ServedSkill]] = {}
    try:
        packages = registered_packages(project)
    except PackageError as error:
        _log.warning("skills: none served: %s", error)
        return SkillCatalog(())
    for package in packages:
        skill = _served(package)
        if skill is not None:
            found.setdefault(skill.uri, []).append(skill)
    for uri, same in sorted(found.items()):
        if len(same) > 1:
            _log.warning("skills: %d packages serve %s; none of them is served", len(same), uri)
    return SkillCatalog(tuple(same[0] for _, same in sorted(found.items()) if len(same) == 1))


def _served(package: AgentPackage) -> ServedSkill | None:
    folder = _skill_folder(package)
    if folder is None:
        _log.warning(
            "skills: %s not served: its package has no skill/ (rebuild it)", package.agent_id
        )
        return None
    if not (folder / "SKILL.md").is_file():
        return None  # a chain, plugin or subagent skill: no SKILL.md folder to serve
    try:
        frontmatter = _frontmatter((folder / "SKILL.md").read_bytes())
        name = frontmatter.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > _NAME_MAX:
            raise ValueError(f"name {name!r} is not an Agent Skills name")
        if not isinstance(frontmatter.get("description"), str):
            raise ValueError("no description")
        files = tuple(_files(folder, name))
    except (OSError, ValueError, yaml.YAMLError) as error:
        _log.warning("skills: %s not served: %s", package.agent_id, str(error).splitlines()[0])
        return None
    return ServedSkill(name, frontmatter, files)


def _skill_folder(package: AgentPackage) -> Path | None:
    copy = package.folder / PACKAGE_SKILL_DIR
    return copy if copy.is_dir() else None


def _frontmatter(data: bytes) -> dict[str, Any]:
    text = data.decode("utf-8")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("SKILL.md has no front matter")
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        raise ValueError("SKILL.md's front matter is not closed")
    loaded = yaml.safe_load("\n".join(lines[1:end]))
    if not isinstance(loaded, dict):
        raise ValueError("SKILL.md's front matter is not a mapping")
    plain = _json(loaded)
    assert isinstance(plain, dict)
    return plain


def _json(value: Any) -> Any:
    """YAML data as JSON data: keys as strings, dates and times as ISO strings."""
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    if isinstance(value, float) and value != value:  # NaN has no JSON form
        return str(value)
    return value


def _files(folder: Path, name: str) -> Iterator[SkillFile]:
    """Every regular file under ``folder`` (links only when they stay inside), sorted by path."""
    root = folder.resolve()
    paths: list[tuple[str, Path]] = []
    for current, dirs, files in os.walk(folder, followlinks=False):
        here = Path(current)
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and _inside(here / d, root))
        for file in files:
            path = here / file
            if _inside(path, root) and path.resolve().is_file():
                paths.append((path.relative_to(folder).as_posix(), path))
    paths.sort()
    if len(paths) > MAX_SKILL_FILES:
        raise ValueError(f"{len(paths)} files, over the {MAX_SKILL_FILES} a skill may have")
    total = 0
    for relative, path in paths:
        content = path.read_bytes()
        total += len(content)
        if total > MAX_SKILL_BYTES:
            raise ValueError(f"over {MAX_SKILL_BYTES} bytes of files")
        yield SkillFile(relative, f"skill://{name}/{relative}", content, _mime(relative))


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path``, links resolved, is ``root`` or under it."""
    return path.resolve().is_relative_to(root)


def _mime(path: str) -> str:
    if path.lower().endswith((".md", ".markdown")):
        return _MARKDOWN
    guessed, _ = _MIME.guess_type(path, strict=True)
    return guessed or "application/octet-stream"


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SkillResourceEntry(_Wire):
    """A file of a skill entry (SEP-2640 ``SkillResource``)."""

    uri: str
    digest: str
    size: int


class SkillEntry(_Wire):
    """SEP-2640 ``Skill``: front matter verbatim, the complete file manifest."""

    uri: str
    frontmatter: dict[str, Any]
    resources: list[SkillResourceEntry]


class ListSkillsParams(mcp_types.PaginatedRequestParams):
    """``skills/list`` parameters: an optional cursor."""


class GetSkillParams(mcp_types.RequestParams):
    """``skills/get`` parameters: the URI of a skill's ``SKILL.md``."""

    uri: str = Field(max_length=2048)


class ListSkillsResult(mcp_types.PaginatedResult, mcp_types.CacheableResult):
    """``skills/list`` result."""

    skills: list[SkillEntry]
    result_type: Literal["complete"] = "complete"


class GetSkillResult(mcp_types.CacheableResult):
    """``skills/get`` result."""

    skill: SkillEntry
    result_type: Literal["complete"] = "complete"


class SkillsExtension(Extension):
    """``io.modelcontextprotocol/skills``: the catalog's files as resources, and its two methods.

    Answers at every protocol revision: a client on an older one that sends the
    methods gets the same answers, and reads the resources in any case.
    """

    identifier = SKILLS_EXTENSION_ID

    def __init__(self, catalog: SkillCatalog) -> None:
        self._catalog = catalog

    def resources(self) -> Sequence[ResourceBinding]:
        """Every file of every skill, with its exact bytes."""
        return tuple(
            ResourceBinding(_resource(s, f)) for s in self._catalog.skills for f in s.files
        )

    def methods(self) -> Sequence[MethodBinding]:
        """``skills/list`` and ``skills/get``."""
        return (
            MethodBinding("skills/list", ListSkillsParams, self._list),
            MethodBinding("skills/get", GetSkillParams, self._get),
        )

    async def _list(
        self, ctx: ServerRequestContext[Any, Any], params: ListSkillsParams | None
    ) -> ListSkillsResult:
        try:
            page = self._catalog.page(params.cursor if params is not None else None)
        except ValueError as error:
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=str(error)) from None
        return ListSkillsResult(
            skills=[SkillEntry.model_validate(s.entry()) for s in page.skills],
            next_cursor=page.next_cursor,
        )

    async def _get(
        self, ctx: ServerRequestContext[Any, Any], params: GetSkillParams
    ) -> GetSkillResult:
        skill = self._catalog.get(params.uri)
        if skill is None:
            raise MCPError(
                code=mcp_types.INVALID_PARAMS, message=f"no skill is served at {params.uri[:200]!r}"
            )
        return GetSkillResult(skill=SkillEntry.model_validate(skill.entry()))


def _resource(skill: ServedSkill, file: SkillFile) -> TextResource | BinaryResource:
    """Text when the bytes are UTF-8 (they come back identical), else a base64 blob."""
    named = file.path == "SKILL.md"
    common: dict[str, Any] = {
        "uri": file.uri,
        "name": skill.name if named else f"{skill.name}/{file.path}",
        "description": skill.frontmatter["description"] if named else None,
        "mime_type": file.mime_type,
    }
    try:
        return TextResource(text=file.content.decode("utf-8"), **common)
    except UnicodeDecodeError:
        return BinaryResource(data=file.content, **common)
