"""``SkillDefinition``: the typed output of phase 1 (skill analysis).

Every later phase reads the skill only through this model. Text fields are
kept verbatim: they are data, never code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AGENT_TYPES",
    "SECTION_KEYS",
    "Section",
    "Reference",
    "ScriptFile",
    "FieldSpec",
    "ChainTarget",
    "McpServerRequest",
    "CustomToolRequest",
    "GlobalActionRequest",
    "SubAgentSpec",
    "StepSpec",
    "ScoreDimension",
    "ScoreBand",
    "HandoffRequest",
    "SkillDefinition",
]

#: The five agent types, in the order error messages list them.
AGENT_TYPES: tuple[str, ...] = ("operator", "role", "collaborative", "pipeline", "guided")

#: Canonical keys of the body sections phase 1 recognises by heading.
SECTION_KEYS: tuple[str, ...] = (
    "methodology",
    "output_template",
    "quality_criteria",
    "behavioral_rules",
    "perspectives",
    "phases",
    "examples",
)


@dataclass(frozen=True)
class Section:
    """A recognised body section, found by its heading."""

    key: str
    """Canonical key, one of ``SECTION_KEYS``."""
    heading: str
    """The heading text as written (without the ``#`` marks)."""
    level: int
    """Heading level (1 for ``#``, 2 for ``##``, …)."""
    line: int
    """1-based line of the heading in SKILL.md."""
    text: str
    """The section's content verbatim, deeper subsections included, heading excluded."""


@dataclass(frozen=True)
class Reference:
    """A ``references/*.md`` file, loaded on demand by the agent (seed 004 tier 3)."""

    name: str
    """Element id derived from the file name (``pricing-guide``)."""
    path: str
    """Path relative to the skill folder, POSIX separators."""
    title: str
    """First heading of the file, else its name."""
    text: str
    """The file's content verbatim."""
    digest: str
    """SHA-256 hex of the file's bytes."""


@dataclass(frozen=True)
class ScriptFile:
    """A file under ``scripts/``, listed as a tool candidate."""

    path: str
    """Path relative to the skill folder, POSIX separators."""
    language: str
    """Guessed from the extension (``python``, ``shell``, ``javascript``, ``other``)."""
    digest: str
    """SHA-256 hex of the file's bytes."""


@dataclass(frozen=True)
class FieldSpec:
    """A named input or output the skill declares."""

    name: str
    """Field name as written."""
    description: str = ""
    """What it holds."""
    required: bool = False
    """Whether the skill cannot work without it."""


@dataclass(frozen=True)
class ChainTarget:
    """A framework this skill hands on to (``chains_to``)."""

    target: str
    """Normalised id of the target framework."""
    weight: float | None = None
    """Edge weight 0–1, or None for the registry's default."""
    line: int = 0
    """1-based line in SKILL.md."""


@dataclass(frozen=True)
class McpServerRequest:
    """An MCP server the skill wants, with the tools it will call."""

    server: str
    """Catalog name of the server (``neo4j``)."""
    tools: tuple[str, ...] = ()
    """Tool names it needs from that server."""
    required: bool = True
    """A required server that cannot be reached fails the build; an optional one warns."""
    line: int = 0
    """1-based line in SKILL.md."""


@dataclass(frozen=True)
class CustomToolRequest:
    """A Python function exposed to the agent as a tool."""

    name: str
    """Tool name the model sees."""
    function: str
    """Dotted import path (``package.module.function``)."""
    description: str = ""
    """What it does; the docstring is used when empty."""
    line: int = 0
    """1-based line in SKILL.md."""


@dataclass(frozen=True)
class GlobalActionRequest:
    """An action available in every phase, mapped onto a tool (seed 000 §4.3)."""

    action: str
    """Action name (``save_progress``)."""
    tool: str
    """``server.tool`` or custom tool name that performs it."""
    description: str = ""
    """What it is for."""
    line: int = 0
    """1-based line in SKILL.md."""


@dataclass(frozen=True)
class SubAgentSpec:
    """One perspective of a collaborative skill."""

    name: str
    """Sub-agent name as written (``White Hat``)."""
    instructions: str
    """What this perspective does, verbatim."""
    line: int = 0
    """1-based line in SKILL.md."""


@dataclass(frozen=True)
class StepSpec:
    """One phase/step of a pipeline or guided skill."""

    name: str
    """Step name as written."""
    instructions: str = ""
    """What happens in the step, verbatim."""
    waits_for_user: bool = False
    """The step pauses for the user before going on (guided skills)."""
    line: int = 0
    """1-based line in SKILL.md."""


@dataclass(frozen=True)
class ScoreDimension:
    """A named score the agent returns (``problem`` 0–25)."""

    name: str
    """Score key in ``HandoffResult.scores``."""
    minimum: float = 0.0
    """Lowest possible value."""
    maximum: float = 1.0
    """Highest possible value."""
    description: str = ""
    """What is scored."""


@dataclass(frozen=True)
class ScoreBand:
    """A verdict for a range of the total score (``PIVOT`` from 60)."""

    label: str
    """Verdict label."""
    minimum: float
    """Lowest total (inclusive) that earns this label."""
    maximum: float
    """Highest total (inclusive) that earns this label."""


@dataclass(frozen=True)
class HandoffRequest:
    """The ``handoff`` front-matter block: what the skill receives and returns."""

    receives: tuple[str, ...] = ()
    """HandoffContext fields the skill relies on."""
    returns: tuple[str, ...] = ()
    """HandoffResult fields the skill fills."""
    min_clarity: float | None = None
    """Minimum problem clarity (0–1) before the skill runs."""
    can_delegate_to: tuple[str, ...] = ()
    """Agent ids it may delegate to."""
    can_be_called_by: tuple[str, ...] = ()
    """Agent ids allowed to call it (empty: anyone)."""
    default_return_to: str | None = None
    """Where results go when the context names no ``return_to``."""
    return_behavior: str | None = None
    """``synthesize``, ``passthrough`` or ``iterate``; None for the type's default."""
    line: int = 0
    """1-based line of the ``handoff`` key."""


@dataclass(frozen=True)
class SkillDefinition:
    """A parsed, validated SKILL.md and its folder."""

    id: str
    """Normalised id (``pws-validation``)."""
    identifier: str
    """Python identifier (``pws_validation``), suffixed when it would clash with a keyword."""
    name: str
    """``name`` as written."""
    description: str
    """``description`` as written."""
    source_path: str
    """SKILL.md as the user named it, POSIX separators."""
    source_digest: str
    """Digest of SKILL.md and its folder files (``SkillSource.digest``)."""
    type: str | None = None
    """Explicit agent type (one of ``AGENT_TYPES``), None when phase 2 must infer it."""
    version: str = "0.1.0"
    """Skill version."""
    license: str | None = None
    """Agent Skills ``license``."""
    compatibility: str | None = None
    """Agent Skills ``compatibility``."""
    allowed_tools: tuple[str, ...] = ()
    """Agent Skills ``allowed-tools``."""
    model: str | None = None
    """Explicit ``provider:model_id``."""
    tone: str | None = None
    """Voice of the agent."""
    triggers: tuple[str, ...] = ()
    """Words that should select this framework."""
    problem_types: tuple[str, ...] = ()
    """Problem types it is good for."""
    inputs: tuple[FieldSpec, ...] = ()
    """Declared inputs."""
    outputs: tuple[FieldSpec, ...] = ()
    """Declared outputs."""
    chains_to: tuple[ChainTarget, ...] = ()
    """Frameworks this one hands on to."""
    mcp_servers: tuple[McpServerRequest, ...] = ()
    """MCP servers requested (``mcp_tools`` or ``tools.mcp_servers``)."""
    custom_tools: tuple[CustomToolRequest, ...] = ()
    """Python functions requested as tools."""
    global_actions: tuple[GlobalActionRequest, ...] = ()
    """Actions available in every phase."""
    behavioral_rules: tuple[str, ...] = ()
    """Rules from front matter and the behavioural-rules section, in order."""
    handoff: HandoffRequest | None = None
    """The ``handoff`` block, when present."""
    sub_agents: tuple[SubAgentSpec, ...] = ()
    """Perspectives from ``sub_agents`` or a perspectives section."""
    steps: tuple[StepSpec, ...] = ()
    """Ordered steps from ``phases`` or a phases/steps section."""
    scores: tuple[ScoreDimension, ...] = ()
    """Named scores the agent returns."""
    score_bands: tuple[ScoreBand, ...] = ()
    """Verdict bands over the total score, highest first."""
    sections: tuple[Section, ...] = ()
    """Recognised body sections, in document order."""
    body: str = ""
    """The whole markdown body verbatim (nothing is lost when no section is recognised)."""
    body_line: int = 1
    """1-based line of SKILL.md where the body starts."""
    references: tuple[Reference, ...] = ()
    """``references/*.md`` files, sorted by path."""
    scripts: tuple[ScriptFile, ...] = ()
    """``scripts/*`` files, sorted by path."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Front-matter entries not modelled above, as plain data."""
    field_lines: Mapping[str, int] = field(default_factory=dict)
    """Line of each front-matter key path (``tools.mcp_servers.0.server``), for later phases' errors."""

    def section(self, key: str) -> Section | None:
        """The first section with this canonical key, if any."""
        return next((s for s in self.sections if s.key == key), None)
