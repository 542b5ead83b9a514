"""Lint Cypher texts with Neo4j's own front end, run by Node (`lint.mjs` next to this file).

The npm package lives next to this file in the checkout (``make setup`` runs ``npm ci --prefix
builder/graph/cypher_lint``). An installed mindrian ships ``lint.mjs`` and the lock file only:
on first use, when ``npm`` is on PATH, it copies them into the user's cache
(``<cache>/cypher-lint-node/<version>``) and runs ``npm ci`` there once, saying so on stderr.
Without Node or the package, :func:`available` is false and :func:`lint` raises
:class:`LinterUnavailable` saying which is missing; phase 5 then falls back to its other checks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.pipeline.cache import cache_dir, cache_path, read_json, write_json
from mindrian.errors import MindrianError

__all__ = [
    "PACKAGE",
    "Diagnostic",
    "LintSchema",
    "LinterError",
    "LinterUnavailable",
    "available",
    "default_cache_dir",
    "lint",
    "unavailable_reason",
]

#: The npm package (and exact version, pinned in package.json) doing the analysis.
PACKAGE = "@neo4j-cypher/language-support@2.0.0-next.38"

_HERE = Path(__file__).resolve().parent
#: What a linter folder needs besides ``node_modules``: the script and what ``npm ci`` reads.
_SHIPPED = ("lint.mjs", "package.json", "package-lock.json")
_INSTALLED = Path("node_modules") / "@neo4j-cypher" / "language-support" / "package.json"
#: A bound on a hung Node, not a speed limit: one run takes about 1.5 s of CPU, and on a machine
#: loaded twentyfold two runs at once took more than 120 s of wall time.
_TIMEOUT_SECONDS = 600
#: ``npm ci`` fetches five packages; a slow registry still answers well within this.
_INSTALL_TIMEOUT_SECONDS = 600


class LinterUnavailable(MindrianError, RuntimeError):
    """Node or the npm package is missing, so nothing was linted."""


class LinterError(MindrianError, RuntimeError):
    """The linter ran but failed (crash or unreadable output)."""


@dataclass(frozen=True)
class Diagnostic:
    """One finding of the Neo4j front end."""

    severity: str
    """'error', 'warning', 'information' or 'hint'."""
    message: str
    """The front end's message, verbatim."""
    line: int
    """1-based line of the start of the offending text."""
    column: int
    """1-based column of the start of the offending text."""


@dataclass(frozen=True)
class LintSchema:
    """The graph vocabulary to declare, so a misspelt label or property is a warning."""

    labels: tuple[str, ...] = ()
    """Node labels that exist."""
    relationship_types: tuple[str, ...] = ()
    """Relationship types that exist."""
    property_keys: tuple[str, ...] = ()
    """Property keys that exist."""

    def to_json(self) -> dict[str, list[str]]:
        """The shape lint.mjs passes on as part of the linter's DbSchema."""
        return {
            "labels": list(self.labels),
            "relationshipTypes": list(self.relationship_types),
            "propertyKeys": list(self.property_keys),
        }


def _user_home() -> Path | None:
    """The linter folder in the user's cache (None when caching is off), named by the version."""
    folder = cache_dir("cypher-lint-node")
    return None if folder is None else folder / PACKAGE.rpartition("@")[2]


def _home() -> Path | None:
    """The folder holding ``lint.mjs`` with the npm package installed beside it, if any."""
    for folder in (_HERE, _user_home()):
        if folder is not None and (folder / _INSTALLED).is_file():
            return folder
    return None


