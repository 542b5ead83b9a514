"""Base classes of the Mindrian agent types, on Agno (seed 000 §2, §7).

A generated agent subclasses one base and sets class attributes only. Each type's base class,
the module defining it and the Agno object it builds are in its record
(:data:`mindrian.agent_types.AGENT_TYPES`); the five of seed 000 are :class:`OperatorAgent`
(an ``Agent`` with ``output_schema``), :class:`RoleAgent` (an ``Agent`` with SQLite history),
:class:`CollaborativeAgent` (a ``Team`` in broadcast mode), :class:`PipelineAgent` (a
``Workflow``, one step per phase) and :class:`GuidedAgent` (a ``Workflow`` driven step by step).

Every agent has ``run(message)``, ``process_handoff(context)`` (never raises)
and ``create_handoff_context(challenge, ...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mindrian.agent_types import AGENT_TYPES
from mindrian.lazy import lazy_attributes

# Submodules load on first use: the builder names output schemas without paying for Agno's
# Agent, Team and Workflow (over a second of imports), and an agent loads only its own base.
if TYPE_CHECKING:
    from mindrian.agents.base import (
        STATE_DIR_ENV,
        AgentReply,
        MindrianAgent,
        ModelRef,
        Partial,
        resolve_state_dir,
    )
    from mindrian.agents.collaborative import CollaborativeAgent
    from mindrian.agents.errors import AgentRunError, HandoffRefusedError
    from mindrian.agents.guided import BACK, SKIP, GuidedAgent, GuidedProgress
    from mindrian.agents.mcp import McpUnavailableError
    from mindrian.agents.operator import OperatorAgent, SchemaMismatchError
    from mindrian.agents.output import HandoffOutput
    from mindrian.agents.pipeline import PipelineAgent, PipelineCheckpoint
    from mindrian.agents.role import RoleAgent

__all__ = [
    "BACK",
    "SKIP",
    "STATE_DIR_ENV",
    "AgentReply",
    "AgentRunError",
    "CollaborativeAgent",
    "GuidedAgent",
    "GuidedProgress",
    "HandoffOutput",
    "HandoffRefusedError",
    "McpUnavailableError",
    "MindrianAgent",
    "ModelRef",
    "OperatorAgent",
    "Partial",
    "PipelineAgent",
    "PipelineCheckpoint",
    "RoleAgent",
    "SchemaMismatchError",
    "resolve_state_dir",
]

#: Where each public name lives; each type's base class where its record says.
_HOME = {
    **{record.base_class: record.module for record in AGENT_TYPES},
    "AgentReply": "mindrian.agents.base",
    "AgentRunError": "mindrian.agents.errors",
    "BACK": "mindrian.agents.guided",
    "GuidedProgress": "mindrian.agents.guided",
    "HandoffOutput": "mindrian.agents.output",
    "HandoffRefusedError": "mindrian.agents.errors",
    "McpUnavailableError": "mindrian.agents.mcp",
    "MindrianAgent": "mindrian.agents.base",
    "ModelRef": "mindrian.agents.base",
    "Partial": "mindrian.agents.base",
    "PipelineCheckpoint": "mindrian.agents.pipeline",
    "SKIP": "mindrian.agents.guided",
    "STATE_DIR_ENV": "mindrian.agents.base",
    "SchemaMismatchError": "mindrian.agents.operator",
    "resolve_state_dir": "mindrian.agents.base",
}


_lazy = lazy_attributes(__name__, _HOME, globals())


def __getattr__(name: str) -> Any:
    return _lazy(name)
