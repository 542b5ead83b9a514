"""Lint Cypher texts with Neo4j's own front end, run by Node (`lint.mjs` next to this file).

Install the linter once with ``npm ci --prefix builder/cypher_lint``. Without Node or
the package, :func:`available` is false and :func:`lint` raises
:class:`LinterUnavailable` saying which of the two is missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Diagnostic",
    "LintSchema",
    "LinterError",
    "LinterUnavailable",
    "PACKAGE",
    "available",
    "lint",
    "unavailable_reason",
]

#: The npm package (and exact version, pinned in package.json) doing the analysis.
PACKAGE = "@neo4j-cypher/language-support@2.0.0-next.38"

_HERE = Path(__file__).resolve().parent
_SCRIPT = _HERE / "lint.mjs"
_PACKAGE_JSON = (
    _HERE / "node_modules" / "@neo4j-cypher" / "language-support" / "package.json"
)
_TIMEOUT_SECONDS = 120


class LinterUnavailable(RuntimeError):
    """Node or the npm package is missing, so nothing was linted."""


class LinterError(RuntimeError):
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


def unavailable_reason() -> str | None:
    """Why the linter cannot run, or None when it can."""
    if shutil.which("node") is None:
        return "node is not on PATH (install Node.js to lint Cypher)"
    if not _PACKAGE_JSON.is_file():
        return f"{PACKAGE} is not installed (run: npm ci --prefix builder/cypher_lint)"
    return None


def available() -> bool:
    """True when Node and the linter package are both installed."""
    return unavailable_reason() is None


def lint(
    queries: Mapping[str, str],
    params: Mapping[str, Iterable[str]] | None = None,
    schema: LintSchema | None = None,
) -> dict[str, tuple[Diagnostic, ...]]:
    """Lint every query in one Node run; diagnostics per query name, in input order.

    ``params`` maps a query name to the parameter names it may use; any other
    ``$name`` in that query is reported as undefined.
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
    raw = _run_node(json.dumps(batch))
    return {name: tuple(Diagnostic(**d) for d in raw.get(name, ())) for name in queries}


def _run_node(payload: str) -> dict[str, list[dict[str, object]]]:
    node = shutil.which("node")
    assert node is not None  # checked by unavailable_reason
    completed = subprocess.run(
        [node, str(_SCRIPT)],
        input=payload,
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=_HERE,
        timeout=_TIMEOUT_SECONDS,
        check=False,
    )
    if completed.returncode != 0:
        raise LinterError(
            f"lint.mjs exited with {completed.returncode}: {completed.stderr.strip()}"
        )
    try:
        return json.loads(completed.stdout)
    except json.JSONDecodeError as exc:
        raise LinterError(
            f"lint.mjs printed something that is not JSON: {exc}"
        ) from exc
