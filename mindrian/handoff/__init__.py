"""The handoff protocol: typed context in, structured result out (seeds 000 §3 and 001).

An orchestrator builds a :class:`HandoffContext` (usually through
:meth:`HandoffManager.create_delegation`), the manager runs it against a
registered agent, and the agent's answer comes back as a :class:`HandoffResult`.
"""

from mindrian.handoff.adapter import (
    AgentRunner,
    HandoffAgent,
    adapt_agent,
    coerce_result,
)
from mindrian.handoff.context import (
    DEFAULT_TIMEOUT_SECONDS,
    MIN_CLARITY,
    OUTPUT_FORMATS,
    ConversationSummary,
    HandoffContext,
    HandoffRecord,
    HandoffResult,
    PreviousAnalysis,
    ProblemClarity,
    new_handoff_id,
    utc_now,
)
from mindrian.handoff.manager import (
    FRAME_NAMESPACE,
    HUMAN_AGENT_ID,
    Chooser,
    FrameSink,
    HandoffManager,
    UsageRecorder,
    handoff_manager,
    registry_chooser,
    selection_text,
)
from mindrian.handoff.synthesis import SYNTHESIS_AGENT_ID, merge_results
from mindrian.handoff.types import HandoffMode, HandoffType, ReturnBehavior

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "FRAME_NAMESPACE",
    "HUMAN_AGENT_ID",
    "MIN_CLARITY",
    "OUTPUT_FORMATS",
    "SYNTHESIS_AGENT_ID",
    "AgentRunner",
    "Chooser",
    "ConversationSummary",
    "FrameSink",
    "HandoffAgent",
    "HandoffContext",
    "HandoffManager",
    "HandoffMode",
    "HandoffRecord",
    "HandoffResult",
    "HandoffType",
    "PreviousAnalysis",
    "ProblemClarity",
    "ReturnBehavior",
    "UsageRecorder",
    "adapt_agent",
    "coerce_result",
    "handoff_manager",
    "merge_results",
    "new_handoff_id",
    "registry_chooser",
    "selection_text",
    "utc_now",
]
