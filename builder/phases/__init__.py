"""The seven phases of the pipeline, in order, and their lazy loader.

Each phase lives in ``builder.phases.<name>`` and exposes its phase object as
``PHASE``. Modules are imported only when the runner reaches the phase, so a
command that needs phase 1 never pays for Agno or Black.
"""

from __future__ import annotations

import importlib

from builder.phases.outputs import AnyPhase
from builder.pipeline.errors import PipelineError, UsageError

__all__ = [
    "PHASE_NAMES",
    "load_phase",
    "phase_number",
    "resolve_phase",
]

#: The pipeline, in the order it runs; a phase's number is its 1-based position.
PHASE_NAMES: tuple[str, ...] = (
    "skill_analysis",
    "architecture",
    "handoff_protocol",
    "tool_assembly",
    "neo4j_schema",
    "code_generation",
    "registration",
)


def phase_number(name: str) -> int:
    """The 1-based number of a phase name (``ValueError`` for an unknown name)."""
    return PHASE_NAMES.index(name) + 1


def resolve_phase(text: str) -> str:
    """A phase name from what a user typed: its name (``architecture``) or number (``2``)."""
    if text.isdigit() and 1 <= int(text) <= len(PHASE_NAMES):
        return PHASE_NAMES[int(text) - 1]
    if text in PHASE_NAMES:
        return text
    choices = ", ".join(f"{n} ({i})" for i, n in enumerate(PHASE_NAMES, 1))
    raise UsageError(f"unknown phase {text!r}; expected one of {choices}", code="U002")


def load_phase(name: str) -> AnyPhase:
    """Import ``builder.phases.<name>`` and return its ``PHASE``.

    Every phase module ships with the package, so an import failure (a broken
    installation, a missing dependency) is an internal error and propagates.
    """
    number = phase_number(name)
    module_name = f"{__name__}.{name}"
    phase: AnyPhase = importlib.import_module(module_name).PHASE
    if phase.name != name or phase.number != number:
        raise PipelineError(
            f"module {module_name} declares phase {phase.name!r} ({phase.number}), expected "
            f"{name!r} ({number})",
            code="P009",
        )
    return phase
