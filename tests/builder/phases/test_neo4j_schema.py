"""Phase 5, neo4j_schema: GraphConfig, Cypher checked by Neo4j's front end (or LadybugDB),
parameters only."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import ladybug
import pytest
from golden_files import Golden
from phase_factories import analyse, phase_input, run_phases, skill

from builder.graph import cypher_lint
from builder.graph.config import DEFAULT_CHAIN_WEIGHT, DEFAULT_GOOD_FOR_CONFIDENCE, GraphConfig
from builder.phases.neo4j_schema import (
    PHASE,
    EmbeddedParser,
    Finding,
    Neo4jLinter,
    Neo4jSchemaPhase,
    ValidatorUnavailable,
    build_graph_config,
    parameters_used,
    queries_check,
)
from builder.pipeline.contract import PhaseInput
from builder.pipeline.serial import dump_yaml, from_plain, to_plain
from builder.skill.model import ChainTarget
from mindrian.graph import EmbeddedRegistry, embedded
from mindrian.graph import queries as q
from mindrian.graph.dialect import EMBEDDED_SCHEMA, embedded_text

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = Path(__file__).parent.parent / "golden" / "neo4j_schema" / "pws.yaml"
INJECTION = "1.0', f.pwned = true, f.note = '"
LINTER_LABEL = "@neo4j-cypher/language-support 2.0.0-next.38"


@pytest.fixture(scope="module")
def linter() -> None:
    """The Neo4j linter must be installed in CI; elsewhere its tests are skipped without it."""
    reason = cypher_lint.unavailable_reason()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"Cypher linter required in CI: {reason}")
    pytest.skip(f"Cypher linter unavailable: {reason}")


class StubValidator:
    """A validator whose availability and findings a test sets."""

    def __init__(
        self, label: str = "stub 1.0", findings: tuple[Finding, ...] = (), missing: str = ""
    ) -> None:
        self.label = label
        self.findings = findings
        self.missing = missing
        self.seen: list[GraphConfig] = []

    def identity(self) -> str:
        return f"{self.label} unavailable: {self.missing}" if self.missing else self.label

    def validate(self, graph: GraphConfig) -> tuple[Finding, ...]:
        self.seen.append(graph)
        if self.missing:
            raise ValidatorUnavailable(self.missing)
        return self.findings


def phase5_input(**changes: Any) -> PhaseInput:
    """Phases 2-4 run on the factory skill (with changes), ready for phase 5."""
    definition = skill(**changes)
    results = run_phases(definition)
    previous = {"skill_analysis": definition, **{name: r.output for name, r in results.items()}}
    return phase_input(previous)


def quick_phase(**validators: Any) -> Neo4jSchemaPhase:
    """Phase 5 with a stub linter (no Node run) unless one is given."""
    return Neo4jSchemaPhase(
        linter=validators.get("linter", StubValidator()), fallback=validators.get("fallback")
    )


# --- golden GraphConfig of skills/pws/SKILL.md --------------------------------


@pytest.fixture(scope="module")
def pws_input() -> PhaseInput:
    from builder.phases.handoff_protocol import load_runtime_contract

    definition = analyse("skills/pws/SKILL.md", root=str(ROOT))
    results = run_phases(definition, runtime=load_runtime_contract(), root=str(ROOT))
    previous = {"skill_analysis": definition, **{name: r.output for name, r in results.items()}}
    return phase_input(previous, root=str(ROOT))


def test_pws_golden_graph_config_linted_by_neo4j(
    linter: None, pws_input: PhaseInput, golden: Golden
) -> None:
    result = PHASE.run(pws_input)
    assert [(c.name, c.passed) for c in result.checks] == [
        ("schema_valid", True),
        ("queries_generated", True),
    ]
    assert result.checks[0].reason == f"linted by {LINTER_LABEL}: 15 queries, 0 diagnostics"
    assert result.output.validator == LINTER_LABEL
    text = dump_yaml(to_plain(result.output))
    assert text == dump_yaml(to_plain(PHASE.run(pws_input).output)), (
        "two runs must give the same bytes"
    )
    assert from_plain(GraphConfig, to_plain(result.output)) == result.output
    golden.check(GOLDEN, text)


def test_pws_values_and_record(pws_input: PhaseInput) -> None:
    graph = quick_phase().run(pws_input).output
    assert graph.framework.id == "pws-validation"
    assert "validate" in graph.framework.triggers
    assert [(c.target, c.weight, c.weight_source) for c in graph.chains_to] == [
        ("devil-advocate", 0.8, "skill"),
        ("jtbd", 0.7, "skill"),
    ]
    record = graph.to_framework_record()
    assert record.chains_to == (("devil-advocate", 0.8), ("jtbd", 0.7))
    assert record.good_for == tuple(
        sorted((p, DEFAULT_GOOD_FOR_CONFIDENCE) for p in graph.framework.problem_types)
    )
    # The digest stays in the checkpoint (the node); the registry and generated files go
    # without it, so they change only when behaviour does.
    assert graph.framework.source_digest == pws_input.source.digest
    assert (record.version, record.source_digest) == (graph.framework.version, None)
    row = graph.parameters["register_frameworks"]["frameworks"][0]
    assert row["source_digest"] is None
    # The body's prose is registered for ranking, never sent with registration.cypher.
    assert "body" not in row
    assert record.body == graph.framework.body
    assert "A founder wants to know" in record.body
    assert "```" not in record.body


# --- validators ---------------------------------------------------------------


def test_fallback_to_ladybug_when_linter_unavailable() -> None:
    missing = StubValidator(missing="node not found")
    result = Neo4jSchemaPhase(linter=missing).run(phase5_input())
    schema = result.checks[0]
    assert schema.passed
    version = ladybug.__version__
    assert schema.reason == (
        f"Neo4j linter unavailable (node not found); parsed by LadybugDB {version} instead: 15 "
        "queries, 0 diagnostics"
    )
    assert result.output.validator == f"LadybugDB {version}"
    assert any("not Neo4j's own front end" in w for w in result.warnings)


def test_neo4j_linter_reports_missing_node_as_unavailable() -> None:
    def lint(*_: Any) -> dict[str, Any]:
        raise cypher_lint.LinterUnavailable("node is not on PATH (install Node.js to lint Cypher)")

    wrapped = Neo4jLinter(
        lint=lint, unavailable_reason=lambda: "node is not on PATH (install Node.js to lint Cypher)"
    )
    assert (
        wrapped.identity()
        == f"{LINTER_LABEL} unavailable: node is not on PATH (install Node.js to lint Cypher)"
    )
    result = Neo4jSchemaPhase(linter=wrapped).run(phase5_input())
    assert result.checks[0].reason.startswith("Neo4j linter unavailable (node is not on PATH")
    assert result.output.validator.startswith("LadybugDB ")


@pytest.mark.parametrize(
    ("severity", "passes"),
    [("error", False), ("warning", False), ("information", True), ("hint", True)],
)
def test_linter_findings_decide_schema_valid(severity: str, passes: bool) -> None:
    finding = Finding("select_frameworks", severity, "something about score", 3, 7)
    result = quick_phase(linter=StubValidator(findings=(finding,))).run(phase5_input())
    schema = result.checks[0]
    assert schema.passed is passes
    if passes:
        assert (
            result.warnings[0]
            == f"select_frameworks:3:7: {severity}: something about score (not failing)"
        )
    else:
        assert schema.reason == (
            "linted by stub 1.0: 1 problem(s) in 15 queries; first: select_frameworks:3:7: "
            f"{severity}: something about score"
        )


def _with_text(graph: GraphConfig, name: str, text: str) -> GraphConfig:
    queries = tuple(replace(x, text=text) if x.name == name else x for x in graph.queries)
    return replace(graph, queries=queries)


def test_real_linter_rejects_the_seed_selection_query(linter: None) -> None:
    graph = _with_text(
        build_graph_config(phase5_input().previous.spec()),
        "select_frameworks",
        q.SEED_SELECT_QUERY,
    )
    findings = Neo4jLinter().validate(graph)
    assert [(f.query, f.severity) for f in findings] == [("select_frameworks", "error")]
    assert "Aggregation column contains implicit grouping expressions" in findings[0].message


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("get_framework", "MATCH (f:Framework {id: $id} RETURN f.id", "Parser exception"),
        ("get_framework", "MATCH (f:Framwork {id: $id}) RETURN f.id", "Framwork does not exist"),
        ("get_chains", "MATCH (f:Framework {id: $id}) RETURN f.idd", "Cannot find property idd"),
    ],
)
def test_embedded_parser_finds_errors(name: str, text: str, fragment: str) -> None:
    graph = _with_text(build_graph_config(phase5_input().previous.spec()), name, text)
    (finding,) = EmbeddedParser().validate(graph)
    assert (finding.query, finding.severity) == (name, "error")
    assert fragment in finding.message


def test_embedded_parser_checks_constraints_as_primary_keys() -> None:
    graph = build_graph_config(phase5_input().previous.spec())
    assert EmbeddedParser().validate(graph) == ()
    wrong = replace(
        graph, constraints=(replace(graph.constraints[0], property="name"), *graph.constraints[1:])
    )
    (finding,) = EmbeddedParser().validate(wrong)
    assert finding.query == "constraint_framework_id"
    assert "Framework.name is not the primary key" in finding.message


def test_extra_digest_names_the_validators() -> None:
    inputs = phase5_input()
    one = quick_phase(linter=StubValidator("stub 1.0")).extra_digest(inputs)
    other = quick_phase(linter=StubValidator("stub 2.0")).extra_digest(inputs)
    gone = quick_phase(linter=StubValidator("stub 1.0", missing="node not found")).extra_digest(
        inputs
    )
    assert one["linter"] == "stub 1.0" and other["linter"] == "stub 2.0"
    assert gone["linter"] == "stub 1.0 unavailable: node not found"
    assert one["fallback"] == f"LadybugDB {ladybug.__version__}"


def test_default_phase_digest_names_the_pinned_linter(linter: None) -> None:
    assert PHASE.extra_digest(phase5_input())["linter"] == LINTER_LABEL


# --- injection: skill text never enters a query text ---------------------------


def test_injection_strings_stay_parameters() -> None:
    plain = quick_phase().run(phase5_input(triggers=("validate",))).output
    hostile = (
        quick_phase()
        .run(
            phase5_input(
                name=INJECTION,
                version=INJECTION,
                description=INJECTION,
                triggers=(INJECTION, "validate"),
                problem_types=(INJECTION,),
                chains_to=(ChainTarget("jtbd", 0.7),),
            )
        )
        .output
    )
    assert [(x.name, x.text, x.params) for x in hostile.queries] == [
        (x.name, x.text, x.params) for x in plain.queries
    ]
    assert all(x.text == q.ALL_QUERIES[x.name].text for x in hostile.queries)
    assert not any(INJECTION in x.text for x in hostile.queries)
    row = hostile.parameters["register_frameworks"]["frameworks"][0]
    assert (row["name"], row["version"], row["description"], row["triggers"]) == (
        INJECTION,
        INJECTION,
        INJECTION,
        [INJECTION, "validate"],
    )
    # Stored verbatim as values, and nothing else changes on the node.
    with EmbeddedRegistry(None) as registry:
        registry.register(hostile.to_framework_record())
        assert registry.get(hostile.framework.id) == hostile.to_framework_record()
        properties = registry.node_properties(hostile.framework.id)
        assert properties is not None and "pwned" not in properties and "note" not in properties


# --- queries_generated ----------------------------------------------------------


def _drop_param(graph: GraphConfig, query: str, param: str) -> GraphConfig:
    values = {name: dict(given) for name, given in graph.parameters.items()}
    del values[query][param]
    return replace(graph, parameters=values)


def _drop_query(graph: GraphConfig, name: str) -> GraphConfig:
    return replace(graph, queries=tuple(x for x in graph.queries if x.name != name))


def _claim_runtime(graph: GraphConfig, name: str, param: str) -> GraphConfig:
    graph = replace(
        graph,
        queries=tuple(
            replace(x, runtime_params=(param,)) if x.name == name else x for x in graph.queries
        ),
    )
    return _drop_param(graph, name, param)


def _extra_value(graph: GraphConfig, name: str) -> GraphConfig:
    values = {n: dict(given) for n, given in graph.parameters.items()}
    values[name]["surplus"] = 1
    return replace(graph, parameters=values)


TAMPERINGS = {
    "missing chains": (
        lambda g: _drop_param(g, "merge_chains", "chains"),
        "merge_chains uses $chains but no value is provided",
    ),
    "missing id": (
        lambda g: _drop_param(g, "get_framework", "id"),
        "get_framework uses $id but no value is provided",
    ),
    "missing limit": (
        lambda g: _drop_param(g, "select_frameworks", "limit"),
        "select_frameworks uses $limit",
    ),
    "missing select": (
        lambda g: _drop_query(g, "select_frameworks"),
        "no select_frameworks query for select",
    ),
    "missing get": (lambda g: _drop_query(g, "get_chains"), "no get_chains query for get"),
    "no values at all": (
        lambda g: replace(
            g, parameters={k: v for k, v in g.parameters.items() if k != "get_good_for"}
        ),
        "get_good_for has no parameter values",
    ),
    "undeclared text parameter": (
        lambda g: _with_text(g, "get_framework", q.GET_FRAMEWORK.text + "\nLIMIT $extra"),
        "get_framework declares ['id'] but its text uses ['extra', 'id']",
    ),
    "runtime claim not allowed": (
        lambda g: _claim_runtime(g, "register_frameworks", "frameworks"),
        "register_frameworks: $frameworks is not a parameter the registry fills at run time",
    ),
    "value for an unused parameter": (
        lambda g: _extra_value(g, "get_chains"),
        "get_chains is given surplus",
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERINGS))
def test_queries_generated_fails(case: str) -> None:
    tamper, fragment = TAMPERINGS[case]
    graph = build_graph_config(phase5_input().previous.spec())
    assert queries_check(graph).passed
    verdict = queries_check(tamper(graph))
    assert not verdict.passed
    assert fragment in verdict.reason


def test_queries_generated_reason() -> None:
    verdict = queries_check(build_graph_config(phase5_input().previous.spec()))
    assert verdict.reason == (
        "15 queries for 5 roles; 12 parameter values provided, $ids, $pairs filled by the registry "
        "from the graph at run time"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("MATCH (f {id: $id}) RETURN f", {"id"}),
        ('RETURN \'$not_a_param\' AS a, "$nor\\"this" AS b, $yes', {"yes"}),
        ("// $comment\nRETURN $a + $b_2", {"a", "b_2"}),
        ("/* $block */ RETURN 1", set()),
    ],
)
def test_parameters_used(text: str, expected: set[str]) -> None:
    assert parameters_used(text) == expected


def test_parameters_register_the_node(tmp_path: Path) -> None:
    """The GraphConfig's own texts and parameters, run on the embedded engine, store what
    to_framework_record says."""
    chains = (ChainTarget("jtbd", 0.7), ChainTarget("pws"))
    graph = (
        quick_phase()
        .run(phase5_input(chains_to=chains, problem_types=("market", "decision")))
        .output
    )
    path = tmp_path / "registry.lbug"
    database = ladybug.Database(str(path))
    connection = ladybug.Connection(database)
    for statement in (*EMBEDDED_SCHEMA, *embedded.FORMAT_SCHEMA):
        connection.execute(statement)
    # A database made by hand carries the registry's format marker, as the registry's own does.
    connection.execute(embedded._MARK_FORMAT, {"version": embedded.FORMAT_VERSION})
    for name in ("register_frameworks", "merge_chains", "merge_good_for"):
        query = graph.query(name)
        connection.execute(
            embedded_text(q.Query(query.name, query.text, query.params)),
            dict(graph.parameters[name]),
        )
    connection.close()
    database.close()
    with EmbeddedRegistry(path) as registry:
        # registration.cypher carries no body (the registry sets it apart).
        assert registry.get(graph.framework.id) == replace(graph.to_framework_record(), body="")


# --- defaults and bad input -------------------------------------------------------


def test_defaults_for_weight_and_confidence() -> None:
    result = quick_phase().run(
        phase5_input(
            chains_to=(ChainTarget("jtbd"),), problem_types=("market", "decision", "market")
        )
    )
    graph = result.output
    assert [(c.target, c.weight, c.weight_source) for c in graph.chains_to] == [
        ("jtbd", DEFAULT_CHAIN_WEIGHT, "default")
    ]
    assert [(g.problem_type, g.confidence) for g in graph.good_for] == [
        ("market", DEFAULT_GOOD_FOR_CONFIDENCE),
        ("decision", DEFAULT_GOOD_FOR_CONFIDENCE),
    ]
    assert (
        graph.decisions[0]
        == f"CHAINS_TO jtbd: weight {DEFAULT_CHAIN_WEIGHT} by default (chains_to gives none)"
    )


def test_warns_when_nothing_can_select_the_framework() -> None:
    result = quick_phase().run(phase5_input(triggers=(), problem_types=()))
    assert (
        "no triggers or problem_types: the selection query can never choose this framework"
        in result.warnings
    )


def test_good_for_confidence_comes_from_the_skill_where_it_rates_one() -> None:
    result = quick_phase().run(
        phase5_input(problem_types=("market", "decision"), good_for={"decision": 0.35})
    )
    graph = result.output
    assert [(g.problem_type, g.confidence) for g in graph.good_for] == [
        ("market", DEFAULT_GOOD_FOR_CONFIDENCE),
        ("decision", 0.35),
    ]
    assert graph.decisions[-2:] == (
        f"GOOD_FOR market: confidence {DEFAULT_GOOD_FOR_CONFIDENCE} by default "
        "(good_for rates it not)",
        "GOOD_FOR decision: confidence 0.35 from good_for",
    )
    rows = graph.parameters["merge_good_for"]["good_for"]
    assert [(r["problem_type"], r["confidence"]) for r in rows] == [
        ("market", DEFAULT_GOOD_FOR_CONFIDENCE),
        ("decision", 0.35),
    ]