def _install(home: Path) -> str | None:
    """``npm ci`` the shipped lock file into ``home``; None on success, else why not.

    The install happens in a sibling scratch folder renamed into place at the end, so parallel
    builds never see half a package and the first finished install wins.
    """
    npm = shutil.which("npm")
    if npm is None:
        return f"{PACKAGE} is not installed and npm is not on PATH to install it"
    print(
        f"mindrian: installing Neo4j's Cypher linter ({PACKAGE}) into {home} (once)",
        file=sys.stderr,
    )
    home.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".install-", dir=home.parent))
    try:
        for name in _SHIPPED:
            shutil.copyfile(_HERE / name, scratch / name)
        done = subprocess.run(
            [npm, "ci", "--prefix", str(scratch), "--no-audit", "--no-fund", "--loglevel=error"],
            capture_output=True,
            text=True,
            timeout=_INSTALL_TIMEOUT_SECONDS,
            check=False,
        )
        if done.returncode != 0:
            return f"npm ci of {PACKAGE} failed: {done.stderr.strip()[-500:]}"
        try:
            os.rename(scratch, home)
        except OSError:
            pass  # another process installed it first; its copy is the same lock file's
        return None
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"installing {PACKAGE} failed: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def unavailable_reason() -> str | None:
    """Why the linter cannot run, or None when it can (installing it on first use)."""
    if shutil.which("node") is None:
        return "node is not on PATH (install Node.js to lint Cypher)"
    if _home() is not None:
        return None
    home = _user_home()
    if home is None:
        return f"{PACKAGE} is not installed and MINDRIAN_CACHE_DIR is empty (no cache to put it in)"
    return _install(home)


def available() -> bool:
    """True when Node and the linter package are both installed."""
    return unavailable_reason() is None


def default_cache_dir() -> Path | None:
    """Where lint results are kept (see :mod:`builder.pipeline.cache`)."""
    return cache_dir("cypher-lint")


def lint(
    queries: Mapping[str, str],
    params: Mapping[str, Iterable[str]] | None = None,
    schema: LintSchema | None = None,
    *,
    cache_dir: Path | bool | None = True,
) -> dict[str, tuple[Diagnostic, ...]]:
    """Lint every query in one Node run; diagnostics per query name, in input order.

    ``params`` maps a query name to the parameter names it may use; any other
    ``$name`` in that query is reported as undefined. Results are cached under
    ``cache_dir`` (``True``: :func:`default_cache_dir`; ``None``/``False``: no
    cache), keyed on the whole request, the linter script and the installed
    package, because starting Node and loading the front end costs about a
    second while the query texts rarely change.
    """
    reason = unavailable_reason()
    if reason is not None:
        raise LinterUnavailable(reason)
    declared = params or {}
    batch = [
        {
            "name": name,
            "query": text,
            "params": sorted(declared.get(name, ())),
            **({"schema": schema.to_json()} if schema is not None else {}),
        }
        for name, text in queries.items()
    ]
    payload = json.dumps(batch, sort_keys=True)
    folder = default_cache_dir() if cache_dir is True else (cache_dir or None)
    cached = _cache_path(folder, payload)
    raw: _RawDiagnostics | None = read_json(cached)
    if raw is None:
        raw = _run_node(payload)
        write_json(cached, dict(raw))
    return {name: tuple(Diagnostic(**d) for d in raw.get(name, ())) for name in queries}


def _cache_path(folder: Path | None, payload: str) -> Path | None:
    home = _home()
    assert home is not None  # checked by unavailable_reason
    return cache_path(
        folder,
        PACKAGE.encode(),
        (home / "lint.mjs").read_bytes(),
        (home / _INSTALLED).read_bytes(),
        payload.encode("utf-8"),
    )


#: The linter's answer as JSON: query name -> the keyword arguments of each :class:`Diagnostic`.
_RawDiagnostics = dict[str, list[dict[str, Any]]]


def _run_node(payload: str) -> _RawDiagnostics:
    node, home = shutil.which("node"), _home()
    assert node is not None and home is not None  # checked by unavailable_reason
    try:
        completed = subprocess.run(
            [node, str(home / "lint.mjs")],
            input=payload,
            capture_output=True,
            text=True,
            encoding="utf-8",
            cwd=home,
            timeout=_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise LinterError(f"lint.mjs did not answer within {_TIMEOUT_SECONDS:g} s") from None
    if completed.returncode != 0:
        raise LinterError(
            f"lint.mjs exited with {completed.returncode}: {completed.stderr.strip()}"
        )
    try:
        raw: _RawDiagnostics = json.loads(completed.stdout)
    except json.JSONDecodeError as exc:
        raise LinterError(f"lint.mjs printed something that is not JSON: {exc}") from exc
    return raw
