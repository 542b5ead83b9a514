"""The guarded read-only Cypher tool: tokenizer, rules, READ session (driver test double)."""

import neo4j
import pytest

from mindrian.guards import (
    CypherRejected,
    Scope,
    TokenKind,
    check_read_query,
    efficiency_warnings,
    read_only_cypher_tool,
    tokenize,
)

SCOPE = Scope(labels={"Person", "Project"}, relationship_types={"KNOWS", "WORKS_ON"})
PAGE = "RETURN n.id AS id, n.name AS name ORDER BY id LIMIT 30"


def rules(query, parameters=None, scope=SCOPE):
    return {v.rule for v in check_read_query(query, scope, parameters)}


# --- tokenizer -----------------------------------------------------------------


def test_tokenizer_keeps_strings_names_and_params_whole():
    tokens = tokenize(
        "MATCH (n:`Odd ``Label```) // CREATE in a comment\n"
        "WHERE n.note = 'it''s \\' CREATE' /* SET */ AND n.x = $`my param` RETURN n"
    )
    kinds = [(t.kind, t.value) for t in tokens]
    assert (TokenKind.QUOTED_NAME, "Odd `Label`") in kinds
    assert (TokenKind.PARAM, "my param") in kinds
    assert not any(t.value in ("CREATE", "SET") for t in tokens if t.kind is TokenKind.NAME)
    assert [t.value for t in tokens if t.kind is TokenKind.STRING] == [
        "it",
        "s \\' CREATE",
    ]


def test_tokenizer_symbols_and_numbers():
    values = [t.value for t in tokenize("x IS :: INTEGER AND [1..2] <> 0x1F --> <-")]
    assert values == [
        "x",
        "IS",
        "::",
        "INTEGER",
        "AND",
        "[",
        "1",
        "..",
        "2",
        "]",
        "<>",
        "0x1F",
        "-",
        "->",
        "<-",
    ]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("RETURN 'open", "unterminated string"),
        ("RETURN `open", "unterminated backtick"),
        ("RETURN 1 /* open", "unterminated comment"),
        ("RETURN 1 # no", "unexpected character"),
    ],
)
def test_tokenizer_errors_become_syntax_violations(query, message):
    (violation,) = check_read_query(query, SCOPE)
    assert violation.rule == "syntax" and message in violation.message


# --- the rule table -------------------------------------------------------------

ALLOWED = [
    # seed 004's substring guard rejects these reads (false positives):
    f"MATCH (n:Person) WHERE n.note CONTAINS 'CREATE ' {PAGE}",
    f"MATCH (n:Person) WHERE n.status = \"SET \" OR n.x = 'DELETE ' {PAGE}",
    f"MATCH (n:Person) // we never CREATE here\n {PAGE}",
    f"MATCH (n:Person) /* MERGE SET DELETE */ {PAGE}",
    "MATCH (n:Person) RETURN n.`create` AS id, n.name AS name ORDER BY id LIMIT 30",
    "MATCH (n:Person) RETURN n.set AS id, n {.delete, merge: 1} AS m ORDER BY id LIMIT 30",
    f"MATCH (n:Person) WHERE n.skip_reason IS NOT NULL {PAGE}",
    # keyset pages
    "MATCH (n:Person) WHERE n.id > $last_seen_id RETURN n.id, n.name ORDER BY n.id LIMIT 30",
    "MATCH (n:Person) WHERE $last_seen_id < n.id RETURN n.id AS id ORDER BY id ASC LIMIT $size",
    "MATCH (n:Person) WHERE n.id < $last_seen_id RETURN n.id AS id ORDER BY id DESC LIMIT 30",
    "MATCH (n:Person) RETURN count(n) AS people LIMIT 1",
    # patterns within scope
    "MATCH (a:Person)-[:KNOWS|WORKS_ON]->(b:Project) RETURN b.id AS id ORDER BY id LIMIT 30",
    "MATCH (a:Person) MATCH (a)-[r:KNOWS]->(b:Person) RETURN b.id AS id ORDER BY id LIMIT 30",
    "MATCH (n:Person) WHERE EXISTS { MATCH (n)-[:KNOWS]->(:Person) } " + PAGE,
    "MATCH (n:Person) RETURN [(n)-[:WORKS_ON]->(p:Project) | p.name] AS id ORDER BY id LIMIT 5",
    "MATCH (n:Person) WHERE n.age IS :: INTEGER " + PAGE,
    "CALL db.labels() YIELD label RETURN label ORDER BY label LIMIT 100",
    "MATCH (n:Person) CALL { WITH n MATCH (n)-[:KNOWS]->(m:Person) RETURN m } RETURN m.id AS id "
    "ORDER BY id LIMIT 3",
]


