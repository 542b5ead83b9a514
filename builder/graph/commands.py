"""What ``mindrian select`` and ``mindrian graph export`` do, behind the thin CLI wrappers.

Which registry a command reads: ``--registry PATH`` (an embedded database, or a
registry.yaml loaded into memory), else Neo4j at ``--neo4j-uri`` or ``NEO4J_URI``
(password only from ``NEO4J_PASSWORD``), else the project's embedded database
``ProjectPaths.embedded_registry``, built from ``generated/registry.yaml`` when it does not
exist yet. Every read opens the database read-only.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from builder.graph.select_output import select_json, select_table
from builder.pipeline.errors import CompilerError, SourceLocation, UsageError
from mindrian.graph import (
    EmbeddedRegistry,
    Registry,
    RegistryYamlError,
    open_registry,
    redact_uri,
    registry_from_yaml,
)
from mindrian.project import ProjectPaths
from mindrian.routing.semantic import configured_encoder

__all__ = [
    "OpenedRegistry",
    "build_registry_from_yaml",
    "open_project_registry",
    "rebuild_registry",
    "restore_registry_once",
    "select_json",
    "select_table",
    "shown_path",
    "uri_credentials_problem",
]

_YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class OpenedRegistry:
    """A registry ready to query, what it is, and anything worth telling the user."""

    registry: Registry
    """The open registry; the caller closes it."""
    where: str
    """The database as shown to the user (path, or URI without password)."""
    note: str = ""
    """A line for stderr (e.g. that the database was just built from registry.yaml)."""


def open_project_registry(
    root: Path,
    path: Path | None = None,
    neo4j_uri: str | None = None,
    env: Mapping[str, str] | None = None,
    display: Callable[[Path], str] = str,
) -> OpenedRegistry:
    """The registry a command should read (see the module docstring for the order)."""
    environ = os.environ if env is None else env
    if path is not None and neo4j_uri:
        raise UsageError("give --registry or --neo4j-uri, not both", code="U008")
    uri = neo4j_uri or environ.get("NEO4J_URI") or None
    if path is not None:
        opened = _explicit(path, display)
    elif uri:
        opened = _neo4j(uri, environ)
    else:
        opened = _project_default(root, display)
    opened.registry.use_encoder(configured_encoder(environ))
    return opened


def _explicit(path: Path, display: Callable[[Path], str]) -> OpenedRegistry:
    if not path.exists():
        raise CompilerError(f"no registry at {display(path)}", code="G011")
    if path.suffix in _YAML_SUFFIXES:
        return OpenedRegistry(registry_from_yaml(path), f"{display(path)} (loaded into memory)")
    return OpenedRegistry(_read_only(path), display(path))


def _neo4j(uri: str, environ: Mapping[str, str]) -> OpenedRegistry:
    problem = uri_credentials_problem(uri)
    if problem:
        raise UsageError(problem, code="U009")
    # The URI is set, so no embedded registry is opened: there is no path to give.
    return OpenedRegistry(open_registry(uri, None, env=environ, read_only=True), redact_uri(uri))


def uri_credentials_problem(uri: str) -> str | None:
    """Why a Neo4j URI may not be used (unparsable, or credentials in it), else None.

    Credentials belong in NEO4J_USERNAME/NEO4J_PASSWORD: a URI is echoed by
    drivers in their error messages, so one carrying them would leak them.
    """
    try:
        parts = urlsplit(uri)
        credentials = parts.username is not None or parts.password is not None
    except ValueError:
        return "the Neo4j URI cannot be parsed"
    if credentials:
        return (
            f"the Neo4j URI {redact_uri(uri)} carries credentials; "
            "set NEO4J_USERNAME and NEO4J_PASSWORD instead"
        )
    return None


def _project_default(root: Path, display: Callable[[Path], str]) -> OpenedRegistry:
    paths = ProjectPaths(root)
    database, exported = paths.embedded_registry, paths.registry_yaml
    if database.exists():
        return OpenedRegistry(_read_only(database), display(database))
    if not exported.is_file():
        raise CompilerError(
            f"no registry: neither {display(database)} nor {display(exported)} exists; "
            "build and register skills first, or pass --registry PATH",
            code="G011",
        )
    count = build_registry_from_yaml(exported, database, display)
    note = f"built {display(database)} from {display(exported)} ({count} framework(s))"
    return OpenedRegistry(_read_only(database), display(database), note)


def _read_only(database: Path) -> EmbeddedRegistry:
    """Readers never take the writer's lock, so they neither block nor wait for a build."""
    return EmbeddedRegistry(database, read_only=True)


