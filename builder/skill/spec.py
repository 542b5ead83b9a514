"""``AgentSpec``: what phases 2–4 decide about an agent, and what phases 5–6 consume.

Phase 2 fills identity, type, model and instructions; phase 3 attaches a
:class:`HandoffConfig`; phase 4 attaches a :class:`ToolConfig`. Every class is
a frozen dataclass that round-trips through ``builder.pipeline.serial`` without loss.
Skill text is carried verbatim as data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from builder.skill.model import (
    AgentType,
    ChainTarget,
    ScoreBand,
    ScoreDimension,
    StepSpec,
    SubAgentSpec,
)

__all__ = [
    "BODY_BLOCK",
    "AgentSpec",
    "CustomToolConfig",
    "GlobalActionConfig",
    "HandoffConfig",
    "HostGrant",
    "HostToolsConfig",
    "InstructionBlock",
    "InstructionElement",
    "InstructionSet",
    "McpServerConfig",
    "ModelConfig",
    "ReceivesConfig",
    "ReturnsConfig",
    "RoutingConfig",
    "ScriptCandidate",
    "ToolConfig",
    "ToolDefinition",
    "reference_summary",
]

#: Key of an instruction block that lies outside every recognised section.
BODY_BLOCK = "body"


@dataclass(frozen=True)
class ModelConfig:
    """The model an agent runs on and its generation settings."""

    provider: str
    """Agno provider key (``anthropic``), as Agno's model-string resolver names it."""
    model_id: str
    """Provider's model id (``claude-sonnet-4-5``)."""
    string: str
    """``provider:model_id``, the form ``agno.agent.Agent(model=...)`` accepts."""
    source: str
    """Where the choice came from: ``skill`` (its ``model`` field) or ``config`` (per-type
    default)."""
    temperature: float | None
    """Sampling temperature; None leaves the provider default (required with extended thinking)."""
    max_tokens: int
    """Upper bound on tokens in one response."""
    thinking_budget: int | None = None
    """Extended-thinking token budget (collaborative and pipeline agents only)."""


@dataclass(frozen=True)
class InstructionBlock:
    """A verbatim slice of the SKILL.md body, heading line included."""

    key: str
    """Canonical section key (``methodology``…) or ``body`` for text outside recognised sections."""
    title: str
    """The section heading without ``#`` marks; empty for ``body`` blocks."""
    line: int
    """1-based SKILL.md line where the slice starts."""
    text: str
    """The slice exactly as written."""


@dataclass(frozen=True)
class InstructionElement:
    """An on-demand instruction element from ``references/*.md`` (seed 004, tier 3).

    Its text is not kept here: the package holds the file once, byte-identical, at ``path``
    under its ``skill/`` folder, where ``read_reference`` reads it.
    """

    name: str
    """Element id (``pricing-guide``), what the agent asks for."""
    title: str
    """Human title (first heading of the file)."""
    path: str
    """Path relative to the skill folder (and to the package's ``skill/``)."""
    summary: str
    """The file's first line of prose (:func:`reference_summary`), listed in the instructions."""
    digest: str
    """SHA-256 hex of the file's bytes."""


#: Longest one-line summary of a reference element in the instructions' listing.
SUMMARY_LIMIT = 100


def reference_summary(text: str) -> str:
    """The first line of prose (not a heading) of ``text``, cut at :data:`SUMMARY_LIMIT`
    characters; "" when it has none."""
    for line in text.splitlines():
        words = " ".join(line.split())
        if words and not words.startswith(("#", "```", "---", "<!--")):
            return words if len(words) <= SUMMARY_LIMIT else words[: SUMMARY_LIMIT - 1] + "…"
    return ""


