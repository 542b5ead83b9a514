"""``mindrian select`` and ``mindrian graph export``, in-process, on an embedded registry from a
registry.yaml fixture."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import ladybug
import pytest
from build_factories import make_project

from builder.graph.export import cypher_statements
from mindrian.graph import (
    EmbeddedRegistry,
    Neo4jRegistry,
    RoutingBodyWarning,
    load_registry_yaml,
    registry_from_yaml,
)
from mindrian.testing.neo4j_server import Neo4jServer

FIXTURE = Path(__file__).parent.parent / "fixtures" / "registry.yaml"
INJECTION = "1.0', f.pwned = true, f.note = '"
NEO4J_VARIABLES = ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE")


@pytest.fixture(autouse=True)
def no_neo4j_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in NEO4J_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose generated/registry.yaml is the fixture and that has no database yet."""
    (tmp_path / "project").mkdir()
    root = make_project(tmp_path / "project", {})
    (root / "generated").mkdir()
    shutil.copyfile(FIXTURE, root / "generated" / "registry.yaml")
    return root


# --- select -------------------------------------------------------------------

#: Fixture scores worked out by hand: 0.6 for a trigger (+0.1 per further one), 0.4 x the
#: GOOD_FOR confidence of a problem type, 0.3 x weight of CHAINS_TO from --previous to the
#: candidate.
SELECTIONS = {
    "trigger only, ties by id": (
        ["--trigger", "validate"],
        [
            ("devil-advocate", "Devil's Advocate", "0.600"),
            ("lean-canvas", "Lean Canvas", "0.600"),
            ("pws-validation", "PWS Validation", "0.600"),
        ],
    ),
    "trigger, problem type and previous": (
        ["--trigger", "validate", "--problem-type", "decision", "--previous", "pws-validation"],
        # devil-advocate 0.6+0.4+0.3*0.8 (pws-validation chains to it); pws-validation 0.6+0.4;
        # lean-canvas 0.6: it chains *to* pws-validation, which earns nothing.
        [
            ("devil-advocate", "Devil's Advocate", "1.240"),
            ("pws-validation", "PWS Validation", "1.000"),
            ("lean-canvas", "Lean Canvas", "0.600"),
        ],
    ),
    "problem type only, limit": (
        ["--problem-type", "market", "--limit", "1"],
        # lean-canvas 0.4*1.0 above jtbd 0.4*0.8
        [("lean-canvas", "Lean Canvas", "0.400")],
    ),
    "previous boosts its successors": (
        ["-t", "scqa", "-t", "market", "--previous", "pws-validation"],
        # jtbd 0.6+0.3*0.7 (pws-validation chains to jtbd); minto-pyramid 0.6
        [("jtbd", "Jobs To Be Done", "0.810"), ("minto-pyramid", "Minto Pyramid", "0.600")],
    ),
}


def table_rows(out: str) -> list[tuple[str, ...]]:
    lines = out.splitlines()
    assert lines[0].split() == ["rank", "id", "name", "score"]
    rows = []
    for line in lines[1:]:
        rank, framework_id, *name, score = line.split()
        rows.append((rank, framework_id, " ".join(name), score))
    return rows


@pytest.mark.parametrize("case", sorted(SELECTIONS))
def test_select_table(cli, project: Path, case: str) -> None:
    args, expected = SELECTIONS[case]
    result = cli(["select", *args], project)
    assert result.code == 0, result.err
    assert table_rows(result.out) == [(str(rank), *row) for rank, row in enumerate(expected, 1)]


def test_select_builds_the_embedded_registry_from_yaml_once(cli, project: Path) -> None:
    database = project / ".mindrian" / "registry.lbug"
    first = cli(["select", "--trigger", "validate"], project)
    # The fixture has no packages beside it, so the frameworks rank without their bodies.
    assert first.err == (
        "generated/registry.yaml: warning[W701]: ranked without the body of their skill "
        "(selection may differ from the registering build until it is registered again): "
        "devil-advocate: no package beside it; jtbd: no package beside it; lean-canvas: no "
        "package beside it; minto-pyramid: no package beside it; odd-quotes: no package beside "
        "it; and 1 more\n"
        "built .mindrian/registry.lbug from generated/registry.yaml (6 framework(s))\n"
    )
    assert database.is_file()
    assert sorted(p.name for p in database.parent.iterdir()) == ["registry.lbug"], (
        "no scratch folder left behind"
    )
    second = cli(["select", "--trigger", "validate"], project)
    assert (second.code, second.err, second.out) == (0, "", first.out)


