"""The Attractor vocabulary: parsing, conditions, routing, goal gates, fan-out, manager loops."""

import asyncio
import threading
from pathlib import Path

import pydot
import pytest

from mindrian.workflow import (
    ERROR,
    Duration,
    NodeKind,
    Outcome,
    Pause,
    StepLimitExceeded,
    WorkflowError,
    arun,
    condition_holds,
    errors,
    fan_in_of,
    linear_workflow,
    next_node,
    parse,
    parse_condition,
    render,
    run,
    validate,
)

FIXTURES = Path(__file__).parent / "fixtures_dot" / "attractor"


def vocabulary():
    return parse((FIXTURES / "vocabulary.dot").read_text(encoding="utf-8"))


def graph_text(*lines, name="g"):
    return f"digraph {name} {{\n" + "\n".join(lines) + "\n}\n"


# --- parsing ------------------------------------------------------------------


def test_vocabulary_kinds_and_types():
    graph = vocabulary()
    kinds = {n.id: n.kind for n in graph.nodes}
    assert kinds == {
        "start": NodeKind.START,
        "plan": NodeKind.COGNITION,
        "fork": NodeKind.PARALLEL,
        "code": NodeKind.COGNITION,
        "tests": NodeKind.COGNITION,
        "join": NodeKind.FAN_IN,
        "lint": NodeKind.ACTION,
        "gate": NodeKind.DECISION,
        "review": NodeKind.HUMAN_GATE,
        "approve": NodeKind.HUMAN_GATE,  # type="wait.human" overrides the default box
        "steer": NodeKind.MANAGER,
        "verify": NodeKind.COGNITION,
        "custom": NodeKind.COGNITION,
        "exit": NodeKind.EXIT,
    }
    assert graph.node("approve").shape == "box"
    assert graph.node("custom").handler_type == "notify"
    assert graph.node("steer").handler_type == "stack.manager_loop"


def test_vocabulary_graph_attributes_and_string_concatenation():
    graph = vocabulary()
    assert graph.goal == "Ship a reviewed change"
    assert graph.attr("rankdir") == "LR"
    assert graph.attr("label") == "Vocabulary tour"  # the subgraph's label stays its own
    assert graph.attr("stack.child_dotfile") == "child.dot"
    assert graph.attr("default_max_retries") == "1"


def test_subgraph_scopes_defaults_and_derives_a_class():
    graph = vocabulary()
    code, plan, lint = graph.node("code"), graph.node("plan"), graph.node("lint")
    assert code.attr("thread_id") == "build" and plan.attr("thread_id") is None
    assert code.timeout == Duration(900, "s")  # the subgraph's node default
    assert plan.timeout == Duration(15, "m") and plan.timeout.seconds == 900.0
    assert lint.timeout == Duration(30, "s")  # explicit beats the default
    assert code.attr("class") == "code,build-loop"
    assert graph.node("join").attr("class") == "build-loop"


def test_typed_values_float_weights_and_qualified_keys():
    graph = vocabulary()
    weights = {e.target: e.weight for e in graph.outgoing("review")}
    assert weights == {"approve": 2.5, "code": 0.5, "plan": 0}
    assert isinstance(weights["approve"], float)
    steer = graph.node("steer")
    assert steer.attr("manager.max_cycles") == "2"
    assert graph.node("verify").goal_gate and graph.node("verify").retry_target == "code"
    assert graph.node("plan").fidelity == "summary:high"
    assert graph.node("code").max_retries == 0 and graph.node("plan").max_retries is None
    (back,) = [e for e in graph.outgoing("approve") if e.target == "plan"]
    assert back.attr("loop_restart") == "true"


def test_vocabulary_is_valid_with_one_warning_and_renders_to_a_fixed_point():
    graph = vocabulary()
    assert [(i.rule, i.node, i.severity) for i in validate(graph)] == [
        ("type_known", "custom", "warning")
    ]
    text = render(graph)
    assert "subgraph" not in text and "//" not in text  # flattened, comments gone
    assert parse(text) == graph
    assert render(parse(text)) == text


