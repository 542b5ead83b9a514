"""Factories shared by the phase 2–4 tests: skill definitions, phase inputs, runtime contracts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from builder.phases.handoff_protocol import RuntimeContract
from builder.phases.outputs import Outputs
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import PhaseInput, SkillSource
from builder.skill.model import Section, SkillDefinition

__all__ = ["body_with_sections", "contract", "outputs_of", "phase_input", "run_phases", "skill"]

#: Field names of the seed 000 §3 classes, used when a test needs a stand-in runtime.
SEED_CONTEXT_FIELDS = (
    "handoff_id",
    "timestamp",
    "problem_clarity",
    "conversation",
    "session_id",
    "previous_analyses",
    "task_description",
    "expected_output",
    "focus_areas",
    "ignore_areas",
    "from_agent",
    "to_agent",
    "return_to",
    "return_behavior",
    "handoff_type",
    "handoff_mode",
    "priority",
    "timeout_seconds",
)
SEED_RESULT_FIELDS = (
    "handoff_id",
    "from_agent",
    "to_agent",
    "success",
    "output",
    "output_format",
    "key_findings",
    "recommendations",
    "confidence",
    "scores",
    "suggested_next_agents",
    "open_questions",
    "needs_human_input",
    "human_input_reason",
    "duration_seconds",
    "error",
)


def contract(**changes: Any) -> RuntimeContract:
    """A runtime contract with the seed's fields, optionally changed."""
    base = RuntimeContract(
        context_fields=SEED_CONTEXT_FIELDS,
        result_fields=SEED_RESULT_FIELDS,
        handoff_types=("delegate", "transfer", "return", "escalate"),
        return_behaviors=("synthesize", "passthrough", "iterate"),
        min_clarity=0.6,
    )
    return replace(base, **changes)


def skill(**changes: Any) -> SkillDefinition:
    """A minimal valid SkillDefinition (operator by default rules), with fields overridden."""
    base = SkillDefinition(
        id="sample-skill",
        identifier="sample_skill",
        name="Sample Skill",
        description="Turns a messy problem statement into a structured answer.",
        display_name="Sample Skill",
        source_path="skills/sample/SKILL.md",
        source_digest="0" * 64,
        body="Do the thing carefully.\n",
        body_line=5,
    )
    # Phase 1 shows a title-like name as written: a changed name is the display name too.
    changes.setdefault("display_name", changes.get("name", base.display_name))
    return replace(base, **changes)


def body_with_sections(body: str, body_line: int, keys: dict[str, str]) -> tuple[Section, ...]:
    """Sections for the headings named in ``keys`` (heading text -> canonical key), as phase 1
    reports them."""
    lines = body.split("\n")
    found = []
    heads = [(i, ln) for i, ln in enumerate(lines) if ln.startswith("#")]
    for n, (i, ln) in enumerate(heads):
        level = len(ln) - len(ln.lstrip("#"))
        title = ln.lstrip("#").strip()
        if title not in keys:
            continue
        end = next(
            (j for j, h in heads[n + 1 :] if len(h) - len(h.lstrip("#")) <= level),
            len(lines),
        )
        text = "\n".join(lines[i + 1 : end]).strip("\n")
        found.append(
            Section(
                key=keys[title],
                heading=title,
                level=level,
                line=body_line + i,
                text=text,
            )
        )
    return tuple(found)


def outputs_of(previous: dict[str, Any]) -> Outputs:
    """The hand-over of the earlier phases' outputs given by phase name, in pipeline order."""
    outputs = Outputs()
    for name, output in previous.items():
        outputs = outputs.after(name, lambda output=output: output)
    return outputs


def phase_input(previous: dict[str, Any], **config: Any) -> PhaseInput[Outputs]:
    """A PhaseInput around earlier outputs (by phase name, in pipeline order)."""
    definition = previous["skill_analysis"]
    source = SkillSource(path=definition.source_path, data=b"", digest=definition.source_digest)
    return PhaseInput(source=source, config=BuildConfig(**config), previous=outputs_of(previous))


def run_phases(
    definition: SkillDefinition,
    until: int = 4,
    *,
    runtime: RuntimeContract | None = None,
    **config: Any,
):
    """Run phases 2..until on a definition; returns {phase name: PhaseResult}."""
    from builder.mcp.probe import check_configuration
    from builder.phases.architecture import PHASE as ARCH
    from builder.phases.handoff_protocol import HandoffProtocolPhase
    from builder.phases.tool_assembly import ToolAssemblyPhase

    phases = [
        ARCH,
        HandoffProtocolPhase(lambda: runtime or contract()),
        ToolAssemblyPhase(check_configuration),
    ]
    previous: dict[str, Any] = {"skill_analysis": definition}
    results = {}
    for phase in phases[: until - 1]:
        result = phase.run(phase_input(previous, **config))
        previous[phase.name] = result.output
        results[phase.name] = result
    return results


def analyse(path: str, root: str) -> SkillDefinition:
    """Phase 1 on a real SKILL.md (``path`` relative to ``root``), as the runner would run it."""
    import pytest

    source_mod = pytest.importorskip(
        "builder.skill.source", reason="phase 1 (builder/source.py) is not written yet"
    )
    phase_mod = pytest.importorskip(
        "builder.phases.skill_analysis", reason="phase 1 is not written yet"
    )
    source = source_mod.load_source(Path(root) / path, display=path)
    result = phase_mod.PHASE.run(
        PhaseInput(source=source, config=BuildConfig(root=root), previous=Outputs())
    )
    return result.output
