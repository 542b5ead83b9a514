"""Phase 3, handoff protocol: what the agent receives, returns, and how it is routed.

The contract is checked against the runtime itself: the field names of
``mindrian.handoff.context.HandoffContext`` / ``HandoffResult`` are read with
``dataclasses.fields``, so a skill cannot promise a field the runtime lacks.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from types import ModuleType

from builder.phases import phase_number
from builder.phases.architecture import field_line
from builder.phases.outputs import Inputs, Outputs
from builder.pipeline.contract import CheckResult, PhaseHooks, PhaseResult
from builder.pipeline.errors import HandoffConfigError, SourceLocation
from builder.skill.model import HandoffRequest, SkillDefinition
from builder.skill.output_example import ExampleProblem, JsonExample, infer_schema, read_examples
from builder.skill.spec import (
    AgentSpec,
    HandoffConfig,
    ReceivesConfig,
    ReturnsConfig,
    RoutingConfig,
)
from mindrian.agent_types import record_of
from mindrian.agents.output import whole_answer

__all__ = [
    "PHASE",
    "HandoffProtocolPhase",
    "RuntimeContract",
    "load_runtime_contract",
]

_CLARITY_QUESTIONS = ("what", "who", "success")
_RECEIVES_DEFAULT = (
    "problem_clarity",
    "conversation",
    "previous_analyses",
    "task_description",
    "expected_output",
    "focus_areas",
    "ignore_areas",
)
_RETURNS_BASE = (
    "output",
    "output_format",
    "key_findings",
    "recommendations",
    "confidence",
    "open_questions",
)
_RUNTIME_MODULE = "mindrian.handoff.context"
#: The warning of an output example that even a lenient JSON reader refuses.
_UNREAD_EXAMPLE = "W301"


@dataclass(frozen=True)
class RuntimeContract:
    """What the runtime's handoff classes actually offer."""

    context_fields: tuple[str, ...]
    """Field names of HandoffContext."""
    result_fields: tuple[str, ...]
    """Field names of HandoffResult."""
    handoff_types: tuple[str, ...]
    """Lower-case member names of HandoffType."""
    return_behaviors: tuple[str, ...]
    """Lower-case member names of ReturnBehavior."""
    min_clarity: float
    """The runtime's readiness threshold (``MIN_CLARITY``), 0.6 when it exports none."""


def _members(module: ModuleType, name: str) -> tuple[str, ...]:
    # The enums may live beside the dataclasses or in the package that exports both.
    package = importlib.import_module(module.__name__.rpartition(".")[0] or module.__name__)
    kind = getattr(module, name, None) or getattr(package, name, None)
    if not (isinstance(kind, type) and issubclass(kind, enum.Enum)):
        raise HandoffConfigError(
            f"the runtime ({module.__name__} or {package.__name__}) has no enum {name}",
            code="H002",
        )
    return tuple(m.name.lower() for m in kind)


def load_runtime_contract(module_name: str = _RUNTIME_MODULE) -> RuntimeContract:
    """Introspect the runtime handoff dataclasses (imported, never copied)."""
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise HandoffConfigError(
            f"cannot import the runtime handoff module {module_name}: {exc}",
            code="H002",
        ) from exc
    classes = {}
    for name in ("HandoffContext", "HandoffResult"):
        cls = getattr(module, name, None)
        if cls is None or not dataclasses.is_dataclass(cls):
            raise HandoffConfigError(
                f"{module_name}.{name} is missing or not a dataclass", code="H002"
            )
        classes[name] = tuple(f.name for f in dataclasses.fields(cls))
    return RuntimeContract(
        context_fields=classes["HandoffContext"],
        result_fields=classes["HandoffResult"],
        handoff_types=_members(module, "HandoffType"),
        return_behaviors=_members(module, "ReturnBehavior"),
        min_clarity=float(getattr(module, "MIN_CLARITY", 0.6)),
    )


