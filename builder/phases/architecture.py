"""Phase 2, architecture: type, model and instructions of the agent.

Input: the ``SkillDefinition`` of phase 1. Output: an :class:`AgentSpec`
without handoff or tools. The type is the skill's explicit field or the first
inference rule that matches; the model is the skill's ``provider:model_id``
(checked against the providers Agno can build) or the per-type default from
the configuration. The body is split into verbatim blocks so no text is lost.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from builder.pipeline.contract import CheckResult, PhaseInput, PhaseResult
from builder.pipeline.errors import ArchitectureError, SourceLocation
from builder.skill.model import AGENT_TYPES, AgentType, SkillDefinition
from builder.skill.spec import (
    BODY_BLOCK,
    AgentSpec,
    InstructionBlock,
    InstructionElement,
    InstructionSet,
    ModelConfig,
)
from mindrian.agents.models import ModelSettings, configured_model, unsupported_settings

__all__ = [
    "GENERATION_DEFAULTS",
    "PHASE",
    "TYPE_RULES",
    "ArchitecturePhase",
    "TypeDecision",
    "build_instructions",
    "decide_type",
    "field_line",
    "resolve_model",
    "split_body",
    "supported_providers",
]


@dataclass(frozen=True)
class GenerationDefaults:
    """Per-type generation settings."""

    temperature: float | None
    """None when extended thinking is on (Anthropic rejects a custom temperature with thinking)."""
    max_tokens: int
    """Response cap; must exceed the thinking budget."""
    thinking_budget: int | None
    """Extended-thinking tokens, for the types that reason at length."""


#: Role agents answer briefly; collaborative and pipeline agents get room to think (seed 000 §2.3).
GENERATION_DEFAULTS: Mapping[str, GenerationDefaults] = {
    "operator": GenerationDefaults(0.3, 4096, None),
    "role": GenerationDefaults(0.7, 1024, None),
    "collaborative": GenerationDefaults(None, 16000, 8000),
    "pipeline": GenerationDefaults(None, 12000, 4000),
    "guided": GenerationDefaults(0.4, 2048, None),
}


@dataclass(frozen=True)
class TypeDecision:
    """The agent type and why."""

    type: AgentType
    """The chosen type."""
    rule: str
    """Id of the rule that fired."""
    reason: str
    """One sentence with the evidence."""


def _explicit(d: SkillDefinition) -> TypeDecision | None:
    if d.type is None:
        return None
    if d.type not in AGENT_TYPES:
        raise ArchitectureError(
            f"unknown agent type {d.type!r}; expected one of {', '.join(AGENT_TYPES)}",
            location=_location(d, "type", "metadata.mindrian.type"),
            code="A002",
        )
    where = field_line(d, "type", "metadata.mindrian.type")
    return TypeDecision(
        d.type,
        "explicit",
        f"the skill sets type: {d.type}" + (f" (line {where})" if where else ""),
    )


def _sub_agents(d: SkillDefinition) -> TypeDecision | None:
    if d.sub_agents:
        names = ", ".join(s.name for s in d.sub_agents)
        return TypeDecision(
            "collaborative",
            "sub_agents",
            f"it defines {len(d.sub_agents)} sub-agents/perspectives ({names})",
        )
    if d.section("perspectives"):
        return TypeDecision("collaborative", "sub_agents", "it has a perspectives section")
    return None


def _waits_for_user(d: SkillDefinition) -> TypeDecision | None:
    waiting = [s.name for s in d.steps if s.waits_for_user]
    if waiting:
        return TypeDecision(
            "guided",
            "waits_for_user",
            f"its steps pause for the user ({', '.join(waiting)})",
        )
    return None


def _ordered_steps(d: SkillDefinition) -> TypeDecision | None:
    if d.steps:
        return TypeDecision("pipeline", "ordered_steps", f"it defines {len(d.steps)} ordered steps")
    if d.section("phases"):
        return TypeDecision("pipeline", "ordered_steps", "it has a phases/steps section")
    return None


def _persona(d: SkillDefinition) -> TypeDecision | None:
    if d.behavioral_rules and d.section("output_template") is None:
        return TypeDecision(
            "role",
            "persona_rules",
            f"it has {len(d.behavioral_rules)} behavioural rules and no output template",
        )
    return None


def _default(d: SkillDefinition) -> TypeDecision:
    return TypeDecision(
        "operator",
        "default",
        "no rule for another type matched, so it is a single-purpose operator",
    )


#: Inference rules in the order they are tried; the first match decides.
TYPE_RULES: tuple[Callable[[SkillDefinition], TypeDecision | None], ...] = (
    _explicit,
    _sub_agents,
    _waits_for_user,
    _ordered_steps,
    _persona,
)


def decide_type(definition: SkillDefinition) -> TypeDecision:
    """Apply :data:`TYPE_RULES` in order; operator when none matches."""
    for rule in TYPE_RULES:
        decision = rule(definition)
        if decision is not None:
            return decision
    return _default(definition)


def supported_providers() -> tuple[str, ...]:
    """Provider keys Agno's model-string resolver can build, sorted."""
    # Imported where used: Agno's model registry costs ~0.15 s, and a cached build never asks.
    from agno.models.utils import MODEL_PROVIDER_CLASSES

    return tuple(sorted(MODEL_PROVIDER_CLASSES))