def build_registry_from_yaml(
    exported: Path, database: Path, display: Callable[[Path], str] | None = None
) -> int:
    """Build the embedded database ``database`` from a registry.yaml; the number of frameworks in
    it.

    The database is built in a scratch folder beside it and moved into place
    whole, so no reader ever sees a half-built one; the old database's
    write-ahead log goes with it (replayed onto the new file it would damage
    it). An unreadable registry.yaml raises :class:`CompilerError` ``G014``, placed in it and
    naming it by ``display`` (default :func:`shown_path`).
    """
    database.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=database.parent, prefix=".registry-build-"))
    try:
        with _reading(exported, display):
            built = registry_from_yaml(exported, scratch / database.name)
        try:
            count = built.counts().frameworks
            built.checkpoint()  # the scratch folder's log is deleted with it
        finally:
            built.close()
        Path(f"{database}.wal").unlink(missing_ok=True)
        os.replace(scratch / database.name, database)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return count


@contextlib.contextmanager
def _reading(exported: Path, display: Callable[[Path], str] | None) -> Iterator[None]:
    """registry.yaml that cannot be read becomes :class:`CompilerError` ``G014``, placed in it."""
    try:
        yield
    except RegistryYamlError as exc:
        raise CompilerError(
            f"cannot be read as a registry: {exc.message}; restore it from version control",
            location=SourceLocation((display or shown_path)(exported), exc.line, exc.column),
            code="G014",
        ) from None
    except (OSError, ValueError) as exc:
        raise CompilerError(
            f"{exported.as_posix()} cannot be read as a registry: {_one_line(exc)}",
            code="G014",
        ) from None


def restore_registry_once(
    exported: Path, database: Path, display: Callable[[Path], str] | None = None
) -> None:
    """Build ``database`` from registry.yaml unless it exists, one process at a time.

    Two builds that both found the database missing each built one and moved it into place,
    deleting the write-ahead log of the one the other had already opened: the next open failed
    with "Database ID for temporary file … does not match". Under the folder's lock the second
    build finds the first one's database and opens it (waiting on the engine's writer lock).
    """
    database.parent.mkdir(parents=True, exist_ok=True)
    with _folder_lock(database.parent):
        if not database.exists():
            build_registry_from_yaml(exported, database, display)


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    handle = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing the descriptor releases the lock


def rebuild_registry(
    paths: ProjectPaths, display: Callable[[Path], str] = str, env: Mapping[str, str] | None = None
) -> str:
    """``mindrian graph rebuild``: make the registry hold exactly what registry.yaml lists.

    The embedded database is replaced (the fix for a damaged one, :class:`RegistryDamaged`);
    with ``NEO4J_URI`` set, the Neo4j database is brought to it under the writer lock: the
    frameworks registry.yaml lacks unregistered, every listed one registered again. Returns the
    line to print.
    """
    environ = os.environ if env is None else env
    if not paths.registry_yaml.is_file():
        raise CompilerError(
            f"cannot rebuild the registry: {display(paths.registry_yaml)} does not exist",
            code="G011",
        )
    uri = environ.get("NEO4J_URI") or None
    if uri:
        count = _rebuild_neo4j(uri, paths.registry_yaml, environ, display)
        where = redact_uri(uri)
    else:
        count = build_registry_from_yaml(paths.registry_yaml, paths.embedded_registry, display)
        where = display(paths.embedded_registry)
    return f"rebuilt {where} from {display(paths.registry_yaml)} ({count} framework(s))"


def _rebuild_neo4j(
    uri: str, exported: Path, environ: Mapping[str, str], display: Callable[[Path], str]
) -> int:
    problem = uri_credentials_problem(uri)
    if problem:
        raise UsageError(problem, code="U009")
    with _reading(exported, display), registry_from_yaml(exported) as listed:
        records = listed.export()  # read and checked before Neo4j is touched
    with open_registry(uri, None, env=environ, exclusive=True) as registry:
        keep = {r.id for r in records}
        for gone in sorted({r.id for r in registry.export()} - keep):
            registry.unregister(gone)
        registry.register_many(records)
        return registry.counts().frameworks


def shown_path(path: Path) -> str:
    """``path`` as a message names a file: relative to the working folder when inside it."""
    try:
        return path.absolute().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())
