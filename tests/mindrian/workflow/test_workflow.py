"""Thought graphs: DOT parsing, validation, canonical rendering, building and running."""

import json
from pathlib import Path

import pytest
from golden_files import Golden
from hypothesis import given, settings
from hypothesis import strategies as st

from mindrian.workflow import (
    Edge,
    Node,
    NodeKind,
    Pause,
    RoutingError,
    StepLimitExceeded,
    ThoughtGraph,
    WorkflowError,
    linear_workflow,
    next_node,
    parse,
    render,
    run,
    validate,
)

FIXTURES = Path(__file__).parent / "fixtures_dot"
STEPS = (
    ("frame", "Frame the problem: $goal"),
    ("explore", 'Explore options; quote "as is" \\ keep'),
    ("decide", "Pick one\nand say why"),
)


def fixture(name: str) -> ThoughtGraph:
    return parse((FIXTURES / f"{name}.dot").read_text(encoding="utf-8"))


def graph_text(*lines: str, name: str = "g") -> str:
    return f"digraph {name} {{\n" + "\n".join(lines) + "\n}\n"


#: A valid workflow the validation table breaks one rule at a time.
BASE = (
    "start [shape=Mdiamond];",
    'work [shape=box, prompt="Do it"];',
    "check [shape=diamond];",
    "exit [shape=Msquare];",
    "start -> work -> check;",
    'check -> exit [condition="outcome=pass"];',
    'check -> work [condition="outcome=fail"];',
)


class Recorder:
    """Handlers that log calls and answer from per-node scripts of outcomes."""

    def __init__(self, scripts=None, fail_at=None):
        self.calls: list[str] = []
        self.scripts = {k: list(v) for k, v in (scripts or {}).items()}
        self.fail_at = fail_at  # (node, call number) that raises once

    def handler(self, node_id):
        def handle(context):
            self.calls.append(node_id)
            if self.fail_at == (node_id, self.calls.count(node_id)):
                self.fail_at = None
                raise RuntimeError(f"{node_id} crashed")
            script = self.scripts.get(node_id)
            return script.pop(0) if script else None

        return handle

    def handlers(self, graph, only=None):
        needed = [
            n.id
            for n in graph.nodes
            if n.kind in (NodeKind.COGNITION, NodeKind.ACTION, NodeKind.HUMAN_GATE)
        ]
        return {node_id: self.handler(node_id) for node_id in (only or needed)}


# --- parsing ----------------------------------------------------------------


def test_linear_fixture_parses_with_defaults_and_chains():
    graph = fixture("linear")
    assert graph.name == "linear"
    assert graph.goal == "Ship the release notes"
    assert [(n.id, n.kind) for n in graph.nodes] == [
        ("start", NodeKind.START),
        ("plan", NodeKind.COGNITION),
        ("act", NodeKind.COGNITION),
        ("verify", NodeKind.COGNITION),
        ("exit", NodeKind.EXIT),
    ]
    assert [e.key for e in graph.edges] == [
        ("start", "plan"),
        ("plan", "act"),
        ("act", "verify"),
        ("verify", "exit"),
    ]
    assert graph.expand(graph.node("plan").prompt) == "Outline how to reach: Ship the release notes"


def test_tote_fixture_reads_typed_attributes_and_conditions():
    graph = fixture("tote")
    assert graph.node("test").kind is NodeKind.DECISION
    assert graph.node("run_tests").kind is NodeKind.ACTION
    assert graph.node("operate").max_retries == 2
    assert [(e.target, e.condition, e.label) for e in graph.outgoing("test")] == [
        ("exit", "outcome=pass", "pass"),
        ("operate", "outcome=fail", "fail"),
    ]


def test_review_gate_fixture():
    graph = fixture("review_gate")
    code = graph.node("code")
    assert (code.goal_gate, code.fidelity) == (True, "compact")
    assert graph.node("review").kind is NodeKind.HUMAN_GATE
    assert [e.label for e in graph.outgoing("review")] == ["Approve", "Reject"]


@pytest.mark.parametrize(
    ("shape", "kind"),
    [(k.shape, k) for k in NodeKind] + [("BOX", NodeKind.COGNITION), (None, NodeKind.COGNITION)],
)
def test_shapes_map_to_kinds(shape, kind):
    attrs = f" [shape={shape}]" if shape else ""
    graph = parse(graph_text(f"n{attrs};"))
    assert graph.node("n").kind is kind


