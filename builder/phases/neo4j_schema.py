"""Phase 5, neo4j_schema: the agent's Framework node, its relationships and the Cypher for them.

The query texts are the registry's fixed templates (:mod:`mindrian.graph.queries`);
skill values only ever become query parameters. ``schema_valid`` lints every query
with Neo4j's own front end (``builder.graph.cypher_lint``); without Node or the npm package
it falls back to LadybugDB's parser and binder, and the check reason and the
output's ``validator`` say which one ran. Both validators are injected, so the
phase is a pure function of its inputs and their answers.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from builder.graph import cypher_lint
from builder.graph.config import (
    DEFAULT_CHAIN_WEIGHT,
    DEFAULT_GOOD_FOR_CONFIDENCE,
    ChainEdge,
    Constraint,
    FrameworkNode,
    GoodForEdge,
    GraphConfig,
    GraphQuery,
    NodeSchema,
    PropertySpec,
    RelationshipSchema,
)
from builder.phases import phase_number
from builder.phases.keys import embedded_label, linter_identity, linter_label
from builder.phases.outputs import Inputs, Outputs
from builder.pipeline.contract import CheckResult, PhaseHooks, PhaseResult
from builder.pipeline.serial import to_plain
from builder.skill.spec import AgentSpec
from mindrian.errors import MindrianError
from mindrian.graph import DEFAULT_SELECT_LIMIT
from mindrian.graph import queries as q
from mindrian.routing.text import body_prose

__all__ = [
    "PHASE",
    "QUERY_ROLES",
    "RUNTIME_PARAMETERS",
    "EmbeddedParser",
    "Finding",
    "Neo4jLinter",
    "Neo4jSchemaPhase",
    "Validator",
    "ValidatorUnavailable",
    "build_graph_config",
    "parameters_used",
    "queries_check",
]

#: Roles every GraphConfig must cover, and the registry queries that play each, in execution order.
QUERY_ROLES: Mapping[str, tuple[q.Query, ...]] = {
    "schema": q.SCHEMA,
    "register_node": (q.REGISTER_FRAMEWORKS,),
    "replace_relationships": (
        q.OUTGOING_CHAINS,
        q.OUTGOING_GOOD_FOR,
        q.DELETE_CHAINS,
        q.DELETE_GOOD_FOR,
        q.MERGE_CHAINS,
        q.MERGE_GOOD_FOR,
        q.PRUNE_PLACEHOLDERS,
    ),
    "select": (q.SELECT_FRAMEWORKS,),
    "get": (q.GET_FRAMEWORK, q.GET_CHAINS, q.GET_GOOD_FOR),
}

#: The only parameters a build cannot know: the registry fills them from the graph it finds.
RUNTIME_PARAMETERS: Mapping[tuple[str, str], str] = {
    (q.DELETE_CHAINS.name, "pairs"): "stale CHAINS_TO relationships found in the graph",
    (q.DELETE_GOOD_FOR.name, "pairs"): "stale GOOD_FOR relationships found in the graph",
    (q.PRUNE_PLACEHOLDERS.name, "ids"): "placeholder targets no longer chained to",
}

_SKILL, _REGISTRY, _DATABASE, _USAGE = "skill", "registry", "database", "usage"

_NODES = (
    NodeSchema(
        "Framework",
        "id",
        (
            PropertySpec("id", "STRING", _SKILL),
            PropertySpec("name", "STRING", _SKILL),
            PropertySpec("type", "STRING", _SKILL),
            PropertySpec("description", "STRING", _SKILL),
            PropertySpec("triggers", "LIST<STRING>", _SKILL),
            PropertySpec("problem_types", "LIST<STRING>", _SKILL),
            PropertySpec("version", "STRING", _SKILL),
            PropertySpec("source_digest", "STRING", _SKILL),
            PropertySpec("registered", "BOOLEAN", _REGISTRY),
            PropertySpec("updated_at", "DATETIME", _DATABASE),
        ),
    ),
    NodeSchema("ProblemType", "name", (PropertySpec("name", "STRING", _SKILL),)),
    NodeSchema("Session", "id", (PropertySpec("id", "STRING", _USAGE),)),
)

_RELATIONSHIPS = (
    RelationshipSchema(
        "CHAINS_TO", "Framework", "Framework", (PropertySpec("weight", "FLOAT", _SKILL),)
    ),
    RelationshipSchema(
        "GOOD_FOR", "Framework", "ProblemType", (PropertySpec("confidence", "FLOAT", _SKILL),)
    ),
    RelationshipSchema(
        "USED_BY",
        "Framework",
        "Session",
        (PropertySpec("handoff_id", "STRING", _USAGE), PropertySpec("success", "BOOLEAN", _USAGE)),
    ),
)

_CONSTRAINTS = (
    Constraint("Framework", "id", q.CONSTRAINT_FRAMEWORK_ID.name),
    Constraint("ProblemType", "name", q.CONSTRAINT_PROBLEM_TYPE_NAME.name),
    Constraint("Session", "id", q.CONSTRAINT_SESSION_ID.name),
)

# String literals and comments are removed before looking for `$name`, so text inside
# them is never mistaken for a parameter.
_NOT_CODE = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|//[^\n]*|/\*.*?\*/", re.S)
_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def parameters_used(text: str) -> frozenset[str]:
    """Names of the ``$parameters`` a Cypher text uses."""
    return frozenset(_PARAMETER.findall(_NOT_CODE.sub(" ", text)))


# --- building the GraphConfig -------------------------------------------------


def _queries() -> tuple[GraphQuery, ...]:
    return tuple(
        GraphQuery(
            name=query.name,
            role=role,
            text=query.text,
            params=query.params,
            runtime_params=tuple(p for p in query.params if (query.name, p) in RUNTIME_PARAMETERS),
        )
        for role, members in QUERY_ROLES.items()
        for query in members
    )


def _chains(spec: AgentSpec) -> tuple[ChainEdge, ...]:
    return tuple(
        ChainEdge(c.target, DEFAULT_CHAIN_WEIGHT, "default", c.line)
        if c.weight is None
        else ChainEdge(c.target, float(c.weight), "skill", c.line)
        for c in spec.chains_to
    )


def _parameters(
    node: FrameworkNode, chains: Sequence[ChainEdge], good_for: Sequence[GoodForEdge]
) -> dict[str, Any]:
    """Per-query parameter values as plain data (what the registry sends for this agent)."""
    # The digest stays in the checkpoint: sent, it would change registration.cypher and
    # registry.yaml with every edit of the skill, whatever the edit changed. The key stays
    # (null): the registration query reads it. The body is not a key of that query at all
    # (the registry sets it apart, see mindrian.graph.queries.SET_ROUTING_BODIES).
    row = {**to_plain(node), "source_digest": None}
    del row["body"]
    ids = {"ids": [node.id]}
    return {
        q.CONSTRAINT_FRAMEWORK_ID.name: {},
        q.CONSTRAINT_PROBLEM_TYPE_NAME.name: {},
        q.CONSTRAINT_SESSION_ID.name: {},
        q.REGISTER_FRAMEWORKS.name: {"frameworks": [row]},
        q.OUTGOING_CHAINS.name: ids,
        q.OUTGOING_GOOD_FOR.name: ids,
        q.DELETE_CHAINS.name: {},
        q.DELETE_GOOD_FOR.name: {},
        q.MERGE_CHAINS.name: {
            "chains": [{"source": node.id, "target": c.target, "weight": c.weight} for c in chains]
        },
        q.MERGE_GOOD_FOR.name: {
            "good_for": [
                {"source": node.id, "problem_type": g.problem_type, "confidence": g.confidence}
                for g in good_for
            ]
        },
        q.PRUNE_PLACEHOLDERS.name: {},
        # The agent's own triggers and problem types: a selection that must find it
        # (what an end-to-end check after registration can run).
        q.SELECT_FRAMEWORKS.name: {
            "triggers": list(node.triggers),
            "problem_types": list(node.problem_types),
            "previous_frameworks": [],
            "limit": DEFAULT_SELECT_LIMIT,
        },
        q.GET_FRAMEWORK.name: {"id": node.id},
        q.GET_CHAINS.name: {"id": node.id},
        q.GET_GOOD_FOR.name: {"id": node.id},
    }


def _decisions(
    chains: Sequence[ChainEdge], good_for: Sequence[GoodForEdge], rated: Mapping[str, float]
) -> tuple[str, ...]:
    said = [
        f"CHAINS_TO {c.target}: weight {c.weight} "
        + ("from chains_to" if c.weight_source == "skill" else "by default (chains_to gives none)")
        for c in chains
    ]
    said.extend(
        f"GOOD_FOR {g.problem_type}: confidence {g.confidence} "
        + ("from good_for" if g.problem_type in rated else "by default (good_for rates it not)")
        for g in good_for
    )
    return tuple(said)


def build_graph_config(spec: AgentSpec) -> GraphConfig:
    """The GraphConfig of an agent, before any validator has looked at it."""
    node = FrameworkNode(
        id=spec.id,
        name=spec.name,
        type=spec.type,
        description=spec.description,
        triggers=spec.triggers,
        problem_types=spec.problem_types,
        version=spec.version,
        source_digest=spec.source_digest,
        body=body_prose(block.text for block in spec.instructions.blocks),
    )
    chains = _chains(spec)
    good_for = tuple(
        GoodForEdge(p, spec.good_for.get(p, DEFAULT_GOOD_FOR_CONFIDENCE))
        for p in dict.fromkeys(spec.problem_types)
    )
    return GraphConfig(
        framework=node,
        chains_to=chains,
        good_for=good_for,
        nodes=_NODES,
        relationships=_RELATIONSHIPS,
        constraints=_CONSTRAINTS,
        queries=_queries(),
        parameters=_parameters(node, chains, good_for),
        decisions=_decisions(chains, good_for, spec.good_for),
    )


# --- validators ---------------------------------------------------------------


class ValidatorUnavailable(MindrianError):
    """The validator cannot run here (its message says why)."""


@dataclass(frozen=True)
class Finding:
    """One diagnostic about one query."""

    query: str
    """Query name."""
    severity: str
    """``error``, ``warning``, ``information`` or ``hint``."""
    message: str
    """The validator's message, verbatim."""
    line: int = 0
    """1-based line in the query text, 0 when unknown."""
    column: int = 0
    """1-based column, 0 when unknown."""

    def render(self) -> str:
        """``query:line:col: severity: message``."""
        where = ":".join(str(p) for p in (self.query, self.line, self.column) if p)
        return f"{where}: {self.severity}: {self.message}"


