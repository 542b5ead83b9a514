"""The fixed Cypher texts of the framework registry (Neo4j dialect).

Every value reaches the database as a ``$parameter``; no skill text is ever part of a
query. The embedded backend runs these same texts except where
:mod:`mindrian.graph.dialect` names a difference. One framework is registered as a
batch of one, so the per-framework and the bulk paths share every statement.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ALL_QUERIES",
    "CALLER_QUERY",
    "CONSTRAINT_FRAMEWORK_ID",
    "CONSTRAINT_PROBLEM_TYPE_NAME",
    "CONSTRAINT_SESSION_ID",
    "COUNT_CHAINS",
    "COUNT_FRAMEWORKS",
    "COUNT_GOOD_FOR",
    "COUNT_PROBLEM_TYPES",
    "DELETE_CHAINS",
    "DELETE_GOOD_FOR",
    "DELETE_USAGE",
    "DEMOTE_FRAMEWORK",
    "EXPORT_CHAINS",
    "EXPORT_FRAMEWORKS",
    "EXPORT_GOOD_FOR",
    "GET_CHAINS",
    "GET_FRAMEWORK",
    "GET_GOOD_FOR",
    "GET_ROUTING_BODY",
    "LABELS",
    "MERGE_CHAIN",
    "MERGE_CHAINS",
    "MERGE_GOOD_FOR",
    "MERGE_ONE_GOOD_FOR",
    "OUTGOING_CHAINS",
    "OUTGOING_GOOD_FOR",
    "PROPERTY_KEYS",
    "PRUNE_PLACEHOLDERS",
    "RECORD_USAGE",
    "REGISTER_FRAMEWORK",
    "REGISTER_FRAMEWORKS",
    "RELATIONSHIP_TYPES",
    "ROUTING_DOCUMENTS",
    "ROUTING_REVISION",
    "ROUTING_TRIGGERS",
    "ROUTING_USAGE",
    "ROUTING_USAGE_REVISION",
    "ROW_KEYS",
    "SCHEMA",
    "SEED_SELECT_QUERY",
    "SELECT_FRAMEWORKS",
    "SELECT_QUERY",
    "SET_ROUTING_BODIES",
    "USAGE",
    "Query",
]


@dataclass(frozen=True)
class Query:
    """A named Cypher text and the parameters it takes."""

    name: str
    """Stable identifier, also the key for dialect overrides."""
    text: str
    """The Cypher text (Neo4j dialect)."""
    params: tuple[str, ...] = ()
    """Every ``$name`` the text uses; callers must pass exactly these."""


#: Node labels of the registry graph (declared to the linter, so a misspelling is reported).
LABELS = ("Framework", "ProblemType", "Session")
#: Relationship types of the registry graph.
RELATIONSHIP_TYPES = ("CHAINS_TO", "GOOD_FOR", "USED_BY")
#: Property keys of nodes and relationships.
PROPERTY_KEYS = (
    "id",
    "name",
    "type",
    "description",
    "triggers",
    "problem_types",
    "version",
    "source_digest",
    "body",
    "registered",
    "updated_at",
    "weight",
    "confidence",
    "handoff_id",
    "success",
)
#: Name of the Query wrapping a caller's text (Registry.read_cypher); never a dialect target.
CALLER_QUERY = "caller_read"

#: Keys of the UNWIND row maps; the linter cannot tell them from stored properties.
ROW_KEYS = ("source", "target", "problem_type")

CONSTRAINT_FRAMEWORK_ID = Query(
    "constraint_framework_id",
    "CREATE CONSTRAINT framework_id IF NOT EXISTS\nFOR (f:Framework) REQUIRE f.id IS UNIQUE",
)

CONSTRAINT_PROBLEM_TYPE_NAME = Query(
    "constraint_problem_type_name",
    "CREATE CONSTRAINT problem_type_name IF NOT EXISTS\n"
    "FOR (p:ProblemType) REQUIRE p.name IS UNIQUE",
)

# RECORD_USAGE MERGEs the session by id: without the constraint two handoffs of one new
# session recorded at once could create it twice, and each MERGE scans every Session.
CONSTRAINT_SESSION_ID = Query(
    "constraint_session_id",
    "CREATE CONSTRAINT session_id IF NOT EXISTS\nFOR (s:Session) REQUIRE s.id IS UNIQUE",
)

#: Statements that make the schema; each is idempotent.
SCHEMA = (CONSTRAINT_FRAMEWORK_ID, CONSTRAINT_PROBLEM_TYPE_NAME, CONSTRAINT_SESSION_ID)

# A row of $frameworks: {id, name, type, description, triggers, problem_types, version,
# source_digest}.
REGISTER_FRAMEWORKS = Query(
    "register_frameworks",
    """\
