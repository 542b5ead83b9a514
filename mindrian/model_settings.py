"""The generation settings of a model, apart from Agno so the builder can name them cheaply.

:mod:`mindrian.agents.models` applies them to Agno's model classes; phase 2 of
the builder keeps a cached answer about them and need not import any provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ModelSettings"]


@dataclass(frozen=True)
class ModelSettings:
    """The generation settings of a spec's ``model`` block."""

    temperature: float | None = None
    """Sampling temperature; None keeps the provider default."""
    max_tokens: int | None = None
    """Upper bound on tokens in one response; None keeps the provider default."""
    thinking_budget: int | None = None
    """Extended-thinking token budget; None leaves thinking off."""

    @classmethod
    def from_spec(cls, model: Mapping[str, Any]) -> ModelSettings:
        """The settings of a spec's ``model`` mapping (``spec.yaml``)."""
        return cls(
            temperature=model.get("temperature"),
            max_tokens=model.get("max_tokens"),
            thinking_budget=model.get("thinking_budget"),
        )

    @property
    def empty(self) -> bool:
        """Whether every setting keeps the provider default."""
        return self == ModelSettings()
