"""The handoff protocol: typed context in, structured result out (seeds 000 §3 and 001).

An orchestrator builds a :class:`HandoffContext` (usually through
:meth:`HandoffManager.create_delegation`), the manager runs it against a
registered agent, and the agent's answer comes back as a :class:`HandoffResult`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mindrian.lazy import lazy_attributes

# Submodules load on first use: the builder reads the context types (phase 3) without the
# manager's asyncio, and an agent loads only what it uses.
if TYPE_CHECKING:
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

#: Where each public name lives.
_HOME = {
    "AgentRunner": "mindrian.handoff.adapter",
    "Chooser": "mindrian.handoff.manager",
    "ConversationSummary": "mindrian.handoff.context",
    "DEFAULT_TIMEOUT_SECONDS": "mindrian.handoff.context",
    "FRAME_NAMESPACE": "mindrian.handoff.manager",
    "FrameSink": "mindrian.handoff.manager",
    "HUMAN_AGENT_ID": "mindrian.handoff.manager",
    "HandoffAgent": "mindrian.handoff.adapter",
    "HandoffContext": "mindrian.handoff.context",
    "HandoffManager": "mindrian.handoff.manager",
    "HandoffMode": "mindrian.handoff.types",
    "HandoffRecord": "mindrian.handoff.context",
    "HandoffResult": "mindrian.handoff.context",
    "HandoffType": "mindrian.handoff.types",
    "MIN_CLARITY": "mindrian.handoff.context",
    "OUTPUT_FORMATS": "mindrian.handoff.context",
    "PreviousAnalysis": "mindrian.handoff.context",
    "ProblemClarity": "mindrian.handoff.context",
    "ReturnBehavior": "mindrian.handoff.types",
    "SYNTHESIS_AGENT_ID": "mindrian.handoff.synthesis",
    "UsageRecorder": "mindrian.handoff.manager",
    "adapt_agent": "mindrian.handoff.adapter",
    "coerce_result": "mindrian.handoff.adapter",
    "handoff_manager": "mindrian.handoff.manager",
    "merge_results": "mindrian.handoff.synthesis",
    "new_handoff_id": "mindrian.handoff.context",
    "registry_chooser": "mindrian.handoff.manager",
    "selection_text": "mindrian.handoff.manager",
    "utc_now": "mindrian.handoff.context",
}


_lazy = lazy_attributes(__name__, _HOME, globals())


def __getattr__(name: str) -> Any:
    return _lazy(name)