@dataclass(frozen=True)
class InstructionSet:
    """Everything the agent is told, with no body text dropped."""

    system_prompt: str
    """Opening identity statement from name and type (the description goes to Agno by itself)."""
    tone: str = ""
    """Voice of the agent (front-matter ``tone``)."""
    behavioral_rules: tuple[str, ...] = ()
    """Rules from front matter and the behavioural-rules section, in order."""
    blocks: tuple[InstructionBlock, ...] = ()
    """The whole body in document order, split at recognised sections."""
    elements: tuple[InstructionElement, ...] = ()
    """Reference files loaded only when the agent asks for them."""
    files: tuple[str, ...] = ()
    """The skill's other files its package holds (scripts, assets, examples, templates …),
    relative to the skill's base directory, sorted; ``references/*.md`` are ``elements``."""

    def section(self, key: str) -> str:
        """Text of the first block with this key (heading line included), or ``""``."""
        return next((b.text for b in self.blocks if b.key == key), "")

    def unlisted_rules(self) -> tuple[str, ...]:
        """The rules the body does not state itself (front-matter rules), in order."""
        return tuple(r for r in self.behavioral_rules if not any(r in b.text for b in self.blocks))

    def render_markdown(self) -> str:
        """The instruction text in a fixed layout (what ``instructions.md`` holds).

        The body goes in whole; rules it does not state itself (the front
        matter's) are listed before it, so front-matter and body rules both
        reach the model, each once. The description is not repeated here: the
        runtime gives it to Agno, which puts it at the top of the system message.
        """
        parts = [self.system_prompt.strip()]
        if self.tone:
            parts.append(f"Tone: {self.tone.strip()}")
        unlisted = self.unlisted_rules()
        if unlisted:
            parts.append("Behavioral rules:\n" + "\n".join(f"- {r}" for r in unlisted))
        parts.extend(b.text.strip("\n") for b in self.blocks)
        if self.elements:
            listing = "\n".join(
                f"- `{e.name}`: {e.title}" + (f" ({s})" if (s := e.summary) else "")
                for e in self.elements
            )
            parts.append(
                "On-demand reference elements (call `read_reference` with the name when "
                "needed):\n" + listing
            )
        if self.files:
            parts.append(
                "The skill's own files, relative to its base directory:\n"
                + "\n".join(f"- `{name}`" for name in self.files)
            )
        return "\n\n".join(p for p in parts if p) + "\n"


@dataclass(frozen=True)
class ReceivesConfig:
    """What the agent expects in the ``HandoffContext`` it is given."""

    fields: tuple[str, ...]
    """HandoffContext fields the agent reads (checked against the runtime class)."""
    clarity_questions: tuple[str, ...]
    """ProblemClarity questions that must be answered (``what``, ``who``, ``success``)."""
    min_clarity: float
    """Overall problem clarity (0–1) required before the agent runs."""
    previous_analyses: bool
    """Earlier agents' results are passed in."""
    focus_areas: bool
    """The caller may narrow the task with focus/ignore areas."""
    conversation_context: bool
    """A summary of the conversation so far is passed in."""


@dataclass(frozen=True)
class ReturnsConfig:
    """What the agent puts in the ``HandoffResult`` it returns."""

    fields: tuple[str, ...]
    """HandoffResult fields the agent fills (checked against the runtime class)."""
    output_format: str
    """``markdown`` or ``structured``."""
    scores: tuple[str, ...] = ()
    """Keys of ``HandoffResult.scores`` (the skill's named scores)."""
    suggested_next_agents: tuple[str, ...] = ()
    """Agent ids offered as follow-ups (from ``chains_to``)."""
    data_schema: Mapping[str, Any] = field(default_factory=dict)
    """JSON Schema of ``HandoffResult.data``, inferred from the output template's JSON example
    when the skill declares no scores; empty when the answer has no data."""


@dataclass(frozen=True)
class RoutingConfig:
    """Who may call the agent and where its results go."""

    can_delegate_to: tuple[str, ...] = ()
    """Agent ids it may hand work to."""
    can_be_called_by: tuple[str, ...] = ()
    """Agent ids allowed to call it; empty means any."""
    default_return_to: str | None = None
    """Where results go when the context names no ``return_to``; None means the caller."""
    return_behavior: str = "synthesize"
    """``synthesize``, ``passthrough`` or ``iterate``."""