UNWIND $frameworks AS row
MERGE (f:Framework {id: row.id})
SET f.name = row.name,
    f.type = row.type,
    f.description = row.description,
    f.triggers = row.triggers,
    f.problem_types = row.problem_types,
    f.version = row.version,
    f.source_digest = row.source_digest,
    f.registered = true,
    f.updated_at = datetime()""",
    ("frameworks",),
)

# REGISTER_FRAMEWORKS's row as parameters: one framework, as a registration of one sends it.
# UNWIND over a single row costs the embedded engine about twice the statement it stands for.
REGISTER_FRAMEWORK = Query(
    "register_framework",
    """\
MERGE (f:Framework {id: $id})
SET f.name = $name,
    f.type = $type,
    f.description = $description,
    f.triggers = $triggers,
    f.problem_types = $problem_types,
    f.version = $version,
    f.source_digest = $source_digest,
    f.registered = true,
    f.updated_at = datetime()""",
    ("id", "name", "type", "description", "triggers", "problem_types", "version", "source_digest"),
)

# A row of $bodies: {id, body}. The body's prose is sent apart from REGISTER_FRAMEWORKS:
# only ranking reads it, so it stays out of every agent's registration.cypher (reviewed, and
# a body edit would change it) and is set by the registry in the same transaction.
SET_ROUTING_BODIES = Query(
    "set_routing_bodies",
    """\
UNWIND $bodies AS row
MATCH (f:Framework {id: row.id})
SET f.body = row.body""",
    ("bodies",),
)

# The stored outgoing relationships are read first and only the stale ones deleted:
# a fresh registration then costs one cheap read instead of a delete pass.
OUTGOING_CHAINS = Query(
    "outgoing_chains",
    """\
UNWIND $ids AS fid
MATCH (f:Framework {id: fid})-[:CHAINS_TO]->(t:Framework)
RETURN f.id AS source, t.id AS target""",
    ("ids",),
)

OUTGOING_GOOD_FOR = Query(
    "outgoing_good_for",
    """\
UNWIND $ids AS fid
MATCH (f:Framework {id: fid})-[:GOOD_FOR]->(p:ProblemType)
RETURN f.id AS source, p.name AS problem_type""",
    ("ids",),
)

DELETE_CHAINS = Query(
    "delete_chains",
    """\
UNWIND $pairs AS pair
MATCH (f:Framework {id: pair.source})-[r:CHAINS_TO]->(t:Framework {id: pair.target})
DELETE r""",
    ("pairs",),
)

DELETE_GOOD_FOR = Query(
    "delete_good_for",
    """\
UNWIND $pairs AS pair
MATCH (f:Framework {id: pair.source})-[r:GOOD_FOR]->(p:ProblemType {name: pair.problem_type})
DELETE r""",
    ("pairs",),
)

# A target that is not registered yet becomes a placeholder; registering it later
# MERGEs onto the same node and sets registered = true.
MERGE_CHAINS = Query(
    "merge_chains",
    """\
UNWIND $chains AS chain
MATCH (f:Framework {id: chain.source})
MERGE (t:Framework {id: chain.target})
ON CREATE SET t.registered = false
MERGE (f)-[r:CHAINS_TO]->(t)
SET r.weight = chain.weight""",
    ("chains",),
)

# MERGE_CHAINS's row as parameters, for a registration with one chain.
MERGE_CHAIN = Query(
    "merge_chain",
    """\
MATCH (f:Framework {id: $source})
MERGE (t:Framework {id: $target})
ON CREATE SET t.registered = false
MERGE (f)-[r:CHAINS_TO]->(t)
SET r.weight = $weight""",
    ("source", "target", "weight"),
)

MERGE_GOOD_FOR = Query(
    "merge_good_for",
    """\
UNWIND $good_for AS entry
MATCH (f:Framework {id: entry.source})
MERGE (p:ProblemType {name: entry.problem_type})
MERGE (f)-[r:GOOD_FOR]->(p)
SET r.confidence = entry.confidence""",
    ("good_for",),
)

# MERGE_GOOD_FOR's row as parameters, for a registration with one problem type.
MERGE_ONE_GOOD_FOR = Query(
    "merge_one_good_for",
    """\
