"""Phase 2, architecture: type, model and instructions of the agent.

Input: the ``SkillDefinition`` of phase 1. Output: an :class:`AgentSpec`
without handoff or tools. The type is the skill's explicit field or the first
inference rule that matches; the model is the skill's ``provider:model_id``
(checked against the providers Agno can build) or the per-type default from
the configuration. The model's settings are its type's whatever the provider:
a setting the provider's model lacks is a warning, never dropped from the spec,
so the spec does not depend on which SDKs the building machine has installed.
The body is split into verbatim blocks so no text is lost.

Inference never picks a type whose structure is absent (a team needs two
sub-agents, a workflow one step); an explicit type without it is error A007,
located at the ``type`` field, rather than a crash when the package is built.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import mindrian
from builder.phases import phase_number
from builder.phases.outputs import Inputs, Outputs
from builder.pipeline.cache import (
    cache_dir,
    cache_path,
    installed_version,
    read_json,
    write_json,
)
from builder.pipeline.contract import CheckResult, PhaseHooks, PhaseResult
from builder.pipeline.errors import ArchitectureError, SourceLocation
from builder.skill.model import AgentType, SkillDefinition, StepSpec, SubAgentSpec
from builder.skill.shape import find_gates, gate_steps, persona_line, quote
from builder.skill.spec import (
    BODY_BLOCK,
    AgentSpec,
    InstructionBlock,
    InstructionElement,
    InstructionSet,
    ModelConfig,
    reference_summary,
)
from mindrian.agent_types import (
    AGENT_TYPE_NAMES,
    AgentTypeRecord,
    GenerationDefaults,
    record_of,
)
from mindrian.model_settings import ModelSettings

__all__ = [
    "PHASE",
    "TYPE_RULES",
    "ArchitecturePhase",
    "TypeDecision",
    "build_instructions",
    "decide_type",
    "field_line",
    "resolve_model",
    "settings_warnings",
    "split_body",
    "supported_providers",
]


@dataclass(frozen=True)
class TypeDecision:
    """The agent type and why."""

    type: AgentType
    """The chosen type."""
    rule: str
    """Id of the rule that fired."""
    reason: str
    """One sentence with the evidence."""
    steps: tuple[StepSpec, ...] | None = None
    """The steps the rule read from the text (a guided agent's gates), replacing phase 1's."""


def _from(parts: Sequence[StepSpec | SubAgentSpec]) -> str:
    """ " (from line N)" for the first part phase 1 located in SKILL.md, else nothing."""
    line = next((p.line for p in parts if p.line and not getattr(p, "source", "")), 0)
    return f" (from line {line})" if line else ""


def _explicit(d: SkillDefinition) -> TypeDecision | None:
    if d.type is None:
        return None
    if d.type not in AGENT_TYPE_NAMES:
        raise ArchitectureError(
            f"unknown agent type {d.type!r}; expected one of {', '.join(AGENT_TYPE_NAMES)}",
            location=_location(d, "type", "metadata.mindrian.type"),
            code="A002",
        )
    where = field_line(d, "type", "metadata.mindrian.type")
    said = f"the skill sets type: {d.type}" + (f" (line {where})" if where else "")
    # A guided skill may write its pauses as prose rather than as phases: its gates are its steps.
    record = record_of(d.type)
    gates = find_gates(d.body, d.body_line) if record.steps_wait and not d.steps else ()
    if gates:
        lines = ", ".join(str(g.line) for g in gates)
        steps = gate_steps(d.body, d.body_line, gates)
        return TypeDecision(
            d.type,
            "explicit",
            f"{said}; its steps end where its text stops for the user (line {lines})",
            steps,
        )
    _require_structure(d, record)
    return TypeDecision(d.type, "explicit", said)


def _require_structure(d: SkillDefinition, record: AgentTypeRecord) -> None:
    """Error A007 when an explicit type lacks its structure (team members, workflow steps)."""
    if record.parts == "perspectives" and len(d.sub_agents) < 2:
        missing = (
            f"at least two sub-agents, found {len(d.sub_agents)}: add metadata.mindrian.sub_agents "
            "or a '## Perspectives' section with one item or subsection per member"
        )
    elif record.parts == "steps" and not d.steps:
        missing = (
            "at least one step: add metadata.mindrian.phases "
            "or a '## Phases' section with one item or subsection per step"
            + (", or a line where it waits for the user's answer" if record.steps_wait else "")
        )
    else:
        return
    raise ArchitectureError(
        f"type {d.type} needs {missing}",
        location=_location(d, "type", "metadata.mindrian.type"),
        code="A007",
    )


def _chain_folder(d: SkillDefinition) -> TypeDecision | None:
    # A chain folder says what it is by its shape: CHAIN.md and one numbered file per stage.
    if d.stage_files:
        names = ", ".join(PurePosixPath(f).name for f in d.stage_files)
        return TypeDecision(
            "pipeline",
            "chain_folder",
            f"it is a chain folder: CHAIN.md with {len(d.stage_files)} numbered stage files "
            f"({names}), one phase each",
        )
    return None


def _sub_agents(d: SkillDefinition) -> TypeDecision | None:
    # A team needs two perspectives (mindrian.agents.collaborative); one is no team.
    if len(d.sub_agents) >= 2:
        names = ", ".join(s.name for s in d.sub_agents)
        return TypeDecision(
            "collaborative",
            "sub_agents",
            f"it defines {len(d.sub_agents)} sub-agents/perspectives ({names})"
            + _from(d.sub_agents),
        )
    return None


def _waits_for_user(d: SkillDefinition) -> TypeDecision | None:
    waiting = [s for s in d.steps if s.waits_for_user]
    if waiting:
        return TypeDecision(
            "guided",
            "waits_for_user",
            f"its steps pause for the user ({', '.join(s.name for s in waiting)}){_from(waiting)}",
        )
    return None


def _stage_sequence(d: SkillDefinition) -> TypeDecision | None:
    # Its own rule, so explain names the list the stages were read from.
    if d.stage_list is not None and d.steps:
        return TypeDecision(
            "pipeline",
            "stage_sequence",
            f"its numbered list under {d.stage_list.heading!r} (line {d.stage_list.line}) names "
            f"{len(d.steps)} stages and each stage has a section of its own, one phase each",
        )
    return None


def _declared_phases(d: SkillDefinition) -> TypeDecision | None:
    # Phases in the front matter declare stages; numbered steps in the body are one agent's
    # procedure and never make a pipeline by themselves.
    where = field_line(d, "phases", "metadata.mindrian.phases")
    if where and d.steps:
        return TypeDecision(
            "pipeline",
            "declared_phases",
            f"its front matter declares {len(d.steps)} phases (line {where}), one stage each",
        )
    return None


def _user_gate(d: SkillDefinition) -> TypeDecision | None:
    gates = find_gates(d.body, d.body_line)
    if not gates:
        return None
    more = f" and {len(gates) - 1} more" if len(gates) > 1 else ""
    return TypeDecision(
        "guided",
        "user_gate",
        f"its procedure stops for the user at line {gates[0].line} ({quote(gates[0])!r}){more}; "
        f"the run pauses at each such line with its question",
        gate_steps(d.body, d.body_line, gates),
    )


def _persona(d: SkillDefinition) -> TypeDecision | None:
    where = persona_line(d.name, d.body, d.body_line)
    if where is None:
        return None
    said = "its name" if where == 0 else f"line {where}"
    return TypeDecision("role", "persona", f"{said} presents the skill as a persona")


def _default(d: SkillDefinition) -> TypeDecision:
    steps = f"; its {len(d.steps)} steps{_from(d.steps)} are its own procedure" if d.steps else ""
    return TypeDecision(
        "operator",
        "default",
        "no rule for another type matched, so it is a single-purpose operator" + steps,
    )


#: Inference rules in the order they are tried; the first match decides.
TYPE_RULES: tuple[Callable[[SkillDefinition], TypeDecision | None], ...] = (
    _explicit,
    _chain_folder,
    _sub_agents,
    _waits_for_user,
    _stage_sequence,
    _declared_phases,
    _user_gate,
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
    provider, model_id = _split_model(text, location=location)
    key = _provider_key(provider)
    if key is None:
        raise ArchitectureError(
            f"unknown model provider {provider.strip()!r} in {text!r}; Agno supports: "
            f"{', '.join(supported_providers())}",
            location=location,
            code="A004",
        )
    return key, model_id.strip()


def _split_model(text: str, *, location: SourceLocation | None) -> tuple[str, str]:
    provider, sep, model_id = text.partition(":")
    if not sep or not provider.strip() or not model_id.strip():
        raise ArchitectureError(
            f"model {text!r} is not of the form provider:model_id (e.g. "
            "anthropic:claude-sonnet-4-5)",
            location=location,
            code="A003",
        )
    return provider, model_id


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
    _split_model(text, location=location)  # A003 needs no Agno, so not the cache either
    gen = record_of(agent_type).generation
    answer = _model_answer(text, gen)
    if "refusal" in answer:
        raise ArchitectureError(answer["refusal"], location=location, code=answer["code"])
    provider, model_id = answer["provider"], answer["model_id"]
    settings = ModelSettings(**answer["settings"])
    config = ModelConfig(
        provider=provider,
        model_id=model_id,
        string=f"{provider}:{model_id}",
        source=source,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens or gen.max_tokens,
        thinking_budget=settings.thinking_budget,
    )
    return config, tuple(
        f"{location}: warning[{_UNAPPLIED_SETTING}]: {note}" for note in answer["notes"]
    )


#: Warning: a model setting may not reach the model (its provider lacks the field, or the
#: provider's SDK is missing where the build runs, so nothing could be checked).
_UNAPPLIED_SETTING = "W201"

#: The code an answer of :func:`_model_answer` depends on, besides the installed Agno.
_CHECK_SOURCES = (
    Path(__file__),
    Path(mindrian.__file__).parent / "providers.py",
    Path(mindrian.__file__).parent / "model_settings.py",
)


@functools.cache
def _check_sources() -> bytes:
    # Read once a process: phase 2 asks for every skill, and code does not change under a build.
    return b"".join(b"%d:" % len(data) + data for data in (p.read_bytes() for p in _CHECK_SOURCES))


def _model_answer(text: str, gen: GenerationDefaults) -> dict[str, Any]:
    """What Agno says of model ``text`` with ``gen``'s settings, from the cache when it was asked.

    The answer needs Agno's model registry and the provider's SDK (about 2.5 s of
    imports for Anthropic) and depends only on the text, the settings, the
    installed Agno and this check's own code, which together form the key. An
    answer that could not inspect the provider (SDK missing) is not kept.
    """
    wanted = ModelSettings(gen.temperature, gen.max_tokens, gen.thinking_budget)
    key = json.dumps({"model": text, "settings": asdict(wanted)}, sort_keys=True)
    path = cache_path(
        cache_dir("model-check"),
        key.encode("utf-8"),
        installed_version("agno").encode(),
        _check_sources(),
    )
    cached = read_json(path)
    if cached is not None:
        return cached
    answer, inspected = _ask_agno(text, wanted)
    if inspected:
        write_json(path, answer)
    return answer


def _ask_agno(text: str, wanted: ModelSettings) -> tuple[dict[str, Any], bool]:
    """(the answer of :func:`_model_answer`, whether the provider's model class was inspected)."""
    try:
        provider, model_id = resolve_model(text, location=None)
    except ArchitectureError as refused:
        return {"refusal": refused.message, "code": refused.code}, True
    notes = settings_warnings(provider, wanted)
    answer: dict[str, Any] = {
        "provider": provider,
        "model_id": model_id,
        "settings": asdict(wanted),
        "notes": list(notes),
    }
    if notes and any("not importable" in note for note in notes):
        return answer, False
    if not notes:
        refusal = _model_refusal(f"{provider}:{model_id}", wanted)
        if refusal is not None:
            return {"refusal": refusal, "code": "A006"}, True
    return answer, True


def _model_refusal(string: str, settings: ModelSettings) -> str | None:
    """Why the provider refuses ``settings`` when its Agno model is built with them, else None."""
    from mindrian.providers import configured_model

    try:
        configured_model(string, settings)
    except ValueError as exc:
        first = str(exc).strip().splitlines()[0]
        return f"model {string!r} cannot run with {settings}: {first}"
    return None


def settings_warnings(provider: str, settings: ModelSettings) -> tuple[str, ...]:
    """One warning per setting ``provider``'s Agno model has no field for, or one if it cannot tell.

    The settings themselves are kept whatever this finds: whether the provider's
    SDK happens to be installed where the build runs must not change the spec, and
    a run drops what its model cannot take, with a warning of its own
    (:func:`mindrian.providers.run_model`).
    """
    from mindrian.providers import provider_extra, unsupported_settings

    try:
        missing = unsupported_settings(provider, settings)
    except ImportError as exc:
        extra = provider_extra(provider)
        hint = f"; `pip install 'mindrian[{extra}]'` brings it" if extra else ""
        return (
            f"model settings not checked: provider {provider!r} is not importable ({exc}){hint}",
        )
    return tuple(
        f"{name}={getattr(settings, name)} will not be applied: Agno's {provider} model lacks "
        "the field, so a run drops it"
        for name in missing
    )


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


def build_instructions(
    definition: SkillDefinition, agent_type: str, files: tuple[str, ...] = ()
) -> InstructionSet:
    """Instructions from the whole body plus reference elements and the names of the skill's
    other ``files``; nothing is dropped."""
    # The description is not repeated here: the runtime gives it to Agno as the agent's description.
    system_prompt = f"You are {definition.display_name}, a Mindrian {agent_type} agent."
    elements = tuple(
        InstructionElement(r.name, r.title, r.path, reference_summary(r.text), r.digest)
        for r in definition.references
    )
    return InstructionSet(
        system_prompt=system_prompt,
        tone=definition.tone or "",
        behavioral_rules=definition.behavioral_rules,
        blocks=split_body(definition),
        elements=elements,
        files=tuple(f for f in files if f not in {e.path for e in elements}),
    )


class ArchitecturePhase(PhaseHooks[Outputs, AgentSpec]):
    """Phase 2: decide type and model, assemble instructions."""

    name = "architecture"
    number = phase_number(name)
    checks = ("type_determined", "model_selected")
    output_type = AgentSpec

    def run(self, inputs: Inputs) -> PhaseResult[AgentSpec]:
        """Build the partial AgentSpec; raise ArchitectureError for unusable input."""
        d = inputs.previous.skill()
        decision = decide_type(d)
        model, model_notes = _model(d, decision.type, inputs.config.models)
        spec = AgentSpec(
            id=d.id,
            identifier=d.identifier,
            name=d.display_name,
            description=d.description,
            version=d.version,
            source_path=d.source_path,
            source_digest=d.source_digest,
            type=decision.type,
            type_rule=decision.rule,
            type_reason=decision.reason,
            model=model,
            instructions=build_instructions(
                d, decision.type, tuple(name for name, _ in inputs.source.files)
            ),
            sub_agents=d.sub_agents,
            steps=d.steps if decision.steps is None else decision.steps,
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
        return PhaseResult(output=spec, checks=checks, warnings=model_notes)


#: The phase object the runner loads.
PHASE = ArchitecturePhase()
