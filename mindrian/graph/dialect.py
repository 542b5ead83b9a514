"""Every difference between the Neo4j texts in :mod:`mindrian.graph.queries` and what
the embedded engine (LadybugDB, the Kùzu fork) needs, in one place.

Queries not named here run verbatim on both backends.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from mindrian.graph import queries as q

__all__ = [
    "EMBEDDED_REWRITES",
    "EMBEDDED_SCHEMA",
    "EMBEDDED_TABLES",
    "Rewrite",
    "embedded_text",
]


@dataclass(frozen=True)
class Rewrite:
    """One textual substitution applied to a query for the embedded engine."""

    query: str
    """Name of the query in :data:`mindrian.graph.queries.ALL_QUERIES`."""
    old: str
    """Neo4j fragment; must occur exactly once in the query."""
    new: str
    """Embedded replacement."""
    why: str
    """The dialect difference that forces it."""


#: Replaces :data:`mindrian.graph.queries.SCHEMA`. The embedded engine is schema-first:
#: nodes and relationships need declared tables, and a node table's PRIMARY KEY is its
#: uniqueness constraint (there is no CREATE CONSTRAINT). Property types mirror what
#: the queries store.
EMBEDDED_SCHEMA: tuple[str, ...] = (
    "CREATE NODE TABLE IF NOT EXISTS Framework("
    "id STRING, name STRING, type STRING, description STRING, "
    "triggers STRING[], problem_types STRING[], version STRING, source_digest STRING, "
    "registered BOOLEAN, updated_at TIMESTAMP, PRIMARY KEY (id))",
    "CREATE NODE TABLE IF NOT EXISTS ProblemType(name STRING, PRIMARY KEY (name))",
    "CREATE REL TABLE IF NOT EXISTS CHAINS_TO(FROM Framework TO Framework, weight DOUBLE)",
    "CREATE REL TABLE IF NOT EXISTS GOOD_FOR(FROM Framework TO ProblemType, confidence DOUBLE)",
    "CREATE NODE TABLE IF NOT EXISTS Session(id STRING, PRIMARY KEY (id))",
    "CREATE REL TABLE IF NOT EXISTS USED_BY(FROM Framework TO Session, handoff_id STRING, "
    "success BOOLEAN)",
    # Files written before the body was stored gain the column on their next writable open.
    "ALTER TABLE Framework ADD IF NOT EXISTS body STRING DEFAULT ''",
)

#: Tables a registry file must have for every query to bind; older files lack the usage ones.
EMBEDDED_TABLES: tuple[str, ...] = (
    "Framework",
    "ProblemType",
    "CHAINS_TO",
    "GOOD_FOR",
    "Session",
    "USED_BY",
)

EMBEDDED_REWRITES: tuple[Rewrite, ...] = (
    Rewrite(
        query=q.REGISTER_FRAMEWORKS.name,
        old="datetime()",
        new="current_timestamp()",
        why="the embedded engine has no datetime(); current_timestamp() is its clock",
    ),
    Rewrite(
        query=q.REGISTER_FRAMEWORK.name,
        old="datetime()",
        new="current_timestamp()",
        why="the embedded engine has no datetime(); current_timestamp() is its clock",
    ),
    Rewrite(
        query=q.SELECT_FRAMEWORKS.name,
        old="size([t IN f.triggers WHERE t IN triggers])",
        new="size(list_filter(f.triggers, t -> t IN triggers))",
        why="the embedded engine has no list comprehension; list_filter is its equivalent",
    ),
)


@cache
def embedded_text(query: q.Query) -> str:
    """The text the embedded engine runs for ``query``."""
    text = query.text
    for rewrite in EMBEDDED_REWRITES:
        if rewrite.query != query.name:
            continue
        if text.count(rewrite.old) != 1:
            raise ValueError(f"rewrite for {query.name} expects {rewrite.old!r} exactly once")
        text = text.replace(rewrite.old, rewrite.new)
    return text