def test_start_and_exit_found_by_id_and_unknown_shapes_are_llm_steps():
    graph = parse(graph_text("start -> work -> end", "work [shape=ellipse, prompt=p]"))
    assert [n.kind for n in graph.nodes] == [NodeKind.START, NodeKind.COGNITION, NodeKind.EXIT]
    assert graph.node("work").shape == "ellipse"
    assert errors(validate(graph)) == ()
    assert 'shape="ellipse"' not in render(graph) and "shape=ellipse" in render(graph)


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("digraph g {\n  a -> b\n  c -- d\n}", 3, 5, "undirected"),
        ("digraph g {\n  a [goal_gate=\n     maybe]\n}", 3, 6, "goal_gate must be true or false"),
        ('digraph g {\n\n  x [label="unclosed]\n}', 3, 12, "unterminated string"),
        ("digraph g {\n  a -> b [weight=heavy]\n}", 2, 18, "Integer or Float"),
        ("digraph g { a }\ndigraph h { b }", 2, 1, "one graph per file"),
        ("digraph g {\n  a:port -> b\n}", 2, 4, "ports"),
    ],
)
def test_parse_errors_are_located(text, line, column, message):
    with pytest.raises(WorkflowError, match=message) as caught:
        parse(text)
    assert (caught.value.line, caught.value.column) == (line, column)


def test_validation_issues_carry_their_line():
    text = graph_text("start [shape=Mdiamond]", "exit [shape=Msquare]", "start -> exit", "lost")
    assert [(i.rule, i.severity, i.line) for i in validate(parse(text))] == [
        ("reachable", ERROR, 5),
        ("prompt_required", "warning", 5),
    ]


def test_only_what_the_specification_rejects_is_an_error():
    # No prompt, two default edges, a fan-out that never meets: warnings, not errors.
    graph = parse(
        graph_text(
            "start [shape=Mdiamond]",
            "a; b; c",
            "e1 [shape=Msquare]; e2 [shape=Msquare]",
            "start -> a; a -> b; a -> c",
            "f [shape=component]; b -> f; f -> e1; f -> e2; c -> e1",
        )
    )
    issues = validate(graph)
    assert errors(issues) == ()
    assert {i.rule for i in issues} == {"prompt_required", "clear_routes", "parallel_join"}


# --- conditions -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "outcome", "label", "context", "holds"),
    [
        ("outcome=success", "SUCCESS", None, {}, True),
        ("outcome = fail", "success", None, {}, False),
        ("context.tests_passed=true", "success", None, {"context.tests_passed": True}, True),
        ("context.tests_passed=true", "success", None, {"tests_passed": "true"}, True),
        ("context.loop_state!=exhausted", "success", None, {}, True),  # missing is ""
        ("context.loop_state=", "success", None, {}, None),  # a literal is required
        ("tool.verify.output = pass", "success", None, {"tool.verify.output": "pass"}, True),
        ("context.name=Ada", "success", None, {"name": "ada"}, False),  # exact, case-sensitive
        ('context.name="Ada Lovelace"', "success", None, {"name": "Ada Lovelace"}, True),
        ("preferred_label=Fix", "success", "[F] fix", {}, True),
        ("context.flag", "success", None, {"flag": "yes"}, True),  # bare key: set, non-empty
        ("context.flag", "success", None, {"flag": ""}, False),
        ("outcome=success && context.n=3", "success", None, {"n": 3}, True),
        ("outcome=success && ", "success", None, {}, None),
        ("outcome > 3", "success", None, {}, None),
    ],
)
def test_condition_language(condition, outcome, label, context, holds):
    if holds is None:
        with pytest.raises(WorkflowError, match="invalid condition"):
            parse_condition(condition)
    else:
        assert condition_holds(condition, outcome, label, context) is holds


# --- routing --------------------------------------------------------------------


def test_preferred_label_suggested_ids_and_weights():
    graph = vocabulary()
    assert next_node(graph, "review", Outcome(preferred_label="fix")) == "code"  # "[F] Fix"
    assert next_node(graph, "review", Outcome(preferred_label="Replan")) == "plan"  # condition
    assert next_node(graph, "review", Outcome(suggested_next_ids=("code",))) == "code"
    assert next_node(graph, "review", Outcome()) == "approve"  # weight 2.5 beats 0.5
    assert next_node(graph, "approve", "yes") == "steer"  # "Y) Yes"
    assert next_node(graph, "approve", "no") == "plan"  # "N - No"


def test_context_conditions_route():
    graph = vocabulary()
    clean = {"lint.clean": "true"}
    assert next_node(graph, "gate", "success", clean) == "review"
    assert next_node(graph, "gate", "success", {}) == "plan"
    assert next_node(graph, "gate", "fail", clean) == "code"


# --- running --------------------------------------------------------------------


class Script:
    """Handlers answering from per-node scripts and recording the prompts they saw."""

    def __init__(self, **scripts):
        self.scripts = {k: list(v) for k, v in scripts.items()}
        self.calls = []
        self.lock = threading.Lock()

    def __call__(self, step):
        with self.lock:
            self.calls.append(step.node.id)
            queue = self.scripts.get(step.node.id)
            return queue.pop(0) if queue else None