def test_node_defaults_apply_only_to_later_nodes():
    graph = parse(graph_text("a;", "node [shape=hexagon];", "b;", "a -> c;"))
    assert [(n.id, n.kind) for n in graph.nodes] == [
        ("a", NodeKind.COGNITION),
        ("b", NodeKind.HUMAN_GATE),
        ("c", NodeKind.HUMAN_GATE),
    ]


def test_edge_defaults_and_quoted_values():
    graph = parse(
        graph_text(
            "edge [weight=3];",
            r'"a" -> b [label="say \"hi\"\nthen \\ stop \l"];',
        )
    )
    (edge,) = graph.edges
    assert edge.weight == 3
    assert edge.label == 'say "hi"\nthen \\ stop \\l'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("graph g { a -> b }", "must be a digraph"),
        ("digraph g { a -- b }", "undirected edges"),
        ("strict digraph g { a -> b }", "strict"),
        ("digraph g { a -> {b c} }", "edges to subgraphs"),
        ("digraph g { a } digraph h { b }", "one graph per file"),
        ("digraph g { a -> ", "expected a node id"),
        ("digraph g { a ", "not closed"),
        ("", "not valid DOT"),
        ('digraph g { "a b" }', "not allowed"),
        ('digraph g { a [label="open }', "unterminated string"),
        ("digraph g { a [label=<<b>x</b>>] }", "HTML labels"),
        ("digraph g { a:n -> b }", "ports"),
        ('digraph g { "node" }', "not allowed"),
        ('digraph "my graph" { a }', "graph name"),
        ("digraph { a }", "graph name"),
        ("digraph g { a [goal_gate=yes] }", "goal_gate must be true or false"),
        ("digraph g { a [max_retries=two] }", "max_retries must be an integer"),
        ("digraph g { a [max_retries=-1] }", "max_retries must be >= 0"),
        ("digraph g { a [timeout=soon] }", "timeout: 'soon' is not a duration"),
        ("digraph g { a [timeout=15] }", "is not a duration"),
        ("digraph g { a -> b [weight=fast] }", "weight must be an Integer or Float"),
        ("digraph g { a -> b [loop_restart=maybe] }", "loop_restart must be true or false"),
        ("digraph g { default_max_retries=many }", "default_max_retries must be an integer"),
    ],
)
def test_parse_errors(text, message):
    with pytest.raises(WorkflowError, match=message):
        parse(text)


def test_model_rejects_inconsistent_graphs():
    node = Node("a", NodeKind.COGNITION)
    with pytest.raises(WorkflowError, match="defined twice"):
        ThoughtGraph("g", (node, node))
    with pytest.raises(WorkflowError, match="unknown node b"):
        ThoughtGraph("g", (node,), (Edge("a", "b"),))
    with pytest.raises(WorkflowError, match="extra attribute"):
        Node("a", NodeKind.COGNITION, extra=(("prompt", "x"),))


# --- rendering ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["linear", "tote", "review_gate"])
def test_render_is_a_fixed_point(name):
    graph = fixture(name)
    text = render(graph)
    assert parse(text) == graph
    assert render(parse(text)) == text


def test_render_is_canonical():
    text = render(fixture("review_gate"))
    assert text.endswith("}\n") and "\r" not in text
    assert (
        '  code [fidelity="compact", goal_gate=true, prompt="Write the change", shape=box];' in text
    )
    assert '  review -> exit [label="Approve"];' in text


_values = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=30)


# The suite-wide Hypothesis profile (tests/conftest.py) sets no deadline.
@settings(max_examples=150)
@given(prompt=_values, label=_values, goal=_values)
def test_any_text_survives_render_and_parse(prompt, label, goal):
    graph = ThoughtGraph(
        "g",
        (
            Node("a", NodeKind.COGNITION, prompt=prompt, extra=(("note", label),)),
            Node("b", NodeKind.EXIT),
        ),
        (Edge("a", "b", label=label),),
        goal=goal,
    )
    text = render(graph)
    assert parse(text) == graph
    assert render(parse(text)) == text


@pytest.mark.parametrize("kind", ["pipeline", "guided", "collaborative"])
def test_linear_workflow_matches_golden_and_is_valid(kind: str, golden: Golden) -> None:
    graph = linear_workflow(f"{kind}_demo", STEPS, kind, goal="Choose a venue")
    text = render(graph)
    golden.check(FIXTURES / "golden" / f"{kind}.dot", text)
    assert validate(graph) == ()
    assert parse(text) == graph