def _request_line(d: SkillDefinition, key: str, index: int | None = None) -> int:
    paths = [f"handoff.{key}.{index}"] if index is not None else []
    paths += [f"handoff.{key}", "handoff", f"metadata.mindrian.handoff.{key}"]
    line = field_line(d, *paths)
    return line or (d.handoff.line if d.handoff else 0)


def _unknown_fields(
    d: SkillDefinition, key: str, names: Sequence[str], offered: Sequence[str], cls: str
) -> CheckResult | None:
    for index, name in enumerate(names):
        if name not in offered:
            return CheckResult(
                f"{key}_defined",
                False,
                f"handoff.{key} names {name!r}, which the runtime's {cls} does not have; "
                f"its fields are: {', '.join(offered)}",
                SourceLocation(d.source_path, _request_line(d, key, index)),
            )
    return None


def _receives(
    spec: AgentSpec, request: HandoffRequest, contract: RuntimeContract
) -> ReceivesConfig:
    fields = request.receives or tuple(f for f in _RECEIVES_DEFAULT if f in contract.context_fields)
    demands = record_of(spec.type).demands_clarity
    if request.min_clarity is not None:
        min_clarity = request.min_clarity
    else:
        # A role agent (Larry) is what raises clarity, so it cannot demand it up front.
        min_clarity = contract.min_clarity if demands else 0.0
    return ReceivesConfig(
        fields=tuple(fields),
        clarity_questions=_CLARITY_QUESTIONS if demands else (),
        min_clarity=min_clarity,
        previous_analyses="previous_analyses" in fields,
        focus_areas="focus_areas" in fields,
        conversation_context="conversation" in fields,
    )


def _default_returns(spec: AgentSpec) -> tuple[str, ...]:
    extra = []
    if spec.scores:
        extra.append("scores")
    if spec.chains_to:
        extra.append("suggested_next_agents")
    if record_of(spec.type).converses:
        extra += ["needs_human_input", "human_input_reason"]
    return _RETURNS_BASE + tuple(extra)


def _data_examples(spec: AgentSpec) -> tuple[tuple[JsonExample, ...], tuple[ExampleProblem, ...]]:
    """The output template's JSON examples that show data, and the objects it cannot read.

    Only an agent with an output model and no scores gets data: with scores, an
    example that is not a whole answer is the ``scores`` object (phase 6 checks it).
    """
    if not record_of(spec.type).output_model or spec.scores:
        return (), ()
    examples: list[JsonExample] = []
    problems: list[ExampleProblem] = []
    for block in spec.instructions.blocks:
        if block.key == "output_template":
            found, unread = read_examples(block.text, block.line)
            examples += (e for e in found if not whole_answer(e.value))
            problems += unread
    return tuple(examples), tuple(problems)


def _returns(
    spec: AgentSpec,
    request: HandoffRequest,
    contract: RuntimeContract,
    examples: Sequence[JsonExample],
) -> tuple[ReturnsConfig, tuple[str, ...]]:
    """The returns side and the decisions the output examples settled."""
    defaults = _default_returns(spec) + (("data",) if examples else ())
    fields = request.returns or tuple(f for f in defaults if f in contract.result_fields)
    inferred = infer_schema(examples) if examples else None
    config = ReturnsConfig(
        fields=tuple(fields),
        output_format="markdown" if record_of(spec.type).converses else "structured",
        scores=tuple(s.name for s in spec.scores),
        suggested_next_agents=tuple(c.target for c in spec.chains_to),
        data_schema=inferred.schema if inferred else {},
    )
    return config, inferred.decisions if inferred else ()


def _routing(
    d: SkillDefinition,
    spec: AgentSpec,
    request: HandoffRequest,
    contract: RuntimeContract,
) -> RoutingConfig:
    behavior = (request.return_behavior or record_of(spec.type).return_behavior).lower()
    if behavior not in contract.return_behaviors:
        raise HandoffConfigError(
            f"return_behavior {behavior!r} is not one the runtime knows "
            f"({', '.join(contract.return_behaviors)})",
            location=SourceLocation(d.source_path, _request_line(d, "return_behavior")),
            code="H003",
        )
    return RoutingConfig(
        can_delegate_to=request.can_delegate_to,
        can_be_called_by=request.can_be_called_by,
        default_return_to=request.default_return_to,
        return_behavior=behavior,
    )