def test_goal_gate_failure_ends_the_run_failed(tmp_path):
    graph = parse(
        graph_text(
            "start [shape=Mdiamond]; exit [shape=Msquare]",
            'check [prompt="Check", goal_gate=true]',
            "start -> check -> exit",
        )
    )
    state = run(graph, {"codergen": Script(check=["fail"])}, tmp_path / "s.json")
    assert state.status == "failed"
    assert "goal gate check ended 'fail'" in state.failure_reason
    assert state.visited == ("start", "check", "exit")
    assert state.history[-1] == ("exit", "fail")


def test_goal_gate_routes_to_its_retry_target_until_satisfied():
    graph = parse(
        graph_text(
            "start [shape=Mdiamond]; exit [shape=Msquare]",
            'plan [prompt="Plan"]',
            'check [prompt="Check", goal_gate=true, retry_target=plan]',
            "start -> plan -> check -> exit",
        )
    )
    script = Script(check=["fail", "partial_success"])
    state = run(graph, {"codergen": script})
    assert state.status == "done"
    assert script.calls == ["plan", "check", "plan", "check"]


def test_an_exit_as_goal_gate_retry_target_fails_instead_of_looping():
    graph = parse(
        graph_text(
            "start [shape=Mdiamond]; exit [shape=Msquare]",
            'check [prompt="Check", goal_gate=true, retry_target=exit]',
            "start -> check -> exit",
        )
    )
    state = run(graph, {"check": lambda step: "fail"})
    assert (state.status, state.visited) == ("failed", ("start", "check", "exit"))


def test_graph_level_retry_target_and_fail_routing():
    graph = parse(
        graph_text(
            "graph [retry_target=plan]",
            "start [shape=Mdiamond]; exit [shape=Msquare]",
            'plan [prompt="Plan"]',
            'build [prompt="Build", retry_target=plan]',
            'check [prompt="Check", goal_gate=true]',
            "start -> plan -> build -> check -> exit",
        )
    )
    script = Script(build=["fail"], check=["fail", "success"])
    state = run(graph, {"codergen": script})
    # build fails -> its retry_target; check fails at the exit -> the graph's retry_target.
    assert script.calls == ["plan", "build", "plan", "build", "check", "plan", "build", "check"]
    assert state.status == "done"


def test_a_failure_without_any_route_fails_the_run():
    graph = parse(
        graph_text(
            "start [shape=Mdiamond]; exit [shape=Msquare]",
            'a [prompt="A"]',
            'start -> a; a -> exit [condition="outcome=success"]',
        )
    )
    state = run(graph, {"a": lambda step: Outcome(status="fail", failure_reason="disk full")})
    assert (state.status, state.failure_reason) == ("failed", "node a failed: disk full")


def test_retry_outcomes_respect_max_retries_and_allow_partial():
    text = graph_text(
        "graph [default_max_retries=2]",
        "start [shape=Mdiamond]; exit [shape=Msquare]",
        'a [prompt="A"]; b [prompt="B", max_retries=0, allow_partial=true]',
        "start -> a -> b -> exit",
    )
    script = Script(a=["retry", "retry", "success"], b=["retry"])
    state = run(parse(text), {"codergen": script})
    assert script.calls == ["a", "a", "a", "b"]  # a inherits default_max_retries=2
    assert state.outcomes == {"start": "success", "a": "success", "b": "partial_success",
                              "exit": "success"}  # fmt: skip


def test_context_updates_reach_later_nodes_and_conditions():
    graph = vocabulary()
    seen = {}

    def lint(step):
        return Outcome(context_updates={"lint.clean": "true"})

    def remember(step):
        seen[step.node.id] = dict(step.context)

    handlers = {
        "codergen": remember,
        "lint": lint,
        "wait.human": lambda step: "approve" if step.node.id == "review" else "yes",
        "notify": remember,
    }
    state = run(graph, handlers, base_dir=FIXTURES)
    assert state.status == "done"
    assert seen["plan"]["graph.goal"] == "Ship a reviewed change"
    assert seen["verify"]["lint.clean"] == "true"
    assert seen["verify"]["stack.child.status"] == "completed"  # the manager supervised child.dot
    assert state.visited[:7] == ("start", "plan", "fork", "code", "tests", "join", "lint")
    assert state.visited[-4:] == ("steer", "verify", "custom", "exit")
    assert seen["custom"]["parallel.fan_in.best_id"] == "code"