@pytest.mark.parametrize(
    ("steps", "kind", "message"),
    [
        ((), "pipeline", "at least one step"),
        ((("only", "p"),), "collaborative", "at least two perspectives"),
        ((("a", "p"),), "swarm", "unknown workflow kind"),
        ((("start", "p"),), "pipeline", "defined twice"),
        ((("bad id", "p"),), "pipeline", "invalid node id"),
    ],
)
def test_linear_workflow_errors(steps, kind, message):
    with pytest.raises(WorkflowError, match=message):
        linear_workflow("w", steps, kind)


# --- validation ---------------------------------------------------------------


def test_seed_patterns_are_valid_including_their_loops():
    # Seed 003 §1.1 says "DAG", but its own TOTE and review-gate patterns loop.
    for name in ("linear", "tote"):
        assert validate(fixture(name)) == (), name
    (warning,) = validate(fixture("review_gate"))  # code is a goal gate without retry_target
    assert (warning.rule, warning.node, warning.severity) == (
        "goal_gate_has_retry",
        "code",
        "warning",
    )


def test_base_graph_is_valid():
    assert validate(parse(graph_text(*BASE))) == ()


def _replace(lines, old, *new):
    index = lines.index(old)
    return (*lines[:index], *new, *lines[index + 1 :])


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            _replace(BASE, "start [shape=Mdiamond];", 'start [shape=box, prompt="p"];'),
            [("single_start", None, None)],
        ),
        (
            (*BASE, "again [shape=Mdiamond];", "again -> work;"),
            [("single_start", "again", None)],
        ),
        (
            _replace(BASE, "exit [shape=Msquare];", 'exit [shape=box, prompt="p"];'),
            None,
        ),
        (
            (*BASE, "work -> start;"),
            [
                ("start_has_no_incoming", "start", ("work", "start")),
                (
                    "clear_routes",
                    "work",
                    ("work", "start"),
                ),  # work now has two default edges
            ],
        ),
        (
            (*BASE, "exit -> work;"),
            [("exit_has_no_outgoing", "exit", ("exit", "work"))],
        ),
        (
            (*BASE, 'orphan [shape=box, prompt="p"];', "orphan -> exit;"),
            [("reachable", "orphan", None)],
        ),
        (
            (
                *BASE,
                'trap [shape=box, prompt="p"];',
                'check -> trap [condition="outcome=odd"];',
                "trap -> trap;",
            ),
            [("reaches_exit", "trap", None)],
        ),
        (
            _replace(BASE, 'work [shape=box, prompt="Do it"];', "work [shape=box];"),
            [("prompt_required", "work", None)],
        ),
        (
            _replace(BASE, 'work [shape=box, prompt="Do it"];', 'work [prompt="  "];'),
            [("prompt_required", "work", None)],
        ),
        (
            _replace(
                BASE,
                'check -> work [condition="outcome=fail"];',
                'check -> work [condition="status is bad"];',
            ),
            [("valid_condition", "check", ("check", "work"))],
        ),
        (
            _replace(BASE, 'check -> work [condition="outcome=fail"];'),
            [("decision_paths", "check", None)],
        ),
        (
            _replace(
                BASE,
                'check -> work [condition="outcome=fail"];',
                'check -> work [condition="outcome = PASS"];',
            ),
            [("clear_routes", "check", ("check", "work"))],
        ),
        (
            (
                *_replace(BASE, 'check -> exit [condition="outcome=pass"];', "check -> exit;")[:-1],
                "check -> work;",
            ),
            [
                ("clear_routes", "check", ("check", "work")),
                ("clear_routes", "check", None),
            ],
        ),
    ],
)
def test_validation_rules(lines, expected):
    issues = validate(parse(graph_text(*lines)))
    if expected is None:  # a graph without exit breaks several rules; has_exit must be among them
        assert "has_exit" in {i.rule for i in issues}
        return
    assert [(i.rule, i.node, i.edge) for i in issues] == expected
    assert all(i.message for i in issues)


def test_human_gate_with_duplicate_labels_is_ambiguous():
    # Seed 003 only names diamonds as decision points; a gate with two "Approve" edges
    # is just as unclear.
    graph = fixture("review_gate")
    text = render(graph).replace('label="Reject"', 'label="approve"')
    (issue,) = [i for i in validate(parse(text)) if i.rule == "clear_routes"]
    assert (issue.rule, issue.node, issue.edge) == (
        "clear_routes",
        "review",
        ("review", "fix"),
    )
    assert "can never be taken" in issue.message