def _provider_key(provider: str) -> str | None:
    # Agno's own resolver also accepts display aliases ("azure", "inceptionlabs").
    from agno.models.utils import MODEL_PROVIDER_CLASSES, _resolve_provider_key

    key = _resolve_provider_key(provider.strip().lower())
    return key if key in MODEL_PROVIDER_CLASSES else None


def resolve_model(text: str, *, location: SourceLocation | None) -> tuple[str, str]:
    """Split and check a ``provider:model_id`` string; returns (provider key, model id)."""
    provider, sep, model_id = text.partition(":")
    if not sep or not provider.strip() or not model_id.strip():
        raise ArchitectureError(
            f"model {text!r} is not of the form provider:model_id (e.g. "
            "anthropic:claude-sonnet-4-5)",
            location=location,
            code="A003",
        )
    key = _provider_key(provider)
    if key is None:
        raise ArchitectureError(
            f"unknown model provider {provider.strip()!r} in {text!r}; Agno supports: "
            f"{', '.join(supported_providers())}",
            location=location,
            code="A004",
        )
    return key, model_id.strip()


def field_line(definition: SkillDefinition, *paths: str) -> int:
    """The SKILL.md line of the first front-matter key path that phase 1 recorded, else 0."""
    return next((definition.field_lines[p] for p in paths if p in definition.field_lines), 0)


def _location(definition: SkillDefinition, *paths: str) -> SourceLocation:
    return SourceLocation(definition.source_path, field_line(definition, *paths))


def _model(
    definition: SkillDefinition, agent_type: str, models: Mapping[str, str]
) -> tuple[ModelConfig, tuple[str, ...]]:
    if definition.model:
        text, source = definition.model, "skill"
        location = _location(definition, "model", "metadata.mindrian.model")
    else:
        if agent_type not in models:
            raise ArchitectureError(
                f"no default model for type {agent_type!r} in [tool.mindrian.models]",
                location=SourceLocation("pyproject.toml"),
                code="A005",
            )
        text, source = models[agent_type], "config"
        location = SourceLocation("pyproject.toml")
    provider, model_id = resolve_model(text, location=location)
    gen = GENERATION_DEFAULTS[agent_type]
    settings, notes = applicable_settings(
        provider,
        ModelSettings(gen.temperature, gen.max_tokens, gen.thinking_budget),
    )
    if not notes:
        _check_model_takes(f"{provider}:{model_id}", settings, location)
    config = ModelConfig(
        provider=provider,
        model_id=model_id,
        string=f"{provider}:{model_id}",
        source=source,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens or gen.max_tokens,
        thinking_budget=settings.thinking_budget,
    )
    return config, notes


def _check_model_takes(string: str, settings: ModelSettings, location: SourceLocation) -> None:
    """Build the Agno model once with ``settings``, so the provider's own checks fail the build."""
    try:
        configured_model(string, settings)
    except ValueError as exc:
        first = str(exc).strip().splitlines()[0]
        raise ArchitectureError(
            f"model {string!r} cannot run with {settings}: {first}", location=location, code="A006"
        ) from None


def applicable_settings(
    provider: str, settings: ModelSettings
) -> tuple[ModelSettings, tuple[str, ...]]:
    """``settings`` less those ``provider``'s Agno model has no field for, with a warning each.

    The runtime refuses a setting it cannot apply, so one left in the spec would
    fail every run; leaving it out here, with the warning recorded, is the honest
    alternative. A provider whose SDK is not installed cannot be inspected: its
    settings are kept and the warning says so.
    """
    try:
        missing = unsupported_settings(provider, settings)
    except ImportError as exc:
        note = f"model settings not checked: provider {provider!r} is not importable ({exc})"
        return settings, (note,)
    dropped = {name: None for name in missing}
    notes = tuple(
        f"{name}={getattr(settings, name)} is not applied: Agno's {provider} model lacks the field"
        for name in missing
    )
    return replace(settings, **dropped), notes


def _line_starts(body: str) -> list[int]:
    starts, offset = [], 0
    for line in body.splitlines(keepends=True):
        starts.append(offset)
        offset += len(line)
    return starts