class Validator(Protocol):
    """Checks every query of a GraphConfig with some Cypher front end."""

    label: str
    """What the checkpoint names it (package or engine and version)."""

    def identity(self) -> str:
        """Which validator would run and its version, for the phase's input digest."""
        ...

    def validate(self, graph: GraphConfig) -> tuple[Finding, ...]:
        """Findings for every query; raises :class:`ValidatorUnavailable` when it cannot run."""
        ...


class Neo4jLinter:
    """Neo4j's own semantic analysis (``lintCypherQuery``), run by Node."""

    label = linter_label()

    def __init__(
        self,
        lint: Callable[..., Mapping[str, Iterable[cypher_lint.Diagnostic]]] = cypher_lint.lint,
        unavailable_reason: Callable[[], str | None] = cypher_lint.unavailable_reason,
    ) -> None:
        self._lint = lint
        self._unavailable_reason = unavailable_reason

    def identity(self) -> str:
        return linter_identity(self._unavailable_reason())

    def validate(self, graph: GraphConfig) -> tuple[Finding, ...]:
        labels, types, keys = graph.vocabulary()
        try:
            found = self._lint(
                {query.name: query.text for query in graph.queries},
                {query.name: query.params for query in graph.queries},
                cypher_lint.LintSchema(labels, types, keys),
            )
        except (cypher_lint.LinterUnavailable, cypher_lint.LinterError) as exc:
            raise ValidatorUnavailable(str(exc)) from exc
        return tuple(
            Finding(name, d.severity, d.message, d.line, d.column)
            for name in (query.name for query in graph.queries)
            for d in found.get(name, ())
        )