def test_select_json(cli, project: Path) -> None:
    result = cli(
        ["select", "-t", "validate", "-p", "decision", "--previous", "pws-validation", "--json"],
        project,
    )
    assert result.code == 0
    document = json.loads(result.out)
    assert document["registry"] == ".mindrian/registry.lbug"
    assert (
        document["triggers"],
        document["problem_types"],
        document["previous"],
        document["limit"],
    ) == (
        ["validate"],
        ["decision"],
        ["pws-validation"],
        5,
    )
    assert [(r["rank"], r["id"], r["score"]) for r in document["results"]] == [
        (1, "devil-advocate", pytest.approx(1.24)),
        (2, "pws-validation", pytest.approx(1.0)),
        (3, "lean-canvas", pytest.approx(0.6)),
    ]


def test_select_from_a_yaml_registry_writes_nothing(cli, tmp_path: Path) -> None:
    result = cli(["select", "--trigger", "quote", "--registry", str(FIXTURE)], tmp_path)
    assert result.code == 0, result.err
    # The name holds a quote, double quotes and a backslash; it is printed as is.
    assert table_rows(result.out) == [("1", "odd-quotes", 'It\'s "odd" \\ named', "0.600")]
    assert list(tmp_path.iterdir()) == []


def test_select_with_injection_trigger_matches_only_as_a_value(cli, project: Path) -> None:
    result = cli(["select", "--trigger", INJECTION], project)
    assert table_rows(result.out) == [("1", "odd-quotes", 'It\'s "odd" \\ named', "0.600")]
    nothing = cli(["select", "--trigger", "1.0"], project)
    assert (nothing.code, nothing.out) == (0, "")
    assert "no registered framework matches" in nothing.err


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (
            ["select"],
            2,
            "error[U005]: give a sentence, or at least one --trigger or --problem-type",
        ),
        (["select", "-t", "x", "--limit", "0"], 2, "--limit"),
        (
            ["select", "-t", "x", "--registry", "nowhere.lbug"],
            1,
            "error[G011]: no registry at nowhere.lbug",
        ),
        (
            ["select", "-t", "x", "--registry", "r.lbug", "--neo4j-uri", "bolt://h:1"],
            2,
            "error[U008]",
        ),
        (["graph", "export", "--format", "xml"], 2, "error[U010]: unknown format 'xml'"),
    ],
)
def test_usage_and_input_errors(
    cli, project: Path, args: list[str], code: int, fragment: str
) -> None:
    result = cli(args, project)
    assert result.code == code
    assert fragment in result.err


def test_no_registry_at_all(cli, tmp_path: Path) -> None:
    root = make_project(tmp_path, {})
    result = cli(["select", "--trigger", "validate"], root)
    assert result.code == 1
    assert (
        "error[G011]: no registry: neither .mindrian/registry.lbug nor generated/registry.yaml "
        "exists" in result.err
    )
    assert not (root / ".mindrian").exists()


# --- Neo4j faults -------------------------------------------------------------