def _supports(spec: AgentSpec, contract: RuntimeContract) -> tuple[str, ...]:
    wanted = record_of(spec.type).handoffs
    missing = [h for h in wanted if h not in contract.handoff_types]
    if missing:
        raise HandoffConfigError(
            f"the runtime's HandoffType lacks {', '.join(missing)} (it has "
            f"{', '.join(contract.handoff_types)})",
            code="H004",
        )
    return wanted


def _decisions(spec: AgentSpec, request: HandoffRequest, config: HandoffConfig) -> tuple[str, ...]:
    origin = {True: "from the skill's handoff block", False: f"the {spec.type} default"}
    return (
        f"receives: {origin[bool(request.receives)]}",
        f"returns: {origin[bool(request.returns)]}",
        f"min_clarity {config.receives.min_clarity}: {origin[request.min_clarity is not None]}",
        f"return_behavior {config.routing.return_behavior}: "
        f"{origin[request.return_behavior is not None]}",
        f"supports {', '.join(config.supports)}: only role agents accept transfer",
    )


class HandoffProtocolPhase(PhaseHooks[Outputs, AgentSpec]):
    """Phase 3: attach a HandoffConfig checked against the runtime."""

    name = "handoff_protocol"
    number = phase_number(name)
    checks = ("receives_defined", "returns_defined")
    output_type = AgentSpec

    def __init__(self, contract: Callable[[], RuntimeContract] = load_runtime_contract) -> None:
        self._contract = contract

    def run(self, inputs: Inputs) -> PhaseResult[AgentSpec]:
        """A new AgentSpec with ``handoff`` set; failed checks name the offending field and line."""
        d, spec = inputs.previous.skill(), inputs.previous.spec()
        contract = self._contract()
        request = d.handoff or HandoffRequest()
        receives = _receives(spec, request, contract)
        examples, unread = _data_examples(spec)
        returns, data_decisions = _returns(spec, request, contract, examples)
        config = HandoffConfig(
            receives=receives,
            returns=returns,
            routing=_routing(d, spec, request, contract),
            supports=_supports(spec, contract),
        )
        config = replace(config, decisions=_decisions(spec, request, config) + data_decisions)
        checks = (
            _unknown_fields(
                d,
                "receives",
                receives.fields,
                contract.context_fields,
                "HandoffContext",
            )
            or CheckResult(
                "receives_defined",
                True,
                f"{len(receives.fields)} HandoffContext fields, all in the runtime",
            ),
            _unknown_fields(d, "returns", returns.fields, contract.result_fields, "HandoffResult")
            or CheckResult(
                "returns_defined",
                True,
                f"{len(returns.fields)} HandoffResult fields, all in the runtime",
            ),
        )
        return PhaseResult(
            output=replace(spec, handoff=config),
            checks=checks,
            warnings=_warnings(spec, returns, unread),
        )


def _warnings(
    spec: AgentSpec, returns: ReturnsConfig, unread: Sequence[ExampleProblem]
) -> tuple[str, ...]:
    warnings = [
        f"{SourceLocation(spec.source_path, p.line)}: warning[{_UNREAD_EXAMPLE}]: the output "
        f"template's JSON example cannot be read ({p.reason}); the output schema leaves it out"
        for p in unread
    ]
    if spec.scores and "scores" not in returns.fields:
        warnings.append("the skill defines scores but handoff.returns omits 'scores'")
    if spec.chains_to and "suggested_next_agents" not in returns.fields:
        warnings.append(
            "the skill chains to other agents but handoff.returns omits 'suggested_next_agents'"
        )
    return tuple(warnings)


#: The phase object the runner loads.
PHASE = HandoffProtocolPhase()
