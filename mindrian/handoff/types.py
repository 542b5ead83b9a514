"""The three vocabularies of the handoff protocol (seed 000 §3.4-3.5)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["HandoffMode", "HandoffType", "ReturnBehavior"]


class HandoffType(StrEnum):
    """What a handoff does with control of the work."""

    DELEGATE = "delegate"
    """Assign work and expect a result back."""
    TRANSFER = "transfer"
    """Give the conversation to another agent until it returns control."""
    RETURN = "return"
    """Hand finished work (or control) back to the caller."""
    ESCALATE = "escalate"
    """Ask a human for help."""


class HandoffMode(StrEnum):
    """How several handoffs of one step are run together."""

    SEQUENTIAL = "sequential"
    """One after another, each seeing the earlier results."""
    PARALLEL = "parallel"
    """All at once, results combined afterwards."""
    SELECTIVE = "selective"
    """One of several candidates, picked by a router."""
    DEBATE = "debate"
    """Opposing positions over several rounds, each answering the others."""


class ReturnBehavior(StrEnum):
    """What the receiver of a result is expected to do with it."""

    SYNTHESIZE = "synthesize"
    """Fold the result into a combined answer."""
    PASSTHROUGH = "passthrough"
    """Forward the result unchanged."""
    ITERATE = "iterate"
    """Treat the result as partial and hand back for another step."""