MATCH (f:Framework {id: $source})
MERGE (p:ProblemType {name: $problem_type})
MERGE (f)-[r:GOOD_FOR]->(p)
SET r.confidence = $confidence""",
    ("source", "problem_type", "confidence"),
)

PRUNE_PLACEHOLDERS = Query(
    "prune_placeholders",
    """\
UNWIND $ids AS candidate
MATCH (t:Framework {id: candidate})
WHERE t.registered = false AND NOT EXISTS { MATCH (:Framework)-[:CHAINS_TO]->(t) }
DELETE t""",
    ("ids",),
)

# Unregistering keeps the node as a placeholder while others still chain to it, so
# their CHAINS_TO survives and is whole again when the framework comes back.
DEMOTE_FRAMEWORK = Query(
    "demote_framework",
    """\
MATCH (f:Framework {id: $id})
WHERE f.registered = true
SET f.registered = false,
    f.name = null,
    f.type = null,
    f.description = null,
    f.triggers = null,
    f.problem_types = null,
    f.version = null,
    f.source_digest = null,
    f.body = null
RETURN f.id AS id""",
    ("id",),
)

_FRAMEWORK_COLUMNS = """\
RETURN f.id AS id,
       f.name AS name,
       f.type AS type,
       f.description AS description,
       f.triggers AS triggers,
       f.problem_types AS problem_types,
       f.version AS version,
       f.source_digest AS source_digest"""

GET_FRAMEWORK = Query(
    "get_framework",
    "MATCH (f:Framework {id: $id})\nWHERE f.registered = true\n" + _FRAMEWORK_COLUMNS,
    ("id",),
)

# Apart from GET_FRAMEWORK, whose text every agent's generated files show: the body is
# registered apart (SET_ROUTING_BODIES) and read back apart.
GET_ROUTING_BODY = Query(
    "get_routing_body",
    "MATCH (f:Framework {id: $id})\nWHERE f.registered = true\nRETURN f.body AS body",
    ("id",),
)

GET_CHAINS = Query(
    "get_chains",
    """\
MATCH (f:Framework {id: $id})-[r:CHAINS_TO]->(t:Framework)
RETURN t.id AS target, r.weight AS weight
ORDER BY target""",
    ("id",),
)

GET_GOOD_FOR = Query(
    "get_good_for",
    """\
MATCH (f:Framework {id: $id})-[r:GOOD_FOR]->(p:ProblemType)
RETURN p.name AS problem_type, r.confidence AS confidence
ORDER BY problem_type""",
    ("id",),
)

EXPORT_FRAMEWORKS = Query(
    "export_frameworks",
    "MATCH (f:Framework)\nWHERE f.registered = true\n"
    + _FRAMEWORK_COLUMNS
    + ",\n       f.body AS body\nORDER BY id",
)

EXPORT_CHAINS = Query(
    "export_chains",
    """\
MATCH (f:Framework)-[r:CHAINS_TO]->(t:Framework)
WHERE f.registered = true
RETURN f.id AS source, t.id AS target, r.weight AS weight
ORDER BY source, target""",
)

EXPORT_GOOD_FOR = Query(
    "export_good_for",
    """\
MATCH (f:Framework)-[r:GOOD_FOR]->(p:ProblemType)
WHERE f.registered = true
RETURN f.id AS source, p.name AS problem_type, r.confidence AS confidence
ORDER BY source, problem_type""",
)

COUNT_FRAMEWORKS = Query(
    "count_frameworks",
    """\
MATCH (f:Framework)
RETURN f.registered AS registered, count(f) AS n""",
)

COUNT_PROBLEM_TYPES = Query("count_problem_types", "MATCH (p:ProblemType)\nRETURN count(p) AS n")

COUNT_CHAINS = Query(
    "count_chains",
    "MATCH (:Framework)-[r:CHAINS_TO]->(:Framework)\nRETURN count(r) AS n",
)

COUNT_GOOD_FOR = Query(
    "count_good_for",
    "MATCH (:Framework)-[r:GOOD_FOR]->(:ProblemType)\nRETURN count(r) AS n",
)

#: Seed 000 §5.3 verbatim. Neo4j rejects it: ``score`` is an implicit grouping key
#: inside the aggregating expression of the second WITH. Kept only so a test can show
#: the rejection; never executed.
SEED_SELECT_QUERY = """\
// Find best frameworks for context
MATCH (f:Framework)
WHERE ANY(t IN $triggers WHERE t IN f.triggers)
   OR ANY(pt IN $problem_types WHERE pt IN f.problem_types)