class EmbeddedParser:
    """LadybugDB's parser and binder, against a scratch in-memory database with the registry schema.

    Each query is prepared in the embedded dialect (:func:`mindrian.graph.dialect.embedded_text`),
    exactly as the embedded registry would run it. The engine has no CREATE CONSTRAINT;
    a uniqueness constraint is checked as the PRIMARY KEY of the label's node table.
    """

    def __init__(self) -> None:
        self.label = embedded_label()

    def identity(self) -> str:
        return self.label

    def validate(self, graph: GraphConfig) -> tuple[Finding, ...]:
        import ladybug

        from mindrian.graph.dialect import EMBEDDED_SCHEMA, embedded_text

        database = ladybug.Database(":memory:")
        connection = ladybug.Connection(database)
        try:
            for statement in EMBEDDED_SCHEMA:
                connection.execute(statement)
            constraints = {c.query: c for c in graph.constraints}
            findings: list[Finding] = []
            for query in graph.queries:
                if query.name in constraints:
                    findings += _primary_key_findings(connection, constraints[query.name])
                else:
                    text = embedded_text(q.Query(query.name, query.text, query.params))
                    findings += _prepare_findings(connection, query.name, text)
            return tuple(findings)
        finally:
            connection.close()
            database.close()


def _prepare_findings(connection: Any, name: str, text: str) -> list[Finding]:
    # prepare() parses and binds without parameter values; EXPLAIN would need a typed
    # value for every parameter, which an empty list cannot give. The engine marks
    # prepare() deprecated in favour of execute(), which would run the statement.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        prepared = connection.prepare(text)
    if prepared.is_success():
        return []
    return [Finding(name, "error", prepared.get_error_message().strip())]


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _primary_key_findings(connection: Any, constraint: Constraint) -> list[Finding]:
    if not _IDENTIFIER.match(constraint.label):
        return [
            Finding(constraint.query, "error", f"label {constraint.label!r} is not an identifier")
        ]
    try:
        rows = connection.execute(f"CALL table_info('{constraint.label}') RETURN *").get_all()
    except RuntimeError as exc:
        return [Finding(constraint.query, "error", str(exc).strip())]
    keys = [row[1] for row in rows if row[4]]
    if keys != [constraint.property]:
        message = (
            f"{constraint.label}.{constraint.property} is not the primary key of the "
            f"embedded schema ({keys})"
        )
        return [Finding(constraint.query, "error", message)]
    return []


