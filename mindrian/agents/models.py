"""Generation settings of a spec (temperature, response cap, thinking budget) on Agno models.

Agno resolves a ``provider:model_id`` string to a model object with the
provider's defaults; the settings a skill's spec decided would be lost there.
:func:`configured_model` builds the model and sets them, under whatever field
name the provider's class uses, and refuses a setting the provider has no field
for rather than dropping it. :func:`unsupported_settings` tells the builder the
same thing ahead of time, so phase 2 can warn and leave such a setting out.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

from agno.models.base import Model

from mindrian.errors import MindrianError
from mindrian.model_settings import ModelSettings

__all__ = [
    "ModelSettings",
    "ModelSettingsError",
    "configured_model",
    "model_class",
    "setting_values",
    "unsupported_settings",
]

#: Field names providers use for the response cap, in the order they are tried.
_MAX_TOKENS_FIELDS = ("max_tokens", "max_output_tokens", "max_completion_tokens")


class ModelSettingsError(MindrianError, ValueError):
    """A spec setting the chosen provider cannot take."""


def model_class(provider: str) -> type[Model]:
    """The Agno model class behind a provider key (imports the provider's module)."""
    from agno.models.utils import MODEL_PROVIDER_CLASSES

    module, name = MODEL_PROVIDER_CLASSES[provider]
    found: type[Model] = getattr(importlib.import_module(module), name)
    return found


def setting_values(cls: type[Model], settings: ModelSettings) -> tuple[dict[str, Any], list[str]]:
    """(field → value for every applicable setting, names of the settings with no field)."""
    names = {f.name for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    missing: list[str] = []
    if settings.temperature is not None:
        if "temperature" in names:
            values["temperature"] = settings.temperature
        else:
            missing.append("temperature")
    if settings.max_tokens is not None:
        field = next((n for n in _MAX_TOKENS_FIELDS if n in names), None)
        if field is None:
            missing.append("max_tokens")
        else:
            values[field] = settings.max_tokens
    if settings.thinking_budget is not None:
        if "thinking" in names:  # Anthropic's form
            values["thinking"] = {"type": "enabled", "budget_tokens": settings.thinking_budget}
        elif "thinking_budget" in names:  # Gemini's form
            values["thinking_budget"] = settings.thinking_budget
        else:
            missing.append("thinking_budget")
    return values, missing


def unsupported_settings(provider: str, settings: ModelSettings) -> tuple[str, ...]:
    """Names of the settings ``provider``'s model class has no field for."""
    return tuple(setting_values(model_class(provider), settings)[1])


def configured_model(ref: str, settings: ModelSettings) -> Model:
    """The Agno model of ``"provider:model_id"`` with ``settings`` applied.

    Raises :class:`ModelSettingsError` when the provider cannot take one of them.
    """
    from agno.models.utils import get_model

    model = get_model(ref)
    if model is None:  # get_model returns None only for None, which a str never is
        raise ModelSettingsError(f"no model for {ref!r}")
    if settings.empty:
        return model
    values, missing = setting_values(type(model), settings)
    if missing:
        raise ModelSettingsError(
            f"model {ref!r} ({type(model).__name__}) cannot take {', '.join(missing)}"
        )
    # replace() runs the class's own checks again (Claude validates thinking support there).
    return dataclasses.replace(model, **values)