WITH f,
     CASE WHEN ANY(t IN $triggers WHERE t IN f.triggers) THEN 0.6 ELSE 0 END +
     CASE WHEN ANY(pt IN $problem_types WHERE pt IN f.problem_types) THEN 0.4 ELSE 0 END
     AS score
WHERE score > 0
OPTIONAL MATCH (f)-[c:CHAINS_TO]->(next:Framework)
WHERE next.id IN $previous_frameworks
WITH f, score + COALESCE(SUM(c.weight), 0) * 0.3 AS final_score
ORDER BY final_score DESC
LIMIT 5
RETURN f.id, f.name, final_score"""

# The selection formula (README "Selection"), a correction of the seed's in four ways:
# * the seed's query does not compile (`score` is an implicit grouping key inside the
#   aggregation); here each aggregate gets its own WITH, and ties break on id;
# * the chain bonus follows CHAINS_TO from the previous frameworks *to* the candidate
#   (the seed matched the candidate's own outgoing edges, which favours frameworks that
#   lead *into* work already done rather than the ones meant to come next);
# * a problem-type match scores 0.4 x the GOOD_FOR confidence the skill declared
#   (1.0 when no GOOD_FOR edge records one), and every matched trigger after the first
#   adds 0.1, up to four;
# * observed success moves the score by 0.2 x (Laplace-smoothed success rate - 0.5):
#   nothing recorded is neutral, and the bonus stays within +-0.1;
# * the sum is rounded half up to 6 decimals, so equal scores tie (and break on id) instead
#   of differing in their last float bit. It is floor(x * 10^6 + 0.5) / 10^6, not
#   round(x, 6): Neo4j rounds the shortest decimal form of x and LadybugDB x * 10^6, which
#   differ in about 1 case in 500 at the seventh decimal; IEEE multiply, add, floor and
#   divide give the same double in both engines and in Python (mindrian.graph.triggers).
# The context lists are bound to variables first because the embedded engine cannot use a
# $parameter inside a list predicate; it also lacks list comprehensions (see dialect.py).
# A registry handle runs it for its first selection at a revision; later ones are computed
# from postings (mindrian.graph.triggers), since this scan costs ~25 ms a call at 10,000
# frameworks.
SELECT_QUERY = """\
WITH $triggers AS triggers, $problem_types AS problem_types, $previous_frameworks AS previous
MATCH (f:Framework)
WHERE f.registered = true
  AND (ANY(t IN f.triggers WHERE t IN triggers)
       OR ANY(pt IN f.problem_types WHERE pt IN problem_types))
WITH f, problem_types, previous,
     size([t IN f.triggers WHERE t IN triggers]) AS trigger_hits,
     ANY(pt IN f.problem_types WHERE pt IN problem_types) AS fits
OPTIONAL MATCH (f)-[g:GOOD_FOR]->(p:ProblemType)
WHERE p.name IN problem_types
WITH f, previous, trigger_hits, fits, max(g.confidence) AS fit_confidence
OPTIONAL MATCH (before:Framework)-[c:CHAINS_TO]->(f)
WHERE before.id IN previous
WITH f, trigger_hits, fits, fit_confidence, coalesce(sum(c.weight), 0.0) AS chained_weight
OPTIONAL MATCH (f)-[u:USED_BY]->(:Session)
WITH f, trigger_hits, fits, fit_confidence, chained_weight,
     count(u) AS uses,
     sum(CASE WHEN u.success THEN 1 ELSE 0 END) AS successes
WITH f,
     floor((CASE WHEN trigger_hits = 0 THEN 0.0
                 WHEN trigger_hits > 4 THEN 0.9
                 ELSE 0.5 + 0.1 * trigger_hits END
            + CASE WHEN fits THEN 0.4 * coalesce(fit_confidence, 1.0) ELSE 0.0 END
            + 0.3 * chained_weight
            + 0.2 * ((successes + 1.0) / (uses + 2.0) - 0.5)) * 1000000.0 + 0.5)
       / 1000000.0 AS final_score
