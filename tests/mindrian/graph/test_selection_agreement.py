"""Every way of selecting frameworks ranks the same: ids, order and scores.

One registry (the project's own eight frameworks plus three with Chinese text, negative
clauses, chains, GOOD_FOR confidences and recorded usage) is asked the same sentences and
trigger contexts through each path available offline:

* the embedded registry file (what ``mindrian select`` opens), in-process;
* ``mindrian select --json`` (the command line, in-process);
* the MCP server's ``select_frameworks`` (a real ``python -m mindrian.mcp`` over stdio);
* Larry's ``select_frameworks`` tool (:class:`mindrian.handoff.tools.Orchestration`);
* :class:`mindrian.graph.Neo4jRegistry` on the test Neo4j server, holding the same frameworks
  and usage, in-process and through the MCP server started on it;
* for trigger contexts, the Cypher selection query itself (``SELECT_QUERY``) run inside each
  engine: the embedded one, and Neo4j in its own dialect.

``registry.yaml`` stores neither usage nor the SKILL.md bodies (by design, see
:class:`mindrian.graph.FrameworkRecord`), so the MCP server on that file is compared with an
embedded registry holding the same frameworks without them: on the same project, a server
reading registry.yaml ranks sentences differently from one reading the database.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_mcp_server import _session_calls

from builder.cli.app import main
from mindrian.graph import (
    EmbeddedRegistry,
    FrameworkRecord,
    Neo4jRegistry,
    load_registry_yaml,
    write_registry_yaml,
)
from mindrian.graph import queries as q
from mindrian.graph.dialect import embedded_text
from mindrian.handoff.tools import Orchestration, bound, select_frameworks
from mindrian.testing.neo4j_server import Neo4jServer

ROOT = Path(__file__).resolve().parents[3]
OWN = load_registry_yaml(ROOT / "generated" / "registry.yaml")

#: Written for this test: a Chinese description, and English ones with negative clauses.
EXTRA = (
    FrameworkRecord(
        id="unit-test-coach",
        name="单元测试教练",
        type="operator",
        description="帮助开发者为函数编写单元测试，覆盖每一个分支。不用于性能测试。",  # noqa: RUF001 (Chinese punctuation)
        triggers=("单元测试", "unit-test"),
        problem_types=("testing",),
        chains_to=(("pws-validation", 0.5),),
        good_for=(("testing", 0.9),),
        body="先列出函数的每个分支，再为每个分支写一个断言。",  # noqa: RUF001 (Chinese punctuation)
    ),
    FrameworkRecord(
        id="load-test-planner",
        name="Load test planner",
        type="operator",
        description="Plans load and performance tests for a web service. Not for unit tests "
        "or for validating a startup idea.",
        triggers=("load-test", "performance"),
        problem_types=("testing", "ill-defined"),
        good_for=(("testing", 0.6), ("ill-defined", 0.3)),
        body="Steps\nModel the traffic, ramp up virtual users and watch latency percentiles.",
    ),
    FrameworkRecord(
        id="pricing-sprint",
        name="Pricing sprint",
        type="collaborative",
        description="Sets a price for a new product with customer interviews. Do not use for "
        "market sizing; use lean-canvas instead.",
        triggers=("pricing", "validate", "customer"),
        problem_types=("market",),
        chains_to=(("lean-canvas", 0.7), ("jtbd", 0.2)),
    ),
)
RECORDS = (*OWN, *EXTRA)
#: (framework, session, handoff, success): recorded usage that moves some scores.
USAGE = (
    ("pricing-sprint", "s1", "h1", True),
    ("pricing-sprint", "s1", "h2", True),
    ("jtbd", "s2", "h3", False),
    ("unit-test-coach", "s3", "h4", True),
)

SENTENCES = (
    "is my startup idea worth building",
    "帮我写个单元测试覆盖这个函数的分支",
    "我们的客户真正想完成的任务是什么",
    "plan the performance tests of our web service, not unit tests",
    "how should we price the product? not market sizing",
    "structure a board update about a wicked problem",
    "which latency percentiles matter when we ramp up virtual users",
    "一个完全无关的句子 zzz qqq",
)
#: Words found only in a stored body.
BODY_ONLY = SENTENCES[-2]
#: (triggers, problem types, previous): one context per framework, made from its stored
#: fields, plus contexts that combine frameworks and chain from one to the next.
CONTEXTS = (
    *(((*r.triggers[:2],), (*r.problem_types[:1],), ()) for r in RECORDS),
    (("validate", "customer", "pricing"), ("market", "testing"), ("unit-test-coach",)),
    (("单元测试",), (), ("pricing-sprint", "jtbd")),
    ((), ("testing",), ("unit-test-coach",)),
    ((), ("ill-defined", "testing"), ()),
    (("no-such-trigger",), (), ()),
)
#: What each path returns: (id, score) per rank.
Ranked = list[tuple[str, float]]


def _ranked(selections: Sequence[Any]) -> Ranked:
    return [(s.id, s.score) for s in selections]


@pytest.fixture(scope="module")
def registry_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("agreement") / "registry.lbug"
    with EmbeddedRegistry(path) as registry:
        registry.register_many(RECORDS)
        for framework, session, handoff, success in USAGE:
            assert registry.record_usage(framework, session, handoff, success)
    return path


@pytest.fixture(scope="module")
def embedded(registry_file: Path) -> Iterator[EmbeddedRegistry]:
    with EmbeddedRegistry(registry_file, read_only=True) as registry:
        yield registry


@pytest.fixture(scope="module")
def expected(embedded: EmbeddedRegistry) -> dict[str, list[Ranked]]:
    """The embedded registry's answers, which every other path must repeat.

    A handle's first trigger selection at a revision is the Cypher query, the second builds
    the postings: two untimed selections first, so every answer here is the postings'.
    """
    embedded.select(["warm-up"])
    embedded.select(["warm-up"])
    return {
        "sentences": [_ranked(embedded.select_text(s)) for s in SENTENCES],
        "contexts": [_ranked(embedded.select(t, p, b)) for t, p, b in CONTEXTS],
    }


def test_the_cases_exercise_every_part_of_the_scores(expected: dict[str, list[Ranked]]) -> None:
    # A comparison of empty or uniform lists would agree about nothing.
    sentences, contexts = expected["sentences"], expected["contexts"]
    assert sentences[0][0][0] == "pws-validation"
    assert sentences[1][0][0] == "unit-test-coach"
    assert sentences[SENTENCES.index(BODY_ONLY)][0][0] == "load-test-planner"
    assert sentences[-1] == [] or sentences[-1][0][1] < sentences[1][0][1]
    assert contexts[-1] == []
    scores = {score for ranked in contexts for _, score in ranked}
    assert len(scores) > 8  # triggers, fits, chains and usage give many distinct totals


def test_the_registry_computes_the_trigger_score_itself(
    embedded: EmbeddedRegistry, expected: dict[str, list[Ranked]]
) -> None:
    """SELECT_QUERY run by the graph engine equals the indexed computation, rank by rank."""
    text = embedded_text(q.SELECT_FRAMEWORKS)
    for (triggers, problems, previous), want in zip(CONTEXTS, expected["contexts"], strict=True):
        params = {
            "triggers": list(triggers),
            "problem_types": list(problems),
            "previous_frameworks": list(previous),
            "limit": 5,
        }
        rows = embedded.read_cypher(text, params)
        assert [(r["id"], float(r["score"])) for r in rows] == want, (triggers, problems)


def _select_params(context: tuple[Sequence[str], ...]) -> dict[str, Any]:
    triggers, problems, previous = context
    return {
        "triggers": list(triggers),
        "problem_types": list(problems),
        "previous_frameworks": list(previous),
        "limit": 5,
    }


def test_the_neo4j_server_agrees(
    neo4j_server: Neo4jServer, expected: dict[str, list[Ranked]]
) -> None:
    """The same frameworks and usage registered into Neo4j: the registry's answers, the
    selection query run by the server, and the MCP server started on it all repeat the
    embedded registry's, rank by rank and score by score."""
    with Neo4jRegistry(neo4j_server.uri, neo4j_server.user, neo4j_server.password) as graph:
        graph.register_many(RECORDS)
        for framework, session, handoff, success in USAGE:
            assert graph.record_usage(framework, session, handoff, success)
        # Twice each: the first trigger selection at a revision is the query, later ones
        # the postings.
        for _ in range(2):
            sentences = [_ranked(graph.select_text(s)) for s in SENTENCES]
            contexts = [_ranked(graph.select(t, p, b)) for t, p, b in CONTEXTS]
            assert {"sentences": sentences, "contexts": contexts} == expected
        queried = [
            [(r["id"], r["score"]) for r in graph.read_cypher(q.SELECT_QUERY, _select_params(c))]
            for c in CONTEXTS
        ]
        assert queried == expected["contexts"]
    env = {**neo4j_server.env(), "MINDRIAN_CACHE_DIR": os.environ["MINDRIAN_CACHE_DIR"]}
    _, _, results = anyio.run(_session_calls, None, _mcp_calls(), env)
    assert _mcp_ranked(results) == _for_mcp(expected)