@pytest.mark.parametrize("query", ALLOWED)
def test_allowed_queries(query):
    parameters = {
        "size": 20,
        **({"last_seen_id": 7} if "$last_seen_id" in query else {}),
    }
    assert check_read_query(query, SCOPE, parameters) == ()


def test_a_cursor_that_is_passed_must_be_used():
    query = f"MATCH (n:Person) {PAGE}"
    assert rules(query) == set()
    assert rules(query, {"last_seen_id": 7}) == {"pagination"}


REJECTED = [
    # writes the seed's substring guard misses (false negatives)
    ("CREATE(n:Person) RETURN n.id LIMIT 1", "write_clause"),
    ("MATCH (n:Person)\nSET\tn.x = 1 RETURN n.id LIMIT 1", "write_clause"),
    ("MATCH (n:Person) DETACH\nDELETE n", "write_clause"),
    (
        "MATCH (n:Person) CALL { WITH n REMOVE n.x } IN TRANSACTIONS RETURN n.id LIMIT 1",
        "in_transactions",
    ),
    (
        "MATCH (n:Person) CALL { WITH n RETURN n.id AS x } IN TRANSACTIONS RETURN x LIMIT 1",
        "in_transactions",
    ),
    ("LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row LIMIT 1", "load_csv"),
    (
        "CALL apoc.create.node(['Person'], {}) YIELD node RETURN node.id LIMIT 1",
        "procedure",
    ),
    (
        "CALL `apoc`.`periodic`.iterate('a', 'b', {}) YIELD batches RETURN batches LIMIT 1",
        "procedure",
    ),
    (
        "MATCH (n:Person) RETURN apoc.cypher.runFirstColumnSingle('MATCH (m) RETURN m', {}) AS x "
        "LIMIT 1",
        "plugin",
    ),
    ("CALL dbms.killQuery('q-1') YIELD queryId RETURN queryId LIMIT 1", "procedure"),
    (
        "CALL db.index.vector.queryNodes('i', 5, $v) YIELD node RETURN node.id LIMIT 5",
        "procedure",
    ),
    (
        "MATCH (n:Person) FOREACH (x IN [1] | MERGE (:Person {id: x})) RETURN n.id LIMIT 1",
        "write_clause",
    ),
    ("DROP INDEX person_id", "admin_command"),
    ("SHOW USERS YIELD user RETURN user LIMIT 1", "admin_command"),
    ("USE system MATCH (n:Person) RETURN n.id LIMIT 1", "admin_command"),
    (
        f"MATCH (n:Person) {PAGE}; MATCH (m:Person) DETACH DELETE m",
        "multiple_statements",
    ),
    (f"MATCH (n:Person) {PAGE};", "multiple_statements"),
    # pagination
    ("MATCH (n:Person) RETURN n.id ORDER BY n.id SKIP 30 LIMIT 30", "pagination"),
    ("MATCH (n:Person) RETURN n.id ORDER BY n.id OFFSET 30 LIMIT 30", "pagination"),
    ("MATCH (n:Person) RETURN n.id ORDER BY n.id", "pagination"),
    ("MATCH (n:Person) RETURN n.id ORDER BY n.id LIMIT 5000", "pagination"),
    ("MATCH (n:Person) RETURN n.id ORDER BY n.id LIMIT $missing", "pagination"),
    ("MATCH (n:Person) RETURN n.id LIMIT 30", "pagination"),
    (
        "MATCH (n:Person) WHERE n.id > $last_seen_id RETURN n.id ORDER BY n.name LIMIT 30",
        "pagination",
    ),
    (
        "MATCH (n:Person) WHERE n.id > $last_seen_id RETURN n.id AS id ORDER BY id DESC LIMIT 30",
        "pagination",
    ),
    (
        "MATCH (n:Person) RETURN n.id AS id ORDER BY id LIMIT 5 UNION MATCH (n:Person) RETURN n.id "
        "AS id ORDER BY id LIMIT 5",
        "pagination",
    ),
    ("MATCH (n:Person) WITH n LIMIT 5", "pagination"),
    # scope
    ("MATCH (s:Secret) RETURN s.id AS id ORDER BY id LIMIT 5", "scope"),
    ("MATCH (n:Person|Secret) " + PAGE, "scope"),
    (
        "MATCH (n:Person)-[:REPORTS_TO]->(m:Person) RETURN m.id AS id ORDER BY id LIMIT 5",
        "scope",
    ),
    ("MATCH (n:Person) WHERE n:Salary " + PAGE, "scope"),
    ("MATCH (n IS Secret) " + PAGE, "scope"),
    ("MATCH (n) " + PAGE, "scope"),
    ("MATCH (n:Person)-->(m:Person) RETURN m.id AS id ORDER BY id LIMIT 5", "scope"),
    ("MATCH (n:Person)-[r]->(m:Person) RETURN m.id AS id ORDER BY id LIMIT 5", "scope"),
    ("MATCH (n:!Person) " + PAGE, "scope"),
    ("MATCH (n:%) " + PAGE, "scope"),
    ("MATCH (n:$($label)) " + PAGE, "syntax"),
    (
        "MATCH (n:Person) RETURN [(n)-[:KNOWS]->(m) | m.salary] AS id ORDER BY id LIMIT 5",
        "scope",
    ),
    (
        "MATCH (n:Person) CALL { MATCH (s:Secret) RETURN s } RETURN s.id AS id ORDER BY id LIMIT 5",
        "scope",
    ),
    # hidden properties (seed 004 trap 3)
    (
        "MATCH (n:Person) RETURN n.embedding AS id ORDER BY id LIMIT 5",
        "hidden_property",
    ),
    (
        "MATCH (n:Person) RETURN n['embedding'] AS id ORDER BY id LIMIT 5",
        "hidden_property",
    ),
    (
        "MATCH (n:Person) RETURN properties(n) AS id ORDER BY id LIMIT 5",
        "hidden_property",
    ),
    ("MATCH (n:Person) RETURN n {.*} AS id ORDER BY id LIMIT 5", "hidden_property"),
    # syntax
    ("", "syntax"),
    ("// only a comment", "syntax"),
]