def test_parallel_branches_should_meet_again():
    graph = linear_workflow("c", (("a", "A"), ("b", "B")), "collaborative")
    met_at_exit = render(graph).replace("  b -> synthesis;", "  b -> exit;")
    assert validate(parse(met_at_exit)) == ()  # they meet at the exit
    apart = met_at_exit.replace("  b -> exit;", "  b -> other;").replace(
        "}\n", "  other [shape=Msquare];\n}\n"
    )
    issues = validate(parse(apart))
    assert [(i.rule, i.node, i.severity) for i in issues] == [
        ("parallel_join", "perspectives", "warning")
    ]


# --- routing ----------------------------------------------------------------

ROUTES = graph_text(
    "start [shape=Mdiamond];",
    "n [shape=diamond];",
    *(f'{t} [shape=box, prompt="p"];' for t in ("a", "b", "c", "d", "e")),
    "exit [shape=Msquare];",
    "start -> n;",
    'n -> a [condition="outcome=go"];',
    'n -> b [condition="outcome=go", weight=5];',
    'n -> c [condition="outcome!=go && outcome!=stop", label="other"];',
    'n -> d [label="stop"];',
    'n -> e [label="Stop", weight=1];',
    *(f"{t} -> exit;" for t in ("a", "b", "c", "d", "e")),
)


@pytest.mark.parametrize(
    ("outcome", "target"),
    [
        ("go", "b"),  # two conditions match: higher weight wins
        ("GO ", "b"),  # outcomes compare trimmed and lower-case
        ("anything", "c"),  # negated condition
        ("stop", "d"),  # the first edge whose label matches (Attractor §3.3 step 2)
    ],
)
def test_routing_table(outcome, target):
    assert next_node(parse(ROUTES), "n", outcome) == target


def test_routing_ties_go_to_the_lexically_first_target():
    graph = parse(
        graph_text(
            "start [shape=Mdiamond];",
            'x [prompt="p"]; y [prompt="p"]; z [prompt="p"];',
            'start -> y [condition="outcome=success"];',
            'start -> x [condition="outcome=success"];',
            "start -> z;",
        )
    )
    assert next_node(graph, "start", "success") == "x"  # seed 003 §3.1 step 5: node id
    assert next_node(graph, "start", "other") == "z"


def test_lone_labelled_edge_is_taken_whatever_the_outcome():
    graph = parse(graph_text('a -> b [label="when ready"];'))
    assert next_node(graph, "a", "success") == "b"


def test_unmatched_label_falls_back_to_weight_then_id():
    # Attractor §3.3 step 4: among unconditional edges, highest weight, then target id.
    assert next_node(fixture("review_gate"), "review", "maybe") == "exit"


def test_no_matching_edge_is_a_routing_error():
    graph = fixture("tote")  # every edge out of test has a condition
    with pytest.raises(RoutingError, match="no edge leaves test for outcome 'maybe'"):
        next_node(graph, "test", "maybe")


# --- running ----------------------------------------------------------------


def test_linear_run_visits_steps_in_order(tmp_path):
    graph = fixture("linear")
    prompts = []
    handlers = {n: (lambda ctx: prompts.append(ctx.prompt)) for n in ("plan", "act", "verify")}
    state = run(graph, handlers, tmp_path / "state.json")
    assert state.status == "done"
    assert state.visited == ("start", "plan", "act", "verify", "exit")
    assert prompts[0] == "Outline how to reach: Ship the release notes"


def test_tote_loops_until_the_test_passes():
    graph = fixture("tote")
    rec = Recorder({"run_tests": ["fail", "fail", "pass"]})
    state = run(graph, rec.handlers(graph))
    assert rec.calls == ["run_tests", "operate", "run_tests", "operate", "run_tests"]
    assert state.visited[-3:] == ("run_tests", "test", "exit")
    assert state.outcomes["test"] == "pass"  # the decision routed on the previous outcome


def test_review_gate_rejects_then_approves():
    graph = fixture("review_gate")
    rec = Recorder({"review": ["Reject", "approve"]})
    state = run(graph, rec.handlers(graph))
    assert rec.calls == ["code", "review", "fix", "code", "review"]
    assert state.status == "done"


def test_collaborative_runs_branches_in_edge_order_then_synthesis():
    graph = linear_workflow("c", STEPS, "collaborative")
    rec = Recorder()
    state = run(graph, rec.handlers(graph))
    assert rec.calls == ["frame", "explore", "decide", "synthesis"]
    assert state.visited == (
        "start",
        "perspectives",
        "frame",
        "explore",
        "decide",
        "synthesis",
        "exit",
    )


