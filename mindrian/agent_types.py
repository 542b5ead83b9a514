"""The agent types (seed 000 §2): one record per type, read by the builder and the runtime.

Everything that differs between types and is not the behaviour of the base class itself lives
in the type's :class:`AgentTypeRecord`: its defaults (model, generation settings, return
behaviour), the handoffs it accepts, the runtime base class and test contract a generated
package names, the parts it is built from and the workflow they form, and which README example
and skill skeleton it gets. Adding a type is a record here, its base class, its contract and
their tests (ARCHITECTURE.md, "Adding an agent type").

Plain data and the standard library only: the builder reads it without importing Agno.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeGuard

if TYPE_CHECKING:
    from mindrian.workflow.build import WorkflowKind

__all__ = [
    "AGENT_TYPES",
    "AGENT_TYPE_NAMES",
    "AgentType",
    "AgentTypeRecord",
    "GenerationDefaults",
    "Parts",
    "Readme",
    "is_agent_type",
    "record_of",
]

#: The name of an agent type, as a skill spells it (lower case).
AgentType = Literal["operator", "role", "collaborative", "pipeline", "guided"]
#: What a type's agent is built from besides its instructions: workflow steps or team members.
Parts = Literal["steps", "perspectives"]
#: The usage example a package's README shows (``templates/agent/README.md.jinja``).
Readme = Literal["handoff", "conversation", "pipeline", "guided"]


@dataclass(frozen=True)
class GenerationDefaults:
    """Per-type generation settings."""

    temperature: float | None
    """None when extended thinking is on (Anthropic rejects a custom temperature with thinking)."""
    max_tokens: int
    """Response cap; must exceed the thinking budget."""
    thinking_budget: int | None
    """Extended-thinking tokens, for the types that reason at length."""


@dataclass(frozen=True)
class AgentTypeRecord:
    """Everything the builder and the runtime need to know about one agent type."""

    name: AgentType
    """The type's name, as a skill spells it."""
    summary: str
    """The Agno object the base class builds, in a few words."""
    base_class: str
    """The runtime base class a generated agent subclasses, exported by ``mindrian.agents``."""
    module: str
    """The module defining :attr:`base_class` (imported ahead by the build's warm worker)."""
    contract: str
    """The test contract class of ``mindrian.testing.contract`` a package's tests run."""
    model: str
    """The default model (``provider:model_id``) when neither skill nor project names one."""
    generation: GenerationDefaults
    """The default generation settings of that model."""
    return_behavior: str
    """What the agent does with its result by default (seed 000 §2):
    ``synthesize``, ``passthrough`` or ``iterate``."""
    handoffs: tuple[str, ...]
    """The handoff types it accepts; only a role takes over the conversation (``transfer``)."""
    output_model: bool
    """It answers through an output model that its package exports (a structured answer)."""
    converses: bool
    """It answers in markdown and may stop for the user (``needs_human_input`` in its returns)."""
    demands_clarity: bool
    """It refuses an unclear problem; a role raises clarity, so it demands none up front."""
    parts: Parts | None
    """What it is built from besides its instructions; None for a single agent."""
    workflow: WorkflowKind | None
    """The shape of the thought graph its parts form (its package's ``workflow.dot``); None
    when it has none."""
    steps_wait: bool
    """Its steps pause for the user unless a step says otherwise (its gates may be prose)."""
    keeps_state: bool
    """It keeps sessions on disk, so a run gives it the project's state folder."""
    readme: Readme
    """The usage example of its package's README."""
    scaffold: str
    """The skill skeleton ``mindrian new`` writes (``templates/skill``): one of the five
    shapes, named by the type that introduced it."""


#: The types, in the order error messages list them.
AGENT_TYPES: tuple[AgentTypeRecord, ...] = (
    AgentTypeRecord(
        name="operator",
        summary="Agent with output_schema",
        base_class="OperatorAgent",
        module="mindrian.agents.operator",
        contract="OperatorContract",
        model="anthropic:claude-sonnet-4-5",
        generation=GenerationDefaults(0.3, 4096, None),
        return_behavior="synthesize",
        handoffs=("delegate", "return", "escalate"),
        output_model=True,
        converses=False,
        demands_clarity=True,
        parts=None,
        workflow=None,
        steps_wait=False,
        keeps_state=False,
        readme="handoff",
        scaffold="operator",
    ),
    AgentTypeRecord(
        name="role",
        summary="Agent with SQLite history",
        base_class="RoleAgent",
        module="mindrian.agents.role",
        contract="RoleContract",
        model="anthropic:claude-sonnet-4-5",
        generation=GenerationDefaults(0.7, 1024, None),
        return_behavior="passthrough",
        handoffs=("delegate", "transfer", "return", "escalate"),
        output_model=False,
        converses=True,
        demands_clarity=False,
        parts=None,
        workflow=None,
        steps_wait=False,
        keeps_state=True,
        readme="conversation",
        scaffold="role",
    ),
    AgentTypeRecord(
        name="collaborative",
        summary="Team in broadcast mode",
        base_class="CollaborativeAgent",
        module="mindrian.agents.collaborative",
        contract="CollaborativeContract",
        model="anthropic:claude-opus-4-1",
        generation=GenerationDefaults(None, 16000, 8000),
        return_behavior="synthesize",
        handoffs=("delegate", "return", "escalate"),
        output_model=True,
        converses=False,
        demands_clarity=True,
        parts="perspectives",
        workflow="collaborative",
        steps_wait=False,
        keeps_state=False,
        readme="handoff",
        scaffold="collaborative",
    ),
    AgentTypeRecord(
        name="pipeline",
        summary="Workflow, one step per phase",
        base_class="PipelineAgent",
        module="mindrian.agents.pipeline",
        contract="PipelineContract",
        model="anthropic:claude-opus-4-1",
        generation=GenerationDefaults(None, 12000, 4000),
        return_behavior="iterate",
        handoffs=("delegate", "return", "escalate"),
        output_model=False,
        converses=False,
        demands_clarity=True,
        parts="steps",
        workflow="pipeline",
        steps_wait=False,
        keeps_state=True,
        readme="pipeline",
        scaffold="pipeline",
    ),
    AgentTypeRecord(
        name="guided",
        summary="Workflow driven step by step",
        base_class="GuidedAgent",
        module="mindrian.agents.guided",
        contract="GuidedContract",
        model="anthropic:claude-sonnet-4-5",
        generation=GenerationDefaults(0.4, 2048, None),
        return_behavior="iterate",
        handoffs=("delegate", "return", "escalate"),
        output_model=False,
        converses=True,
        demands_clarity=True,
        parts="steps",
        workflow="guided",
        steps_wait=True,
        keeps_state=True,
        readme="guided",
        scaffold="guided",
    ),
)

#: The type names, in the order of :data:`AGENT_TYPES` (``AgentType`` lists the same, for mypy).
AGENT_TYPE_NAMES: tuple[AgentType, ...] = tuple(record.name for record in AGENT_TYPES)

_BY_NAME: dict[str, AgentTypeRecord] = {record.name: record for record in AGENT_TYPES}


def is_agent_type(value: object) -> TypeGuard[AgentType]:
    """Whether ``value`` names one of the agent types (exactly, lower case)."""
    return value in _BY_NAME


def record_of(name: str) -> AgentTypeRecord:
    """The record of type ``name``; KeyError naming the types for another name."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(
            f"unknown agent type {name!r}; expected one of {', '.join(_BY_NAME)}"
        ) from None