@dataclass(frozen=True)
class HandoffConfig:
    """Phase 3: the agent's handoff contract."""

    receives: ReceivesConfig
    """Input side."""
    returns: ReturnsConfig
    """Output side."""
    routing: RoutingConfig
    """Routing rules."""
    supports: tuple[str, ...]
    """Handoff types the agent accepts (``delegate``, ``transfer``, ``return``, ``escalate``)."""
    decisions: tuple[str, ...] = ()
    """Why each default was chosen, one sentence each (shown by ``mindrian explain``)."""


@dataclass(frozen=True)
class ToolDefinition:
    """A tool as the model sees it, in seed 004 §3 form (validated by ``tool.schema.json``)."""

    name: str
    """Tool name the model calls."""
    description: str
    """What the tool does."""
    parameters: Mapping[str, Any]
    """JSON Schema of the arguments (an ``object`` schema)."""


@dataclass(frozen=True)
class McpServerConfig:
    """An MCP server the agent connects to, resolved from the catalog.

    Whether the build machine could start or reach it is reported by phase 4's
    ``mcps_connected`` check and warnings, never kept here: the spec is reviewed
    output, and the same skill must give the same spec on every machine.
    """

    name: str
    """Catalog name (``neo4j``)."""
    transport: str
    """``stdio`` or ``streamable-http``."""
    command: str = ""
    """Executable for stdio servers."""
    args: tuple[str, ...] = ()
    """Its arguments."""
    url: str = ""
    """Endpoint for HTTP servers."""
    env: tuple[str, ...] = ()
    """Names of the environment variables the server needs (never their values)."""
    package: str = ""
    """Where the server is published (``pypi:mcp-neo4j-cypher``)."""
    tools: tuple[str, ...] = ()
    """Tools the agent uses from it."""
    required: bool = True
    """Whether the build fails when the server cannot be reached."""
    definitions: tuple[ToolDefinition, ...] = ()
    """Definitions of the requested tools as the server reported them (handshake only)."""
    line: int = 0
    """1-based SKILL.md line of the request."""


@dataclass(frozen=True)
class CustomToolConfig:
    """A Python function exposed as a tool."""

    name: str
    """Tool name the model sees."""
    function: str
    """Dotted import path."""
    definition: ToolDefinition
    """Derived from the function's type hints and docstring."""
    line: int = 0
    """1-based SKILL.md line of the request."""


@dataclass(frozen=True)
class GlobalActionConfig:
    """An action available in every phase, bound to a tool (seed 000 §4.3)."""

    action: str
    """Action name (``save_progress``)."""
    tool: str
    """Name of the tool that performs it."""
    server: str = ""
    """MCP server of that tool; empty for a custom tool."""
    description: str = ""
    """What the action is for."""
    line: int = 0
    """1-based SKILL.md line of the request."""


@dataclass(frozen=True)
class ScriptCandidate:
    """A ``scripts/`` file listed as a possible tool (not wired automatically)."""

    path: str
    """Path relative to the skill folder."""
    language: str
    """Guessed language."""


@dataclass(frozen=True)
class HostGrant:
    """Why the agent gets one host tool: the rule and the line of the skill that granted it."""

    tool: str
    """The host tool (``Bash``)."""
    reason: str
    """What granted it, in a few words (``allowed-tools names Bash(git status:*) (line 4)``)."""
    line: int = 0
    """1-based SKILL.md line that granted it."""


