"""``mindrian workflow validate|render|run``, in-process, and the generated graphs' every edge."""

import itertools
import re
from pathlib import Path

import pytest

from builder.cli import main
from builder.pipeline.codes import CODES
from mindrian.workflow import (
    NodeKind,
    linear_workflow,
    parse,
    render,
    run,
)
from mindrian.workflow.command import PARSE_CODE, READ_CODE, RULE_CODES

ROOT = Path(__file__).resolve().parents[3]
VOCABULARY = (
    ROOT / "tests" / "mindrian" / "workflow" / "fixtures_dot" / "attractor" / "vocabulary.dot"
)
GENERATED = sorted((ROOT / "generated").glob("*/workflow.dot"))
STEPS = (("frame", "Frame it"), ("explore", "Explore"), ("decide", "Decide"))


def mindrian(capsys, *args):
    capsys.readouterr()
    code = main(["workflow", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(tmp_path, text, name="flow.dot"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GATED = """digraph gated {
  start [shape=Mdiamond]
  build [prompt="Build it", goal_gate=true]
  review [shape=hexagon, label="Review"]
  exit [shape=Msquare]
  start -> build -> review
  review -> exit [label="[A] Approve"]
  review -> build [label="[R] Rework"]
}
"""


def test_validate_reports_warnings_with_their_line_and_passes(capsys):
    code, _, err = mindrian(capsys, "validate", VOCABULARY)
    assert code == 0
    assert f"{VOCABULARY.as_posix()}:31: warning[L113]: type_known: node custom" in err
    assert err.rstrip().endswith(f"{VOCABULARY.as_posix()}: ok")
    code, _, err = mindrian(capsys, "validate", "--quiet", VOCABULARY)
    assert (code, err) == (0, "")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("digraph g {\n  a -> b\n  b -- c\n}\n", ":3:5: error[L002]: undirected edges"),
        (
            "digraph g {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n"
            "  start -> exit\n  lost [prompt=p]\n}\n",
            ":5: error[L105]: reachable: node lost cannot be reached from the start",
        ),
        ("digraph g {\n  a [timeout=\n 5x]\n}\n", ":3:2: error[L002]: node a: timeout: '5x'"),
    ],
)
def test_validate_locates_errors_and_exits_1(capsys, tmp_path, text, expected):
    path = write(tmp_path, text)
    code, _, err = mindrian(capsys, "validate", path)
    assert code == 1
    assert f"{path.as_posix()}{expected}" in err


def test_validate_an_unreadable_file(capsys, tmp_path):
    code, _, err = mindrian(capsys, "validate", tmp_path / "missing.dot")
    assert code == 1 and "error[L001]: cannot read the file" in err


def test_validate_help_explains_the_registered_workflow_codes(capsys):
    code, out, _ = mindrian(capsys, "validate", "--help")
    named = set(re.findall(r"\bL\d{3}\b", out))
    assert code == 0 and {READ_CODE, PARSE_CODE, RULE_CODES["reachable"]} <= named
    assert {CODES[c].stage for c in named} == {"workflow"}
    assert f"error[{RULE_CODES['reachable']}]: reachable:" in " ".join(out.split())


def test_render_prints_canonical_dot(capsys):
    code, out, _ = mindrian(capsys, "render", VOCABULARY)
    assert code == 0
    assert out == render(parse(VOCABULARY.read_text(encoding="utf-8")))


def test_run_reaches_the_exit(capsys, tmp_path):
    code, out, _ = mindrian(capsys, "run", write(tmp_path, GATED))
    assert code == 0
    assert "review: success (dry run of wait.human)" in out  # the first choice: Approve
    assert out.rstrip().endswith("workflow gated done in 4 steps: start -> build -> review -> exit")


def test_run_follows_scripted_outcomes_and_a_goal_gate_failure_exits_1(capsys, tmp_path):
    path = write(tmp_path, GATED)
    args = ("--outcome", "review=rework", "--outcome", "build=success", "--outcome", "build=fail")
    code, out, err = mindrian(capsys, "run", path, *args)
    assert code == 1
    assert "review: rework (scripted)" in out
    assert "workflow gated failed: goal gate build ended 'fail'" in err
    assert "path: start -> build -> review -> build -> review -> exit" in err


def test_run_keeps_its_state_file(capsys, tmp_path):
    path, state = write(tmp_path, GATED), tmp_path / "state.json"
    assert mindrian(capsys, "run", path, "--state", state)[0] == 0
    assert '"status": "done"' in state.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--outcome", "ghost=fail"), "--outcome names no node of gated: ghost"),
        (("--outcome", "review"), "write NODE=OUTCOME"),
        (("--max-steps", "2"), "error[L003]: workflow gated stopped after 2 steps"),
    ],
)
def test_run_problems_exit_1(capsys, tmp_path, args, message):
    code, _, err = mindrian(capsys, "run", write(tmp_path, GATED), *args)
    assert code == 1 and message in err


