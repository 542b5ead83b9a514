"""What an agent run raises when it ends without a usable answer.

Below :mod:`mindrian.agents.base` and :mod:`mindrian.agents.mcp`, which both raise them, so
neither has to import the other to do so.
"""

from __future__ import annotations

from typing import Any

from mindrian.errors import MindrianError

__all__ = ["AgentRunError", "HandoffRefusedError"]


class AgentRunError(MindrianError, RuntimeError):
    """An agent run ended without a usable answer."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable
        """False when the same run would fail the same way (its model has no API key)."""


class HandoffRefusedError(AgentRunError):
    """A handoff the agent's contract does not allow; the model is never asked."""

    def __init__(self, refusal: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.refusal = refusal
        """``needs_clarification``, ``caller_refused`` or ``handoff_type_refused`` (the
        HandoffResult's ``code``)."""
        self.details = details
        """Further HandoffResult fields of the refusal (``open_questions``...)."""