def split_body(definition: SkillDefinition) -> tuple[InstructionBlock, ...]:
    """Cut the body into verbatim blocks at the recognised sections, in document order.

    A section's slice runs from its heading line to the end of the text phase 1
    assigned to it; whatever lies between sections becomes a ``body`` block.
    Concatenating the blocks gives back the body minus whitespace-only gaps.
    """
    body = definition.body
    starts = _line_starts(body)
    blocks: list[InstructionBlock] = []
    cursor = 0

    def emit(key: str, title: str, begin: int, end: int) -> None:
        text = body[begin:end]
        if text.strip():
            # Blank lines at the edges carry nothing; dropping them keeps the YAML readable.
            lead = len(text) - len(text.lstrip("\n"))
            line = definition.body_line + body.count("\n", 0, begin + lead)
            blocks.append(
                InstructionBlock(key=key, title=title, line=line, text=text.strip("\n") + "\n")
            )

    for section in sorted(definition.sections, key=lambda s: s.line):
        index = section.line - definition.body_line
        if not 0 <= index < len(starts) or starts[index] < cursor:
            continue  # nested inside a section already taken whole
        begin = starts[index]
        heading_end = body.find("\n", begin)
        heading_end = len(body) if heading_end < 0 else heading_end + 1
        content = section.text.strip("\n")
        found = body.find(content, heading_end) if content else heading_end
        end = found + len(content) if found >= 0 else heading_end
        emit(BODY_BLOCK, "", cursor, begin)
        emit(section.key, section.heading, begin, end)
        cursor = end
    emit(BODY_BLOCK, "", cursor, len(body))
    return tuple(blocks)


def build_instructions(definition: SkillDefinition, agent_type: str) -> InstructionSet:
    """Instructions from the whole body plus reference elements; nothing is dropped."""
    # The description is not repeated here: the runtime gives it to Agno as the agent's description.
    system_prompt = f"You are {definition.name}, a Mindrian {agent_type} agent."
    elements = tuple(
        InstructionElement(name=r.name, title=r.title, path=r.path, text=r.text, digest=r.digest)
        for r in definition.references
    )
    return InstructionSet(
        system_prompt=system_prompt,
        tone=definition.tone or "",
        behavioral_rules=definition.behavioral_rules,
        blocks=split_body(definition),
        elements=elements,
    )


def _definition(inputs: PhaseInput) -> SkillDefinition:
    definition = inputs.previous.get("skill_analysis")
    if not isinstance(definition, SkillDefinition):
        raise ArchitectureError(
            "phase 2 needs the SkillDefinition of phase 1 (skill_analysis)", code="A001"
        )
    return definition


class ArchitecturePhase:
    """Phase 2: decide type and model, assemble instructions."""

    name = "architecture"
    number = 2
    checks = ("type_determined", "model_selected")
    output_type = AgentSpec

    def run(self, inputs: PhaseInput) -> PhaseResult[AgentSpec]:
        """Build the partial AgentSpec; raise ArchitectureError for unusable input."""
        d = _definition(inputs)
        decision = decide_type(d)
        model, model_notes = _model(d, decision.type, inputs.config.models)
        spec = AgentSpec(
            id=d.id,
            identifier=d.identifier,
            name=d.name,
            description=d.description,
            version=d.version,
            source_path=d.source_path,
            source_digest=d.source_digest,
            type=decision.type,
            type_rule=decision.rule,
            type_reason=decision.reason,
            model=model,
            instructions=build_instructions(d, decision.type),
            sub_agents=d.sub_agents,
            steps=d.steps,
            scores=d.scores,
            score_bands=d.score_bands,
            triggers=d.triggers,
            problem_types=d.problem_types,
            good_for=d.good_for,
            chains_to=d.chains_to,
            metadata=d.metadata,
        )
        checks = (
            CheckResult(
                "type_determined",
                True,
                f"type {decision.type} ({decision.rule}): {decision.reason}",
            ),
            CheckResult("model_selected", True, f"{model.string} from the {model.source}"),
        )
        return PhaseResult(
            output=spec, checks=checks, warnings=_warnings(d, decision) + model_notes
        )


def _warnings(d: SkillDefinition, decision: TypeDecision) -> tuple[str, ...]:
    warnings = []
    if decision.type == "collaborative" and not d.sub_agents:
        warnings.append(
            "collaborative agent without parsed sub-agents: the perspectives section is used as "
            "text only"
        )
    if decision.type in ("pipeline", "guided") and not d.steps:
        warnings.append(
            f"{decision.type} agent without parsed steps: the phases section is used as text only"
        )
    return tuple(warnings)


#: The phase object the runner loads.
PHASE = ArchitecturePhase()
