"""The generation settings of a model, apart from Agno so the builder can name them cheaply.

:mod:`mindrian.providers` applies them to Agno's model classes; phase 2 of the
builder keeps a cached answer about them and need not import any provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["ModelSettings", "SettingsOverride"]


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


@dataclass(frozen=True)
class SettingsOverride:
    """What a run changes in the settings of every model of an agent (``--max-tokens`` ...)."""

    temperature: float | None = None
    """Sampling temperature replacing the spec's; None keeps the spec's."""
    max_tokens: int | None = None
    """Response cap replacing the spec's; None keeps the spec's."""
    no_thinking: bool = False
    """Drop the spec's thinking budget (a small or local model has none to spend)."""

    @property
    def empty(self) -> bool:
        """Whether the override changes nothing."""
        return self == SettingsOverride()

    def applied_to(self, settings: ModelSettings) -> ModelSettings:
        """``settings`` with this override's values in place of the spec's."""
        return replace(
            settings,
            temperature=settings.temperature if self.temperature is None else self.temperature,
            max_tokens=settings.max_tokens if self.max_tokens is None else self.max_tokens,
            thinking_budget=None if self.no_thinking else settings.thinking_budget,
        )