def test_command_line_agrees(
    registry_file: Path,
    expected: dict[str, list[Ranked]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)

    def select(*args: str) -> Ranked:
        capsys.readouterr()
        assert main(["select", *args, "--json", "--registry", str(registry_file)]) == 0
        results = json.loads(capsys.readouterr().out)["results"]
        return [(r["id"], r["score"]) for r in results]

    def options(flag: str, values: Sequence[str]) -> list[str]:
        return [part for value in values for part in (flag, value)]

    sentences = [select(s) for s in SENTENCES]
    contexts = [
        select(*options("-t", t), *options("-p", p), *options("--previous", b))
        for t, p, b in CONTEXTS
        if t or p
    ]
    assert sentences == expected["sentences"]
    assert contexts == [
        want for (t, p, _), want in zip(CONTEXTS, expected["contexts"], strict=True) if t or p
    ]


#: The trigger contexts the MCP server's select_frameworks takes: it needs triggers (or words).
MCP_CONTEXTS = tuple(index for index, (t, _, _) in enumerate(CONTEXTS) if t)


def _mcp_calls() -> list[tuple[str, dict[str, Any]]]:
    return [
        *(("select_frameworks", {"triggers": [], "context": s}) for s in SENTENCES),
        *(
            (
                "select_frameworks",
                {"triggers": list(t), "problem_types": list(p), "previous": list(b)},
            )
            for t, p, b in (CONTEXTS[i] for i in MCP_CONTEXTS)
        ),
    ]


def _mcp_ranked(results: Sequence[Any]) -> dict[str, list[Ranked]]:
    ranked = [[(f["id"], f["score"]) for f in r.structured_content["frameworks"]] for r in results]
    return {"sentences": ranked[: len(SENTENCES)], "contexts": ranked[len(SENTENCES) :]}


def _for_mcp(expected: dict[str, list[Ranked]]) -> dict[str, list[Ranked]]:
    """``expected`` with only the contexts :func:`_mcp_calls` asks."""
    return {**expected, "contexts": [expected["contexts"][i] for i in MCP_CONTEXTS]}


def test_mcp_server_on_the_database_agrees(
    registry_file: Path, expected: dict[str, list[Ranked]]
) -> None:
    _, _, results = anyio.run(_session_calls, registry_file, _mcp_calls())
    assert _mcp_ranked(results) == _for_mcp(expected)


def test_mcp_server_on_registry_yaml_agrees_with_the_same_frameworks(tmp_path: Path) -> None:
    path = tmp_path / "registry.yaml"
    write_registry_yaml(RECORDS, path)
    _, _, results = anyio.run(_session_calls, path, _mcp_calls())
    with EmbeddedRegistry(None) as plain:
        plain.register_many(replace(record, body="") for record in RECORDS)
        want = {
            "sentences": [_ranked(plain.select_text(s)) for s in SENTENCES],
            "contexts": [_ranked(plain.select(t, p, b)) for t, p, b in CONTEXTS],
        }
    assert _mcp_ranked(results) == _for_mcp(want)


def test_larrys_select_frameworks_agrees(
    embedded: EmbeddedRegistry, expected: dict[str, list[Ranked]]
) -> None:
    orchestration = Orchestration(agent_id="orchestrator", registry=embedded, agents={}.get)
    session = orchestration.session("agreement")
    assert [_ranked(orchestration.select(session, s)) for s in SENTENCES] == expected["sentences"]
    with bound(orchestration, "agreement"):
        listed = select_frameworks(SENTENCES[1])
    ranks = [line for line in listed.splitlines()[1:] if line[:1].isdigit()]
    ids = [line.split(". ", 1)[1].split(" ", 1)[0] for line in ranks]
    assert ids == [framework for framework, _ in expected["sentences"][1]]


def test_the_cached_indexes_follow_a_registration(tmp_path: Path) -> None:
    with EmbeddedRegistry(tmp_path / "registry.lbug") as registry:
        registry.register_many(RECORDS)
        assert _ranked(registry.select(["pricing"]))[0][0] == "pricing-sprint"
        registry.register(replace(EXTRA[2], triggers=("quoting",)))
        assert _ranked(registry.select(["pricing"])) == []
        assert _ranked(registry.select(["quoting"])) == [("pricing-sprint", 0.6)]
        assert registry.record_usage("pricing-sprint", "s", "h", True)
        assert _ranked(registry.select(["quoting"])) == [("pricing-sprint", 0.633333)]
        assert registry.unregister("pricing-sprint")
        assert _ranked(registry.select(["quoting"])) == []