def test_guided_back_and_redo():
    graph = linear_workflow("g", STEPS[:2], "guided")
    rec = Recorder(
        {
            "frame_review": ["continue", "continue"],
            "explore_review": ["back", "redo", "continue"],
        }
    )
    run(graph, rec.handlers(graph))
    assert rec.calls == [
        "frame", "frame_review", "explore", "explore_review",
        "frame", "frame_review", "explore", "explore_review",
        "explore", "explore_review",
    ]  # fmt: skip


def test_loop_without_exit_outcome_hits_the_step_limit(tmp_path):
    graph = fixture("tote")
    rec = Recorder({"run_tests": ["fail"] * 100})
    path = tmp_path / "state.json"
    with pytest.raises(StepLimitExceeded) as caught:
        run(graph, rec.handlers(graph), path, max_steps=10)
    assert len(caught.value.state.history) == 10
    saved = json.loads(path.read_text())
    assert len(saved["history"]) == 10 and saved["status"] == "running"


def test_resume_after_a_crash_continues_at_the_failed_node(tmp_path):
    graph = fixture("linear")
    path = tmp_path / "run" / "state.json"
    rec = Recorder(fail_at=("act", 1))
    with pytest.raises(RuntimeError, match="act crashed"):
        run(graph, rec.handlers(graph), path)
    saved = json.loads(path.read_text())
    assert saved["queue"] == ["act"]
    assert [n for n, _ in saved["history"]] == ["start", "plan"]
    state = run(graph, rec.handlers(graph), path)
    assert rec.calls == ["plan", "act", "act", "verify"]  # plan is not repeated
    assert state.visited == ("start", "plan", "act", "verify", "exit")


def test_finished_state_is_not_run_again(tmp_path):
    graph = fixture("linear")
    path = tmp_path / "state.json"
    rec = Recorder()
    first = run(graph, rec.handlers(graph), path)
    second = run(graph, rec.handlers(graph), path)
    assert first == second and rec.calls == ["plan", "act", "verify"]


def test_retries_absorb_transient_failures():
    graph = fixture("tote")  # operate has max_retries=2
    rec = Recorder({"run_tests": ["fail", "pass"]}, fail_at=("operate", 1))
    state = run(graph, rec.handlers(graph))
    assert rec.calls == ["run_tests", "operate", "operate", "run_tests"]
    assert state.status == "done"


def test_pause_stops_and_the_next_call_resumes(tmp_path):
    graph = fixture("review_gate")
    path = tmp_path / "state.json"
    answers = []

    def review(ctx):
        if not answers:
            raise Pause()
        return answers.pop()

    handlers = {"code": lambda ctx: None, "fix": lambda ctx: None, "review": review}
    paused = run(graph, handlers, path)
    assert (paused.status, paused.queue) == ("paused", ("review",))
    assert json.loads(path.read_text())["status"] == "paused"
    answers.append("approve")
    done = run(graph, handlers, path)
    assert done.status == "done" and done.visited == ("start", "code", "review", "exit")


def test_state_file_is_deterministic_json(tmp_path):
    graph = fixture("linear")
    texts = []
    for attempt in ("one", "two"):
        path = tmp_path / attempt / "state.json"
        run(graph, Recorder().handlers(graph), path)
        texts.append(path.read_text())
    assert texts[0] == texts[1]
    data = json.loads(texts[0])
    assert list(data) == sorted(data)
    assert data["history"][-1] == ["exit", "success"]
    assert not list((tmp_path / "one").glob("*.tmp"))


def test_state_of_another_graph_is_refused(tmp_path):
    path = tmp_path / "state.json"
    graph = fixture("linear")
    run(graph, Recorder().handlers(graph), path)
    changed = parse(render(graph).replace("Carry out", "Perform"))
    with pytest.raises(WorkflowError, match="different workflow"):
        run(changed, Recorder().handlers(changed), path)


@pytest.mark.parametrize(
    ("handlers", "message"),
    [
        ({"plan": None, "act": None}, "no handler for node"),
        ({"plan": None, "act": None, "verify": None, "ghost": None}, "unknown node"),
    ],
)
def test_run_checks_handlers_first(handlers, message):
    with pytest.raises(WorkflowError, match=message):
        run(fixture("linear"), handlers)


def test_invalid_graph_is_not_run():
    graph = parse(graph_text("start [shape=Mdiamond];", 'a [prompt="p"];', "start -> a;"))
    with pytest.raises(WorkflowError, match="has_exit"):
        run(graph, {"a": lambda ctx: None})