RETURN f.id AS id, f.name AS name, final_score AS score
ORDER BY score DESC, id ASC
LIMIT $limit"""

SELECT_FRAMEWORKS = Query(
    "select_frameworks",
    SELECT_QUERY,
    ("triggers", "problem_types", "previous_frameworks", "limit"),
)

# Ranked free-text selection (mindrian.routing.rank) reads the stored fields once per
# revision of the registry and keeps its index in memory; the revision is the number of
# registered frameworks and the last time one was written, so another client registering
# into the same server is noticed on the next selection (an embedded handle, which sees
# no other process's commits, counts its own writes instead).
ROUTING_REVISION = Query(
    "routing_revision",
    """\
MATCH (f:Framework)
WHERE f.registered = true
RETURN count(f) AS n, max(f.updated_at) AS latest""",
)

ROUTING_DOCUMENTS = Query(
    "routing_documents",
    """\
MATCH (f:Framework)
WHERE f.registered = true
RETURN f.id AS id, f.name AS name, f.description AS description,
       f.triggers AS triggers, f.problem_types AS problem_types, f.body AS body
ORDER BY id""",
)

# What the explicit-trigger postings (mindrian.graph.triggers) read: no prose, which only
# the text index needs.
ROUTING_TRIGGERS = Query(
    "routing_triggers",
    """\
MATCH (f:Framework)
WHERE f.registered = true
RETURN f.id AS id, f.name AS name, f.triggers AS triggers, f.problem_types AS problem_types
ORDER BY id""",
)

# Recorded usage changes without a registration, so it has its own revision and is reread
# only when its count or successes changed.
ROUTING_USAGE_REVISION = Query(
    "routing_usage_revision",
    """\
MATCH (:Framework)-[u:USED_BY]->(:Session)
RETURN count(u) AS n, sum(CASE WHEN u.success THEN 1 ELSE 0 END) AS successes""",
)

ROUTING_USAGE = Query(
    "routing_usage",
    """\
MATCH (f:Framework)-[u:USED_BY]->(:Session)
WHERE f.registered = true
RETURN f.id AS id, count(u) AS uses, sum(CASE WHEN u.success THEN 1 ELSE 0 END) AS successes
ORDER BY id""",
)

# One USED_BY per handoff (keyed by its id, so recording it again changes nothing), to
# the Session the handoff belonged to. Placeholders are never credited.
RECORD_USAGE = Query(
    "record_usage",
    """\
MATCH (f:Framework {id: $framework_id})
WHERE f.registered = true
MERGE (s:Session {id: $session_id})
MERGE (f)-[u:USED_BY {handoff_id: $handoff_id}]->(s)
SET u.success = $success
RETURN f.id AS id""",
    ("framework_id", "session_id", "handoff_id", "success"),
)

USAGE = Query(
    "usage",
    """\
MATCH (f:Framework {id: $id})-[u:USED_BY]->(:Session)
RETURN count(u) AS uses, sum(CASE WHEN u.success THEN 1 ELSE 0 END) AS successes""",
    ("id",),
)

# A framework's usage goes with it: a node still holding relationships cannot be deleted.
DELETE_USAGE = Query(
    "delete_usage",
    """\
MATCH (f:Framework {id: $id})-[u:USED_BY]->(:Session)
DELETE u""",
    ("id",),
)

#: Every query the registry runs, by name.
ALL_QUERIES: dict[str, Query] = {
    q.name: q
    for q in (
        *SCHEMA,
        REGISTER_FRAMEWORKS,
        REGISTER_FRAMEWORK,
        SET_ROUTING_BODIES,
        OUTGOING_CHAINS,
        OUTGOING_GOOD_FOR,
        DELETE_CHAINS,
        DELETE_GOOD_FOR,
        MERGE_CHAINS,
        MERGE_CHAIN,
        MERGE_GOOD_FOR,
        MERGE_ONE_GOOD_FOR,
        PRUNE_PLACEHOLDERS,
        DEMOTE_FRAMEWORK,
        GET_FRAMEWORK,
        GET_ROUTING_BODY,
        GET_CHAINS,
        GET_GOOD_FOR,
        EXPORT_FRAMEWORKS,
        EXPORT_CHAINS,
        EXPORT_GOOD_FOR,
        COUNT_FRAMEWORKS,
        COUNT_PROBLEM_TYPES,
        COUNT_CHAINS,
        COUNT_GOOD_FOR,
        SELECT_FRAMEWORKS,
        ROUTING_REVISION,
        ROUTING_DOCUMENTS,
        ROUTING_TRIGGERS,
        ROUTING_USAGE,
        ROUTING_USAGE_REVISION,
        RECORD_USAGE,
        USAGE,
        DELETE_USAGE,
    )
}
