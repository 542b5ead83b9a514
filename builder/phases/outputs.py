"""What the phases hand over: one typed record of the earlier phases' outputs.

The runner builds it as the phases finish and passes it as
``PhaseInput.previous``. Each field reads its output when a phase first calls
it, so a build whose phases are all cached parses no output. The AgentSpec
grows through phases 2-4; ``spec`` is the latest of them, which is what the
next phase reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeAlias

from builder.pipeline.contract import Phase, PhaseInput

if TYPE_CHECKING:  # imported for annotations only: loading a phase stays lazy
    from builder.graph.config import GraphConfig
    from builder.phases.code_generation import GeneratedPackage
    from builder.skill.model import SkillDefinition
    from builder.skill.spec import AgentSpec

__all__ = ["AnyPhase", "Inputs", "Outputs"]


def _not_yet(phase: str) -> Callable[[], Any]:
    def read() -> Any:
        # Only a phase reading a later phase's output gets here: a bug in the builder.
        raise LookupError(f"the output of phase {phase} was read before that phase ran")

    return read


_NO_SKILL = _not_yet("skill_analysis")
_NO_SPEC = _not_yet("architecture")
_NO_GRAPH = _not_yet("neo4j_schema")
_NO_PACKAGE = _not_yet("code_generation")

#: The Outputs field each phase's output fills (phase 7's output is read by no phase).
_FIELD_OF = {
    "skill_analysis": "skill",
    "architecture": "spec",
    "handoff_protocol": "spec",
    "tool_assembly": "spec",
    "neo4j_schema": "graph",
    "code_generation": "package",
}


@dataclass(frozen=True)
class Outputs:
    """The typed outputs of the phases before the one running; call a field to read it."""

    skill: Callable[[], SkillDefinition] = _NO_SKILL
    """Phase 1's SkillDefinition."""
    spec: Callable[[], AgentSpec] = _NO_SPEC
    """The AgentSpec of the latest of phases 2-4 that ran (phase 4's for phases 5-7)."""
    graph: Callable[[], GraphConfig] = _NO_GRAPH
    """Phase 5's GraphConfig."""
    package: Callable[[], GeneratedPackage] = _NO_PACKAGE
    """Phase 6's generated package."""

    def after(self, phase: str, read: Callable[[], Any]) -> Outputs:
        """These outputs and the one of ``phase``, which ``read`` returns (typed by the phase's
        ``output_type``)."""
        field = _FIELD_OF.get(phase)
        return self if field is None else replace(self, **{field: read})


#: What every phase reads.
Inputs: TypeAlias = PhaseInput[Outputs]
#: A phase of this pipeline, whatever its output type.
AnyPhase: TypeAlias = Phase[Outputs, Any]
