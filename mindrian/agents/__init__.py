"""Base classes of the five Mindrian agent types, on Agno (seed 000 §2, §7).

A generated agent subclasses one base and sets class attributes only:

=============  ==========================================  ==============================
type           base                                        Agno object (``.agent``)
=============  ==========================================  ==============================
OPERATOR       :class:`OperatorAgent`                      ``Agent`` with ``output_schema``
ROLE           :class:`RoleAgent`                          ``Agent`` with SQLite history
COLLABORATIVE  :class:`CollaborativeAgent`                 ``Team`` in broadcast mode
PIPELINE       :class:`PipelineAgent`                      ``Workflow``, one step per phase
GUIDED         :class:`GuidedAgent`                        ``Workflow`` driven step by step
=============  ==========================================  ==============================

Every agent has ``run(message)``, ``process_handoff(context)`` (never raises)
and ``create_handoff_context(challenge, ...)``.
"""

from mindrian.agents.base import (
    STATE_DIR_ENV,
    AgentReply,
    AgentRunError,
    HandoffRefusedError,
    MindrianAgent,
    ModelRef,
    Partial,
    resolve_state_dir,
)
from mindrian.agents.collaborative import CollaborativeAgent
from mindrian.agents.guided import BACK, SKIP, GuidedAgent, GuidedProgress
from mindrian.agents.mcp import McpUnavailableError
from mindrian.agents.operator import HandoffOutput, OperatorAgent, SchemaMismatchError
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
