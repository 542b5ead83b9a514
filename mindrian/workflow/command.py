"""What ``mindrian workflow validate|render|run FILE.dot`` does, as library functions.

:func:`check_file` reads and validates a file into located findings
(``PATH:LINE:COL: error[L002]: ...``), :func:`dry_run_handlers` gives every node
that needs one a handler that does no work (no model call, no shell command)
and answers from a script of outcomes, so any pipeline can be walked end to end.
:func:`model_handlers` puts a model behind the LLM steps instead (``--model``,
e.g. ``scripted:PATH``), the other nodes keeping their dry-run handlers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from mindrian.workflow.dot import parse
from mindrian.workflow.engine import Handler, Outcome, StepContext
from mindrian.workflow.model import NodeKind, ThoughtGraph, WorkflowError, normalise_label
from mindrian.workflow.validate import ERROR, validate

if TYPE_CHECKING:
    from agno.models.base import Model

__all__ = [
    "PARSE_CODE",
    "READ_CODE",
    "RULE_CODES",
    "RUN_CODE",
    "Finding",
    "check_file",
    "dry_run_handlers",
    "model_handlers",
    "parse_outcome_script",
]

#: Code of a file that cannot be read, and of text that is not a thought graph. Workflow codes
#: have the letter L to themselves and are registered in builder/pipeline/codes.py, which
#: tests/builder/pipeline/test_codes.py checks against the literals here.
READ_CODE = "L001"
PARSE_CODE = "L002"
#: Code of a ``workflow run`` that cannot go on (step limit, timeout, unusable model); a graph
#: that runs to a failed outcome is reported without a code, as the run's own result.
RUN_CODE = "L003"
#: Code of each validation rule, in the order of :data:`~mindrian.workflow.validate.CHECKS`;
#: written out so that a code keeps its meaning when a check is added, moved or removed.
RULE_CODES: Mapping[str, str] = MappingProxyType(
    {
        "single_start": "L101",
        "has_exit": "L102",
        "start_has_no_incoming": "L103",
        "exit_has_no_outgoing": "L104",
        "reachable": "L105",
        "reaches_exit": "L106",
        "prompt_required": "L107",
        "valid_condition": "L108",
        "decision_paths": "L109",
        "clear_routes": "L110",
        "parallel_join": "L111",
        "fidelity_valid": "L112",
        "type_known": "L113",
        "retry_target_exists": "L114",
        "goal_gate_has_retry": "L115",
    }
)

_NEEDS_HANDLER = (NodeKind.COGNITION, NodeKind.HUMAN_GATE, NodeKind.ACTION, NodeKind.MANAGER)


@dataclass(frozen=True)
class Finding:
    """One located problem in a workflow file."""

    path: str
    """The file as the user named it."""
    line: int
    """1-based line, 0 when the whole file is meant."""
    column: int
    """1-based column, 0 when the whole line is meant."""
    severity: str
    """``error`` or ``warning``."""
    code: str
    """``L001`` (unreadable), ``L002`` (not a thought graph), ``L1nn`` (a validation rule)."""
    message: str
    """What is wrong."""

    def render(self) -> str:
        """The compiler-style line: ``PATH:LINE:COL: severity[CODE]: message``."""
        where = ":".join(str(p) for p in (self.path, self.line, self.column) if p)
        return f"{where}: {self.severity}[{self.code}]: {self.message}"


def check_file(path: Path, shown: str) -> tuple[ThoughtGraph | None, tuple[Finding, ...]]:
    """The graph in ``path`` (None if unreadable) and every finding, ``shown`` naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, (Finding(shown, 0, 0, ERROR, READ_CODE, f"cannot read the file: {exc}"),)
    try:
        graph = parse(text)
    except WorkflowError as exc:
        return None, (Finding(shown, exc.line, exc.column, ERROR, PARSE_CODE, exc.message),)
    findings = tuple(
        Finding(shown, i.line, 0, i.severity, RULE_CODES[i.rule], f"{i.rule}: {i.message}")
        for i in validate(graph)
    )
    return graph, findings