@pytest.mark.parametrize(("query", "rule"), REJECTED)
def test_rejected_queries(query, rule):
    violations = check_read_query(query, SCOPE)
    assert rule in {v.rule for v in violations}, violations
    assert all(v.message for v in violations)


def test_keyword_inside_string_is_not_a_keyword_but_outside_it_is():
    assert rules(f"MATCH (n:Person) WHERE n.note = 'DELETE' {PAGE}") == set()
    assert "write_clause" in rules("MATCH (n:Person) WHERE n.note = '' DELETE n")


def test_allow_list_and_hidden_properties_come_from_the_scope():
    query = "CALL db.schema.visualization() YIELD nodes RETURN size(nodes) AS n LIMIT 1"
    assert rules(query) == {"procedure"}
    wider = Scope(labels=set(), relationship_types=set(), procedures={"db.schema.visualization"})
    assert rules(query, scope=wider) == set()
    open_scope = Scope(labels={"Person"}, relationship_types=set(), hidden_properties=set())
    assert rules("MATCH (n:Person) RETURN n.embedding AS e LIMIT 1", scope=open_scope) == set()


def test_unlabelled_patterns_are_allowed_when_the_scope_says_so():
    loose = Scope(labels={"Person"}, relationship_types=set(), require_labels=False)
    assert rules("MATCH (n)-->(m) RETURN m.id AS id ORDER BY id LIMIT 5", scope=loose) == set()
    assert rules("MATCH (n)-->(m:Secret) RETURN m.id AS id ORDER BY id LIMIT 5", scope=loose) == {
        "scope"
    }


def test_limit_bound_comes_from_the_scope():
    small = Scope(labels={"Person"}, relationship_types=set(), max_limit=10)
    assert rules("MATCH (n:Person) RETURN n.id ORDER BY n.id LIMIT 11", scope=small) == {
        "pagination"
    }
    assert rules("MATCH (n:Person) RETURN n.id ORDER BY n.id LIMIT $k", {"k": True}, small) == {
        "pagination"
    }


@pytest.mark.parametrize(
    "kwargs",
    [
        {"labels": "Person", "relationship_types": ()},
        {"labels": (), "relationship_types": (), "max_limit": 0},
    ],
)
def test_scope_rejects_bad_settings(kwargs):
    with pytest.raises((TypeError, ValueError)):
        Scope(**kwargs)


# --- the tool with a driver test double ------------------------------------------


class FakeRecord:
    def __init__(self, data):
        self._data = data

    def data(self):
        return dict(self._data)


class FakeTx:
    def __init__(self, log, rows):
        self.log, self.rows = log, rows

    def run(self, query, parameters):
        self.log.append(("run", query, dict(parameters)))
        return iter(FakeRecord(row) for row in self.rows)


class FakeSession:
    def __init__(self, log, rows):
        self.log, self.rows = log, rows

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.log.append(("close",))
        return False

    def execute_read(self, work, *args):
        self.log.append(("execute_read",))
        return work(FakeTx(self.log, self.rows), *args)

    def execute_write(self, work, *args):  # pragma: no cover - must never be called
        raise AssertionError("the read tool opened a write transaction")