def test_loop_restart_starts_from_a_fresh_context():
    graph = vocabulary()
    contexts = []

    def plan(step):
        contexts.append(dict(step.context))
        return Outcome(context_updates={"visits": len(contexts)})

    answers = iter(["no", "yes"])
    handlers = {
        "codergen": lambda step: None,
        "plan": plan,
        "lint": lambda step: Outcome(context_updates={"lint.clean": "true"}),
        "wait.human": lambda step: "approve" if step.node.id == "review" else next(answers),
        "notify": lambda step: None,
    }
    assert run(graph, handlers, base_dir=FIXTURES).status == "done"
    assert [c.get("visits") for c in contexts] == [None, None]  # cleared by loop_restart


def test_fan_out_branches_run_concurrently():
    graph = linear_workflow("c", (("a", "A"), ("b", "B")), "collaborative")
    both_started = threading.Barrier(2, timeout=60)  # a bound on a hang

    def branch(step):
        both_started.wait()  # only passes when the two branches run at the same time
        return Outcome(context_updates={f"text.{step.node.id}": step.node.id.upper()})

    seen = {}
    handlers = {"a": branch, "b": branch, "synthesis": lambda step: seen.update(step.context)}
    state = run(graph, handlers)
    assert state.visited == ("start", "perspectives", "a", "b", "synthesis", "exit")
    results = seen["parallel.results"]
    assert [(r["id"], r["outcome"]) for r in results] == [("a", "success"), ("b", "success")]
    assert results[1]["context_updates"] == {"text.b": "B"}


def test_async_branches_overlap_and_history_keeps_edge_order():
    graph = linear_workflow("c", (("slow", "S"), ("fast", "F")), "collaborative")
    fast_done = asyncio.Event()
    finished = []

    async def slow(step):
        await asyncio.wait_for(fast_done.wait(), 60)  # needs fast to run meanwhile
        finished.append("slow")

    async def fast(step):
        finished.append("fast")
        fast_done.set()

    state = asyncio.run(arun(graph, {"slow": slow, "fast": fast, "synthesis": lambda s: None}))
    assert finished == ["fast", "slow"]
    assert state.visited[2:4] == ("slow", "fast")  # edge order, not finishing order


def test_fan_in_picks_the_best_branch_and_first_success_policy():
    text = graph_text(
        "start [shape=Mdiamond]; exit [shape=Msquare]",
        "fork [shape=component, join_policy=first_success]",
        'x [prompt="X"]; y [prompt="Y"]; z [prompt="Z"]',
        "join [shape=tripleoctagon]",
        "start -> fork; fork -> x; fork -> y; fork -> z",
        "x -> join; y -> join; z -> join; join -> exit",
    )
    graph = parse(text)
    assert fan_in_of(graph, "fork") == "join"
    state = run(graph, {"codergen": Script(x=["fail"], y=["partial_success"], z=["success"])})
    assert state.outcomes["fork"] == "success"
    assert state.context["parallel.fan_in.best_id"] == "z"
    failing = run(graph, {"codergen": lambda step: "fail"})
    assert failing.outcomes["fork"] == "fail" and failing.outcomes["join"] == "fail"


def test_branches_run_several_steps_to_the_fan_in():
    text = graph_text(
        "start [shape=Mdiamond]; exit [shape=Msquare]",
        "fork [shape=component]; join [shape=tripleoctagon]",
        'a1 [prompt="p"]; a2 [prompt="p"]; b1 [prompt="p"]',
        "start -> fork; fork -> a1 -> a2 -> join; fork -> b1 -> join; join -> exit",
    )
    state = run(parse(text), {"codergen": lambda step: None})
    assert state.visited == ("start", "fork", "a1", "a2", "b1", "join", "exit")


def test_a_pausing_branch_pauses_the_whole_fan_out(tmp_path):
    graph = linear_workflow("c", (("a", "A"), ("b", "B")), "collaborative")
    ready = []

    def b(step):
        if not ready:
            raise Pause()

    handlers = {"a": lambda s: None, "b": b, "synthesis": lambda s: None}
    paused = run(graph, handlers, tmp_path / "s.json")
    assert (paused.status, paused.queue) == ("paused", ("perspectives",))
    ready.append(True)
    assert run(graph, handlers, tmp_path / "s.json").status == "done"