@dataclass(frozen=True)
class HostToolsConfig:
    """The host's tools the agent gets (Bash, Read, …) and the calls that run without asking.

    Decided by phase 4's one rule (``builder/skill/host_tools.py``, README "Host tools"):
    granting a tool is not pre-approving it; only ``allowed-tools`` pre-approves.
    """

    grant: tuple[str, ...] = ()
    """Tool names the agent gets, in the canonical order of ``mindrian.host.HOST_TOOLS``."""
    allow: tuple[str, ...] = ()
    """Pre-approved permission patterns (``Bash(git status:*)``, ``Read``), as the skill's
    ``allowed-tools`` writes them, in its order; every other call of a granted tool asks."""
    reasons: tuple[HostGrant, ...] = ()
    """One per granted tool, in ``grant`` order."""


@dataclass(frozen=True)
class ToolConfig:
    """Phase 4: every tool the agent can call."""

    mcp_servers: tuple[McpServerConfig, ...] = ()
    """MCP servers, in request order."""
    custom_tools: tuple[CustomToolConfig, ...] = ()
    """Python functions, in request order."""
    global_actions: tuple[GlobalActionConfig, ...] = ()
    """Actions bound to tools."""
    scripts: tuple[ScriptCandidate, ...] = ()
    """Tool candidates from ``scripts/``."""
    connection_check: str = "configuration"
    """``configuration`` (PATH/URL checked) or ``handshake`` (servers really contacted)."""
    host: HostToolsConfig = field(default_factory=HostToolsConfig)
    """The host's tools (Bash, Read, Write, Edit, Glob, Grep, WebFetch) the agent gets."""

    def tool_names(self) -> tuple[str, ...]:
        """Every tool name the model sees, MCP first, in request order."""
        mcp = tuple(t for s in self.mcp_servers for t in s.tools)
        return mcp + tuple(c.name for c in self.custom_tools)


@dataclass(frozen=True)
class AgentSpec:
    """An agent as the builder understands it; grows through phases 2–4."""

    id: str
    """Normalised id (``pws-validation``)."""
    identifier: str
    """Python identifier (``pws_validation``)."""
    name: str
    """Display name (phase 1's ``display_name``: a title where ``name`` is a folder slug)."""
    description: str
    """Description as written."""
    version: str
    """Skill version."""
    source_path: str
    """SKILL.md as the user named it."""
    source_digest: str
    """Digest of SKILL.md and its folder."""
    type: AgentType
    """How the agent is built on Agno."""
    type_rule: str
    """Id of the rule that decided the type (``explicit``, ``sub_agents``…)."""
    type_reason: str
    """The rule in one sentence, with the evidence."""
    model: ModelConfig
    """Model and generation settings."""
    instructions: InstructionSet
    """What the agent is told."""
    sub_agents: tuple[SubAgentSpec, ...] = ()
    """Perspectives of a collaborative agent."""
    steps: tuple[StepSpec, ...] = ()
    """Steps of a pipeline or guided agent."""
    scores: tuple[ScoreDimension, ...] = ()
    """Named scores the agent returns."""
    score_bands: tuple[ScoreBand, ...] = ()
    """Verdicts over the total score."""
    triggers: tuple[str, ...] = ()
    """Words that should select this framework."""
    problem_types: tuple[str, ...] = ()
    """Problem types it is good for."""
    good_for: Mapping[str, float] = field(default_factory=dict)
    """GOOD_FOR confidence per problem type the skill rates; the others get the default."""
    chains_to: tuple[ChainTarget, ...] = ()
    """Frameworks it hands on to."""
    handoff: HandoffConfig | None = None
    """Phase 3's contract; None until then."""
    tools: ToolConfig | None = None
    """Phase 4's tools; None until then."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Front-matter entries no phase models, kept for later phases."""

    @property
    def contract(self) -> HandoffConfig:
        """Phase 3's contract, for the phases after it. The runner runs phase 3 before them, so
        reading it sooner is a bug (a ``LookupError``, reported as internal), not bad input."""
        if self.handoff is None:
            raise LookupError(f"{self.id}: phase 3's handoff contract was read before phase 3 ran")
        return self.handoff