class FakeDriver:
    """Records how sessions are opened; returns canned rows."""

    def __init__(self, rows=()):
        self.log: list[tuple] = []
        self.rows = list(rows)

    def session(self, **config):
        self.log.append(("session", config))
        return FakeSession(self.log, self.rows)


def test_tool_runs_checked_queries_in_a_read_session():
    driver = FakeDriver([{"id": "p1", "name": "Ada"}])
    tool = read_only_cypher_tool(driver.session, SCOPE, database="twin")
    query = (
        "MATCH (n:Person) WHERE n.id > $last_seen_id RETURN n.id AS id, n.name AS name ORDER "
        "BY id LIMIT 30"
    )
    rows = tool(query, {"last_seen_id": "p0"})
    assert rows == [{"id": "p1", "name": "Ada"}]
    assert driver.log == [
        ("session", {"default_access_mode": neo4j.READ_ACCESS, "database": "twin"}),
        ("execute_read",),
        ("run", query, {"last_seen_id": "p0"}),
        ("close",),
    ]


def test_tool_refuses_before_opening_a_session():
    driver = FakeDriver()
    tool = read_only_cypher_tool(driver.session, SCOPE)
    with pytest.raises(CypherRejected) as caught:
        tool("MATCH (n:Person) DETACH DELETE n")
    assert {v.rule for v in caught.value.violations} >= {"write_clause", "pagination"}
    assert "[write_clause]" in str(caught.value)
    assert driver.log == []


def test_tool_passes_values_only_as_parameters():
    driver = FakeDriver()
    tool = read_only_cypher_tool(driver.session, SCOPE)
    hostile = "x' }) DETACH DELETE n //"
    query = f"MATCH (n:Person) WHERE n.name = $name {PAGE}"
    assert tool(query, {"name": hostile}) == []
    (run_entry,) = [e for e in driver.log if e[0] == "run"]
    assert run_entry == ("run", query, {"name": hostile})


def test_tool_is_described_for_an_agent():
    tool = read_only_cypher_tool(FakeDriver().session, SCOPE)
    assert tool.__name__ == "read_neo4j_cypher"
    assert "keyset" in tool.__doc__.lower() or "last_seen_id" in tool.__doc__


# --- seed 004 trap 2: no mixing of levels in one path ------------------------------


@pytest.mark.parametrize(
    ("match", "parameters"),
    [
        ("MATCH (p:Project {level: 'L2'})-[:WORKS_ON]->(q:Project {level: 'L3'})", {}),
        ("MATCH (p:Project {level: 'L2'})-[:WORKS_ON]->(q:Project) WHERE q.level = 'L3'", {}),
        (
            "MATCH (p:Project)-[:WORKS_ON]->(q:Project) WHERE p.level = $a AND 'L3' = q.level",
            {"a": "L2"},
        ),
        (
            "MATCH (p:Project {level: $x})<-[:WORKS_ON]-(q:Project {level: $y})",
            {"x": "L2", "y": "L3"},
        ),
        # The level of p travels to the second clause's path.
        ("MATCH (p:Project {level: 'L2'}) MATCH (p)-[:WORKS_ON]->(q:Project {level: 'L3'})", {}),
    ],
)
def test_one_path_across_levels_is_refused(match: str, parameters: dict) -> None:
    found = check_read_query(f"{match} {PAGE.replace('n.', 'p.')}", SCOPE, parameters)
    (violation,) = [v for v in found if v.rule == "level_mixing"]
    assert violation.message.startswith("one path connects nodes at level L2, L3;")


@pytest.mark.parametrize(
    "match",
    [
        "MATCH (p:Project {level: 'L2'})-[:WORKS_ON]->(q:Project {level: 'L2'})",
        # Two separate patterns may each stay at their own level.
        "MATCH (p:Project {level: 'L2'}), (q:Project {level: 'L3'})",
        "MATCH (p:Project {level: 'L2'}) OPTIONAL MATCH (q:Project {level: 'L3'})",
        # A level in data is not a level pin.
        "MATCH (p:Project)-[:WORKS_ON]->(q:Project) WHERE p.note = 'level: L3' AND q.level = 'L2'",
    ],
)
def test_paths_at_one_level_pass(match: str) -> None:
    assert "level_mixing" not in rules(f"{match} {PAGE.replace('n.', 'p.')}")