REVIEWED = """digraph reviewed {
  graph [goal="a launch plan"]
  start [shape=Mdiamond]
  plan [prompt="Plan $goal"]
  review [prompt="Answer APPROVE or REWORK"]
  exit [shape=Msquare]
  start -> plan -> review
  review -> exit [label="APPROVE"]
  review -> plan [label="REWORK"]
}
"""


def test_run_with_a_scripted_model_lets_it_choose_edges(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("MINDRIAN_MODEL", raising=False)
    script = write(tmp_path, "answers: [plan one, rework, plan two, Approve]\n", "script.yaml")
    code, out, _ = mindrian(
        capsys, "run", write(tmp_path, REVIEWED), "--model", f"scripted:{script}"
    )
    assert code == 0
    assert "review: 'rework' -> REWORK" in out
    assert out.rstrip().endswith(
        "done in 6 steps: start -> plan -> review -> plan -> review -> exit"
    )


def test_run_records_the_model_and_the_recording_replays_the_run(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("MINDRIAN_MODEL", raising=False)
    script = write(tmp_path, "answers: [plan one, rework, plan two, Approve]\n", "script.yaml")
    flow = write(tmp_path, REVIEWED)
    recorded = tmp_path / "recorded.yaml"
    code, out, _ = mindrian(
        capsys, "run", flow, "--model", f"scripted:{script}", "--record", recorded
    )
    assert code == 0
    assert recorded.read_text(encoding="utf-8").splitlines()[1:] == [
        "agents:",
        "  reviewed:",
        "  - text: plan one",
        "  - text: rework",
        "  - text: plan two",
        "  - text: Approve",
    ]
    again = mindrian(capsys, "run", flow, "--model", f"scripted:{recorded}")
    assert again == (0, out, "")


def test_run_with_a_model_that_runs_out_of_answers_exits_1(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("MINDRIAN_MODEL", raising=False)
    script = write(tmp_path, "answers: [plan one]\n", "script.yaml")
    code, _, err = mindrian(
        capsys, "run", write(tmp_path, REVIEWED), "--model", f"scripted:{script}"
    )
    assert code == 1
    assert "error[L003]: workflow reviewed step review run ended with status" in err


# --- every edge of a generated graph is executable ----------------------------


def _graphs():
    built = [linear_workflow(f"{kind}_demo", STEPS, kind) for kind in ("pipeline", "guided")]
    built.append(linear_workflow("collab_demo", STEPS, "collaborative"))
    from_disk = [parse(path.read_text(encoding="utf-8")) for path in GENERATED]
    return [pytest.param(g, id=g.name) for g in (*built, *from_disk)]


def _taken(graph, visited):
    """Edges a run took: consecutive nodes, and a fan-out's edges to its branches and join."""
    pairs = set(itertools.pairwise(visited))
    taken = {e.key for e in graph.edges if e.key in pairs}
    for fork in graph.of_kind(NodeKind.PARALLEL):
        if fork.id in visited:
            for edge in graph.outgoing(fork.id):
                after = graph.outgoing(edge.target)
                taken |= {edge.key, *(e.key for e in after if e.target in visited)}
    return taken


@pytest.mark.parametrize("graph", _graphs())
def test_every_edge_of_a_generated_graph_is_executable(graph):
    assert GENERATED, "generated/ has no workflow.dot"
    gates = graph.of_kind(NodeKind.HUMAN_GATE)
    covered = set()
    choices = [(gate.id, e.label) for gate in gates for e in graph.outgoing(gate.id)] or [
        (None, None)
    ]
    for gate_id, label in choices:
        asked = {}

        def answer(step, gate_id=gate_id, label=label, asked=asked):
            if step.node.kind is not NodeKind.HUMAN_GATE:
                return None
            asked[step.node.id] = asked.get(step.node.id, 0) + 1
            first_time = asked[step.node.id] == 1
            return label if step.node.id == gate_id and first_time else "continue"

        state = run(graph, {"codergen": answer, "wait.human": answer})
        assert state.status == "done"
        covered |= _taken(graph, state.visited)
    assert covered == {e.key for e in graph.edges}