def test_manager_loop_retries_its_child_until_it_succeeds(tmp_path):
    (tmp_path / "child.dot").write_text(
        graph_text(
            "start [shape=Mdiamond]; exit [shape=Msquare]",
            'work [prompt="w", goal_gate=true]',
            "start -> work -> exit",
            name="child",
        )
    )
    parent = parse(
        graph_text(
            "start [shape=Mdiamond]; exit [shape=Msquare]",
            'boss [shape=house, "stack.child_dotfile"="child.dot", "manager.max_cycles"=3]',
            "start -> boss -> exit",
        )
    )
    script = Script(work=["fail", "success"])
    state = run(parent, {"codergen": script}, base_dir=tmp_path)
    assert state.status == "done" and script.calls == ["work", "work"]
    assert state.context["stack.child.cycles"] == 2
    always = run(parent, {"codergen": lambda step: "fail"}, base_dir=tmp_path)
    assert always.outcomes["boss"] == "fail"


def test_handlers_resolve_by_id_then_type_then_shape():
    graph = vocabulary()
    used = []
    handlers = {
        "codergen": lambda s: used.append(("codergen", s.node.id)),
        "verify": lambda s: used.append(("id", s.node.id)),
        "notify": lambda s: used.append(("notify", s.node.id)),
        "lint": lambda s: Outcome(context_updates={"lint.clean": "true"}),
        "wait.human": lambda s: "approve" if s.node.id == "review" else "yes",
    }
    run(graph, handlers, base_dir=FIXTURES)
    assert ("id", "verify") in used and ("notify", "custom") in used
    assert ("codergen", "plan") in used and ("codergen", "verify") not in used


def test_a_custom_type_without_handler_is_refused_before_running():
    with pytest.raises(WorkflowError, match="no handler for node"):
        run(vocabulary(), {"codergen": lambda s: None, "wait.human": lambda s: None})


def test_timeout_bounds_a_handler():
    graph = parse(
        graph_text(
            "start [shape=Mdiamond]; exit [shape=Msquare]",
            'a [prompt="p", timeout=10ms]',
            "start -> a -> exit",
        )
    )

    async def slow(step):
        await asyncio.sleep(5)

    with pytest.raises(WorkflowError, match="timed out after 10ms"):
        run(graph, {"a": slow})


def test_step_limit_applies_inside_branches():
    text = graph_text(
        "start [shape=Mdiamond]; exit [shape=Msquare]",
        "fork [shape=component]; join [shape=tripleoctagon]",
        'a [prompt="p"]; b [prompt="p"]',
        "start -> fork; fork -> a; fork -> b; a -> a; b -> join; join -> exit",
    )
    with pytest.raises(StepLimitExceeded):
        run(parse(text), {"codergen": lambda step: None}, max_steps=20)


def test_run_inside_an_event_loop_asks_for_arun():
    graph = linear_workflow("p", (("a", "A"),), "pipeline")

    async def inside():
        return run(graph, {"a": lambda s: None})

    with pytest.raises(WorkflowError, match="await arun"):
        asyncio.run(inside())


@pytest.mark.parametrize(
    ("extra", "rule", "node"),
    [
        ('a [fidelity="summary:huge"]', "fidelity_valid", "a"),
        ("a [retry_target=nowhere]", "retry_target_exists", "a"),
        ("graph [fallback_retry_target=nowhere]", "retry_target_exists", None),
        ("a [goal_gate=true]", "goal_gate_has_retry", "a"),
        ('a [type="my.handler"]', "type_known", "a"),
    ],
)
def test_specification_warnings(extra, rule, node):
    text = graph_text("start [shape=Mdiamond]; exit [shape=Msquare]", 'a [prompt="p"]', extra)
    text = text.replace("}\n", "start -> a -> exit\n}\n")
    (issue,) = validate(parse(text))
    assert (issue.rule, issue.node, issue.severity) == (rule, node, "warning")


def _unquote(value):
    text = str(value)
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return text


@pytest.mark.parametrize(
    "graph",
    [
        vocabulary(),
        linear_workflow("guided_demo", (("a", 'say "hi" \\ now'), ("b", "B")), "guided"),
        linear_workflow("collab_demo", (("a", "A"), ("b", "B")), "collaborative"),
    ],
    ids=["vocabulary", "guided", "collaborative"],
)
def test_rendered_dot_reads_the_same_in_a_reference_dot_parser(graph):
    (reference,) = pydot.graph_from_dot_data(render(graph))
    nodes = {n.get_name(): n.get_attributes() for n in reference.get_nodes()}
    nodes.pop("graph", None)
    assert list(nodes) == [n.id for n in graph.nodes]
    for node in graph.nodes:
        attributes = {_unquote(k): _unquote(v) for k, v in nodes[node.id].items()}
        assert attributes.get("prompt") == node.prompt
        assert attributes["shape"] == (node.shape or node.kind.shape)
    edges = [(e.get_source(), e.get_destination()) for e in reference.get_edges()]
    assert edges == [e.key for e in graph.edges]