# --- checks -------------------------------------------------------------------

#: Severities that fail ``schema_valid``; a warning means a label or property outside the schema.
_FAILING = ("error", "warning")


def _schema_check(
    graph: GraphConfig, findings: Sequence[Finding], fallback_note: str
) -> CheckResult:
    failing = [f for f in findings if f.severity in _FAILING]
    how = (
        f"{fallback_note}; parsed by {graph.validator} instead"
        if fallback_note
        else f"linted by {graph.validator}"
    )
    if failing:
        return CheckResult(
            "schema_valid",
            False,
            f"{how}: {len(failing)} problem(s) in {len(graph.queries)} queries; first: "
            f"{failing[0].render()}",
        )
    return CheckResult(
        "schema_valid", True, f"{how}: {len(graph.queries)} queries, {len(findings)} diagnostics"
    )


def _query_problems(graph: GraphConfig, query: GraphQuery) -> list[str]:
    problems = []
    used = parameters_used(query.text)
    if used != set(query.params):
        problems.append(
            f"{query.name} declares {sorted(query.params)} but its text uses {sorted(used)}"
        )
    given = graph.parameters.get(query.name)
    if given is None:
        return [*problems, f"{query.name} has no parameter values"]
    for name in query.runtime_params:
        if (query.name, name) not in RUNTIME_PARAMETERS:
            problems.append(
                f"{query.name}: ${name} is not a parameter the registry fills at run time"
            )
    missing = [p for p in query.params if p not in given and p not in query.runtime_params]
    if missing:
        problems.append(
            f"{query.name} uses {', '.join('$' + p for p in missing)} but no value is provided"
        )
    unknown = sorted(set(given) - set(query.params))
    if unknown:
        problems.append(f"{query.name} is given {', '.join(unknown)}, which it does not use")
    return problems