def test_the_level_property_comes_from_the_scope() -> None:
    page = PAGE.replace("n.", "p.")
    query = f"MATCH (p:Project {{tier: 'a'}})-[:WORKS_ON]->(q:Project {{tier: 'b'}}) {page}"
    assert "level_mixing" not in rules(query)
    assert "level_mixing" in rules(
        query, scope=Scope(SCOPE.labels, SCOPE.relationship_types, level_property="tier")
    )
    mixed = f"MATCH (p:Project {{level: 'L2'}})-[:WORKS_ON]->(q:Project {{level: 'L3'}}) {page}"
    assert "level_mixing" not in rules(
        mixed, scope=Scope(SCOPE.labels, SCOPE.relationship_types, level_property=None)
    )


# --- seed 004 trap 5: return only id and name (a warning) ---------------------------


def test_lean_returns_give_no_warning() -> None:
    assert (
        efficiency_warnings(
            "MATCH (n:Person) RETURN DISTINCT n.id AS id, n.name, count(*) AS n, "
            "collect(n.name) AS names, $x LIMIT 1"
        )
        == ()
    )


def test_whole_nodes_and_other_properties_are_warned_about() -> None:
    warnings = efficiency_warnings(
        "MATCH (n:Person) RETURN n, n.bio AS bio, n {.id} AS m ORDER BY n.id LIMIT 5"
    )
    assert [w.split(" returns more")[0] for w in warnings] == [
        "RETURN n",
        "RETURN n.bio AS bio",
        "RETURN n {.id} AS m",
    ]
    assert efficiency_warnings("MATCH (n:Person) RETURN * LIMIT 1")[0].startswith("RETURN *")
    assert efficiency_warnings("MATCH (n:Person RETURN 'unterminated") == ()


def test_tool_logs_the_efficiency_warning_and_still_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    driver = FakeDriver([{"id": "p1", "bio": "long"}])
    tool = read_only_cypher_tool(driver.session, SCOPE)
    rows = tool("MATCH (n:Person) RETURN n.id AS id, n.bio AS bio ORDER BY id LIMIT 30")
    assert rows == [{"id": "p1", "bio": "long"}]
    assert "read_neo4j_cypher: RETURN n.bio AS bio returns more than id and name" in caplog.text


# --- the same hostile queries against a real Neo4j server ----------------------------------

#: Rules whose queries a READ transaction must refuse on its own, guard or no guard; the others
#: are reads the guard alone keeps out (and a write behind a second statement or a DROP).
_SERVER_REFUSES = {"write_clause", "in_transactions"}


def _graph_state(driver: neo4j.Driver) -> tuple[object, ...]:
    nodes, _, _ = driver.execute_query(
        "MATCH (n) RETURN labels(n) AS l, properties(n) AS p ORDER BY n.id"
    )
    constraints, _, _ = driver.execute_query("SHOW CONSTRAINTS YIELD name RETURN name")
    indexes, _, _ = driver.execute_query("SHOW INDEXES YIELD name RETURN name ORDER BY name")
    return tuple(r.data() for r in [*nodes, *constraints, *indexes])


def test_hostile_queries_against_the_server(neo4j_server) -> None:  # type: ignore[no-untyped-def]
    """Every rejected query: the guarded tool refuses it before the server sees it; run
    unguarded in a READ transaction, the server refuses each write itself; the graph is
    unchanged after all of them."""
    auth = (neo4j_server.user, neo4j_server.password)
    with neo4j.GraphDatabase.driver(neo4j_server.uri, auth=auth) as driver:
        driver.execute_query(
            "CREATE (:Person {id: 'p1', name: 'Ada', x: 0})-[:KNOWS]->(:Person {id: 'p2', "
            "name: 'Bob', x: 0}), (:Project {id: 'j1', name: 'Zed'})"
        )
        before = _graph_state(driver)
        tool = read_only_cypher_tool(driver.session, SCOPE)
        for query, rule in REJECTED:
            with pytest.raises(CypherRejected):
                tool(query, {"v": [0.0], "last_seen_id": ""})
            with driver.session(default_access_mode=neo4j.READ_ACCESS) as session:
                try:
                    session.execute_read(lambda tx, q=query: list(tx.run(q, v=[0.0])))
                except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError):
                    continue
            writes = rule in _SERVER_REFUSES or any(w in query for w in ("DELETE", "DROP"))
            assert not writes, f"the server ran a {rule} query: {query!r}"
        assert _graph_state(driver) == before
        # A read the guard lets through runs on the server and answers.
        page = f"MATCH (n:Person) WHERE n.id > $last_seen_id {PAGE}"
        assert tool(page, {"last_seen_id": ""}) == [
            {"id": "p1", "name": "Ada"},
            {"id": "p2", "name": "Bob"},
        ]