def parse_outcome_script(items: Sequence[str]) -> dict[str, list[str]]:
    """``["review=reject", "review=approve"]`` as ``{"review": ["reject", "approve"]}``."""
    script: dict[str, list[str]] = {}
    for item in items:
        node, sep, outcome = item.partition("=")
        if not sep or not node.strip() or not outcome.strip():
            raise WorkflowError(f"--outcome {item!r}: write NODE=OUTCOME, e.g. review=approve")
        script.setdefault(node.strip(), []).append(outcome.strip())
    return script


def dry_run_handlers(
    graph: ThoughtGraph,
    script: Mapping[str, Sequence[str]],
    log: Callable[[str], None],
) -> dict[str, Handler]:
    """Handlers that do no work: a node answers its scripted outcomes in turn, then ``success``.

    A human gate with nothing scripted picks its first choice, as the Attractor
    interviewer falls back to the first option. Handlers are keyed by handler
    type, so nodes of a manager's child pipeline get them too.
    """
    unknown = sorted(set(script) - {n.id for n in graph.nodes})
    if unknown:
        raise WorkflowError(f"--outcome names no node of {graph.name}: {', '.join(unknown)}")
    pending = {node_id: list(outcomes) for node_id, outcomes in script.items()}

    def handle(step: StepContext) -> Outcome | str:
        queue = pending.get(step.node.id)
        if queue:
            answer = queue.pop(0)
            log(f"{step.node.id}: {answer} (scripted)")
            return answer
        log(f"{step.node.id}: success (dry run of {step.node.handler_type})")
        if step.node.kind is NodeKind.HUMAN_GATE:
            first = next(iter(step.graph.outgoing(step.node.id)), None)
            if first is not None:
                return Outcome(preferred_label=first.label, suggested_next_ids=(first.target,))
        return Outcome()

    types = {kind.handler_type for kind in _NEEDS_HANDLER if kind is not NodeKind.MANAGER}
    types |= {n.type for n in graph.nodes if n.type and NodeKind.from_type(n.type) is None}
    handlers: dict[str, Handler] = dict.fromkeys(sorted(types), handle)
    for node in graph.nodes:
        is_supervisor = node.kind is NodeKind.MANAGER and (
            node.attr("stack.child_dotfile") or graph.attr("stack.child_dotfile")
        )
        if node.id in script or (node.kind is NodeKind.MANAGER and not is_supervisor):
            handlers[node.id] = handle
    return handlers


#: Characters of an LLM step's answer kept in the context as ``last_response``.
_RESPONSE_KEPT = 200


def model_handlers(
    graph: ThoughtGraph, model: Model, log: Callable[[str], None]
) -> dict[str, Handler]:
    """A handler for every LLM step (``codergen``) that asks ``model`` the step's prompt.

    One model serves the whole run, so a scripted model's answers are taken in
    the order the steps run. An answer that is the label of one of the step's
    outgoing edges is its preferred label (the step chose that edge). The
    answer goes to the context as ``last_response`` (cut to 200 characters)
    and ``response.<node id>``.
    """
    from agno.agent import Agent

    from mindrian.agents.base import check_run, text_of

    async def ask(step: StepContext) -> Outcome:
        agent = Agent(id=f"{graph.name}-{step.node.id}", model=model, telemetry=False)
        output = await agent.arun(step.prompt)
        answer = text_of(check_run(output, f"workflow {graph.name} step {step.node.id}"))
        labels = {
            normalise_label(e.label): e.label for e in graph.outgoing(step.node.id) if e.label
        }
        chosen = labels.get(normalise_label(answer))
        log(f"{step.node.id}: {answer[:60]!r}" + (f" -> {chosen}" if chosen else ""))
        updates = {
            "last_stage": step.node.id,
            "last_response": answer[:_RESPONSE_KEPT],
            f"response.{step.node.id}": answer,
        }
        return Outcome(preferred_label=chosen, context_updates=updates)

    return {"codergen": ask}