def queries_check(graph: GraphConfig) -> CheckResult:
    """``queries_generated``: every role has its queries and every parameter they use has a
    value."""
    names = {query.name for query in graph.queries}
    problems = [
        f"no {query.name} query for {role}"
        for role, members in QUERY_ROLES.items()
        for query in members
        if query.name not in names
    ]
    for query in graph.queries:
        problems += _query_problems(graph, query)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return CheckResult("queries_generated", False, problems[0] + more)
    provided = sum(len(graph.parameters[query.name]) for query in graph.queries)
    runtime = sorted({f"${p}" for query in graph.queries for p in query.runtime_params})
    return CheckResult(
        "queries_generated",
        True,
        f"{len(graph.queries)} queries for {len(QUERY_ROLES)} roles; {provided} parameter values "
        "provided, "
        f"{', '.join(runtime) or 'none'} filled by the registry from the graph at run time",
    )


# --- the phase ----------------------------------------------------------------


class Neo4jSchemaPhase(PhaseHooks[Outputs, GraphConfig]):
    """Phase 5: the GraphConfig of an agent, its queries checked by a Cypher front end."""

    name = "neo4j_schema"
    number = phase_number(name)
    checks = ("schema_valid", "queries_generated")
    output_type = GraphConfig

    def __init__(self, linter: Validator | None = None, fallback: Validator | None = None) -> None:
        self._linter = linter or Neo4jLinter()
        self._fallback = fallback or EmbeddedParser()

    def extra_digest(self, inputs: Inputs) -> dict[str, str]:
        """Which validators are installed, with versions: a new linter must re-check the queries."""
        return {"linter": self._linter.identity(), "fallback": self._fallback.identity()}

    def _validate(self, draft: GraphConfig) -> tuple[GraphConfig, tuple[Finding, ...], str]:
        try:
            findings = self._linter.validate(draft)
        except ValidatorUnavailable as exc:
            note = f"Neo4j linter unavailable ({exc})"
            return (
                replace(draft, validator=self._fallback.label),
                self._fallback.validate(draft),
                note,
            )
        return replace(draft, validator=self._linter.label), findings, ""

    def run(self, inputs: Inputs) -> PhaseResult[GraphConfig]:
        spec = inputs.previous.spec()
        graph, findings, note = self._validate(build_graph_config(spec))
        warnings_ = [f"{f.render()} (not failing)" for f in findings if f.severity not in _FAILING]
        if note:
            warnings_.append(
                f"{note}; checked with {graph.validator}, which is not Neo4j's own front end"
            )
        if not spec.triggers and not spec.problem_types:
            warnings_.append(
                "no triggers or problem_types: the selection query can never choose this framework"
            )
        checks = (_schema_check(graph, findings, note), queries_check(graph))
        return PhaseResult(output=graph, checks=checks, warnings=tuple(warnings_))


#: The phase object the runner loads.
PHASE = Neo4jSchemaPhase()