@pytest.mark.parametrize("command", [["select", "--trigger", "validate"], ["graph", "export"]])
def test_unreachable_neo4j_is_one_redacted_error(
    cli, project: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setenv("NEO4J_USERNAME", "neo4j")
    monkeypatch.setenv("NEO4J_PASSWORD", "secret")
    result = cli([*command, "--neo4j-uri", "bolt://127.0.0.1:1"], project)
    assert result.code == 1
    assert "secret" not in result.out + result.err
    (line,) = result.err.splitlines()
    assert line.startswith("error[G010]: Neo4j at bolt://127.0.0.1:1 (user neo4j): cannot connect")
    assert not (project / ".mindrian").exists(), "the embedded registry is not touched"


def test_neo4j_uri_from_environment(cli, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    monkeypatch.setenv("NEO4J_USERNAME", "neo4j")
    monkeypatch.setenv("NEO4J_PASSWORD", "secret")
    result = cli(["select", "--trigger", "validate"], project)
    assert result.code == 1 and "bolt://127.0.0.1:1" in result.err and "secret" not in result.err


def test_missing_password_is_reported(cli, project: Path) -> None:
    result = cli(["select", "--trigger", "validate", "--neo4j-uri", "bolt://127.0.0.1:1"], project)
    assert result.code == 1
    assert (
        "error[G010]: a Neo4j URI is set but NEO4J_USERNAME or NEO4J_PASSWORD is missing"
        in result.err
    )


def test_password_in_uri_is_refused_and_not_echoed(cli, project: Path) -> None:
    result = cli(
        ["select", "--trigger", "validate", "--neo4j-uri", "bolt://neo4j:hunter2@127.0.0.1:1"],
        project,
    )
    assert result.code == 2
    assert "hunter2" not in result.out + result.err
    assert (
        "bolt://neo4j:***@127.0.0.1:1 carries credentials; set NEO4J_USERNAME and NEO4J_PASSWORD"
        in result.err
    )


# --- graph export ---------------------------------------------------------------


def test_export_yaml_is_the_registry_yaml(cli, project: Path) -> None:
    result = cli(["graph", "export"], project)
    assert result.code == 0
    assert result.out == FIXTURE.read_text(encoding="utf-8")
    assert cli(["graph", "export", "--format", "yaml"], project).out == result.out


def test_export_json(cli, project: Path) -> None:
    result = cli(["graph", "export", "--format", "json"], project)
    document = json.loads(result.out)
    records = load_registry_yaml(FIXTURE)
    assert document == {"format": 1, "frameworks": [r.to_plain() for r in records]}
    odd = next(f for f in document["frameworks"] if f["id"] == "odd-quotes")
    assert odd["version"] == INJECTION


def run_script(statements: list[str], path: Path) -> None:
    """Run export statements on an embedded database (Neo4j-only clauses in the embedded
    dialect)."""
    EmbeddedRegistry(path).close()  # creates the schema tables
    database = ladybug.Database(str(path))
    connection = ladybug.Connection(database)
    for statement in statements:
        if statement.startswith("CREATE CONSTRAINT"):
            continue  # the embedded schema's primary keys play this part
        connection.execute(statement.replace("datetime()", "current_timestamp()"))
    connection.close()
    database.close()


def script_statements(script: str) -> list[str]:
    body = "\n".join(line for line in script.splitlines() if not line.startswith("//"))
    return [s.strip() for s in body.split(";\n") if s.strip()]


def test_export_cypher_recreates_the_graph(cli, project: Path, tmp_path: Path) -> None:
    result = cli(["graph", "export", "--format", "cypher"], project)
    assert result.code == 0
    script = result.out
    assert "$" not in script, "parameter-free"
    assert cli(["graph", "export", "--format", "cypher"], project).out == script, "deterministic"
    statements = script_statements(script)
    records = load_registry_yaml(FIXTURE)
    assert [s.rstrip(";") for s in statements] == list(cypher_statements(records))
    run_script(statements, tmp_path / "copy.lbug")
    with EmbeddedRegistry(tmp_path / "copy.lbug") as copy:
        assert copy.export() == records
        odd = copy.get("odd-quotes")
        assert odd is not None and odd.version == INJECTION and INJECTION in odd.triggers
        props = copy.node_properties("odd-quotes")
        assert props is not None and "pwned" not in props and "note" not in props
        # lean-canvas chains to a framework nobody registered: it comes back as a placeholder.
        assert copy.counts().placeholders == 1


def test_export_cypher_passes_the_neo4j_linter(cli, project: Path) -> None:
    from builder.graph import cypher_lint
    from mindrian.graph import queries as q

    reason = cypher_lint.unavailable_reason()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Cypher linter required in CI: {reason}")
        pytest.skip(f"Cypher linter unavailable: {reason}")
    statements = script_statements(cli(["graph", "export", "--format", "cypher"], project).out)
    schema = cypher_lint.LintSchema(q.LABELS, q.RELATIONSHIP_TYPES, q.PROPERTY_KEYS)
    found = cypher_lint.lint({f"s{i}": s for i, s in enumerate(statements)}, None, schema)
    assert {name: d for name, d in found.items() if d} == {}


# --- free text and the generated registry --------------------------------------

GENERATED_REGISTRY = Path(__file__).resolve().parents[3] / "generated" / "registry.yaml"


def test_select_a_sentence_matches_triggers_by_their_terms(cli, project: Path) -> None:
    result = cli(["select", "How risky is this customer market?", "--json"], project)
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert (document["text"], document["terms"]) == (
        "How risky is this customer market?",
        # Each Latin word as written (singular) and by its stem, marked "~".
        ["risky", "~risky", "customer", "~custom", "market", "~market"],
    )
    # jtbd: its triggers customer and market and its problem type market (GOOD_FOR 0.8);
    # lean-canvas: its problem type market (1.0). "risky" is not "risk".
    assert [r["id"] for r in document["results"]] == ["jtbd", "lean-canvas"]
    first, second = document["results"]
    assert set(first) == {"rank", "id", "name", "score", "confident", "confidence"}
    assert set(second) == {"rank", "id", "name", "score", "confident"}
    # Two candidates close together: the first is no answer to act on alone.
    assert first["confident"] is second["confident"] is False
    assert 0 < first["confidence"] < 0.9


def test_a_sentence_and_triggers_together_are_a_usage_error(cli, project: Path) -> None:
    result = cli(["select", "validate my idea", "-t", "validate"], project)
    assert result.code == 2
    assert "error[U015]: give a sentence or --trigger, not both" in result.err


def test_startup_question_ranks_pws_validation_first(cli, tmp_path: Path) -> None:
    result = cli(
        ["select", "is my startup idea worth building", "--registry", str(GENERATED_REGISTRY)],
        tmp_path,
    )
    assert result.code == 0, result.err
    ranked = [row[1] for row in table_rows(result.out)]
    assert ranked[0] == "pws-validation"
    assert "larry" in ranked[1:], "larry matches 'idea' only, one trigger against two"


def test_chain_boost_goes_to_the_successor_of_the_previous_framework(cli, tmp_path: Path) -> None:
    # Issue 14: minto-pyramid chains *into* pws-validation, devil-advocate is what
    # pws-validation chains to (weight 0.8); the successor must win.
    args = ["select", "-t", "critique", "-t", "structure", "--previous", "pws-validation"]
    result = cli([*args, "--registry", str(GENERATED_REGISTRY)], tmp_path)
    assert result.code == 0, result.err
    assert [(row[1], row[3]) for row in table_rows(result.out)] == [
        ("devil-advocate", "0.840"),
        ("minto-pyramid", "0.600"),
    ]


def test_a_framework_ranked_without_its_body_is_a_coded_warning_line(cli, tmp_path: Path) -> None:
    generated = tmp_path / "generated"
    shutil.copytree(GENERATED_REGISTRY.parent, generated)
    shutil.rmtree(generated / "jtbd")
    result = cli(["select", "a sentence", "--registry", str(generated / "registry.yaml")], tmp_path)
    assert result.code == 0, result.err
    assert result.err == (
        "generated/registry.yaml: warning[W701]: ranked without the body of their skill "
        "(selection may differ from the registering build until it is registered again): "
        "jtbd: no package beside it\n"
    )
    # Library callers still get the Python warning, with the file's path first.
    with pytest.warns(RoutingBodyWarning, match=r"^/.*/generated/registry.yaml: ranked without"):
        registry_from_yaml(generated / "registry.yaml").close()


# --- on the test Neo4j ------------------------------------------------------------


def test_rebuild_and_export_on_neo4j(
    cli, project: Path, neo4j_server: Neo4jServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With NEO4J_URI set, ``graph rebuild`` makes Neo4j hold exactly registry.yaml (a framework
    it lacks unregistered, the others registered) and ``graph export`` reads it back
    byte-identical to the file; no embedded database is created."""
    for name, value in neo4j_server.env().items():
        monkeypatch.setenv(name, value)
    stray = replace(load_registry_yaml(FIXTURE)[0], id="stray", triggers=("stray",))
    with Neo4jRegistry(neo4j_server.uri, neo4j_server.user, neo4j_server.password) as graph:
        graph.register(stray)
    listed = len(load_registry_yaml(FIXTURE))

    rebuilt = cli(["graph", "rebuild"], project)
    assert rebuilt.code == 0, rebuilt.err
    assert f"rebuilt {neo4j_server.uri} from generated/registry.yaml ({listed}" in rebuilt.err
    exported = cli(["graph", "export"], project)
    assert exported.code == 0 and exported.out == FIXTURE.read_text(encoding="utf-8")
    assert cli(["graph", "rebuild"], project).code == 0  # again: nothing changes
    assert cli(["graph", "export"], project).out == exported.out
    assert not (project / ".mindrian" / "registry.lbug").exists()
