"""Agno provider models: building one from ``provider:model_id`` with a spec's settings.

Agno resolves a ``provider:model_id`` string to a model object with the
provider's defaults; the settings a skill's spec decided would be lost there.
Two ways to build one:

- :func:`configured_model`, the strict form the builder checks a skill's own
  model with: a setting the provider has no field for is refused
  (:class:`ModelSettingsError`); :func:`unsupported_settings` says so ahead of time.
- :func:`run_model`, the form a run uses: the agent may run on any provider the
  user chose, so a setting that provider cannot take is dropped and reported
  (a thinking budget on OpenAI, for one), a base URL points an OpenAI-compatible
  provider at a server, and a missing SDK or API key is one
  :class:`ModelUnavailableError` line before any request.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from agno.exceptions import ModelAuthenticationError
from agno.models.base import Model

from mindrian.errors import MindrianError
from mindrian.model_settings import ModelSettings, SettingsOverride

__all__ = [
    "ModelSettings",
    "ModelSettingsError",
    "ModelUnavailableError",
    "ProviderModel",
    "configured_model",
    "missing_credentials",
    "missing_key",
    "model_class",
    "provider_extra",
    "run_model",
    "setting_values",
    "unsupported_settings",
]

#: Field names providers use for the response cap, in the order they are tried.
_MAX_TOKENS_FIELDS = ("max_tokens", "max_output_tokens", "max_completion_tokens")
#: The key an OpenAI-compatible server that wants none gets (Agno's OpenAILike sends the same).
_NO_KEY = "not-provided"
#: Attributes an SDK client keeps its credentials in (Anthropic's has both).
_CREDENTIALS = ("api_key", "auth_token")
#: Agno's "FOO_API_KEY not set" messages: the variable to name in a one-line error.
_KEY_NOT_SET = re.compile(r"\b([A-Z][A-Z0-9_]*(?:KEY|TOKEN))\b[^.]*\bnot set")


class ModelSettingsError(MindrianError, ValueError):
    """A spec setting the chosen provider cannot take."""


class ModelUnavailableError(MindrianError, RuntimeError):
    """A model that cannot be asked anything: its SDK is missing, or its key, or its provider."""


@dataclass(frozen=True)
class ProviderModel:
    """A model a run chose: a provider reference, where it is served, and settings to change."""

    reference: str
    """``provider:model_id`` as Agno resolves it."""
    base_url: str | None = None
    """The server of an OpenAI-compatible provider (``--base-url``); None: the provider's own."""
    override: SettingsOverride = field(default_factory=SettingsOverride)
    """Settings the run puts in place of the spec's, for every model of the agent."""
    watch: Callable[[Model], Model] | None = field(default=None, compare=False)
    """Called with every model built (``--record`` records its turns); None: nothing watches."""

    @property
    def provider(self) -> str:
        """The provider key (``openai-chat`` of ``openai-chat:gpt-4o``)."""
        return self.reference.partition(":")[0].strip().lower()


def model_class(provider: str) -> type[Model]:
    """The Agno model class behind a provider key (imports the provider's module)."""
    from agno.models.utils import MODEL_PROVIDER_CLASSES

    module, name = MODEL_PROVIDER_CLASSES[provider]
    found: type[Model] = getattr(importlib.import_module(module), name)
    return found


def provider_extra(provider: str) -> str | None:
    """The extra of the installed ``mindrian`` that brings ``provider``'s SDK (``mindrian[groq]``).

    Extras are named after the provider's module in ``agno.models`` (pyproject.toml), so
    the installed distribution's own metadata answers and no table here can drift from it.
    None: the provider is unknown, no extra brings it, or mindrian is not installed.
    """
    from importlib.metadata import PackageNotFoundError, metadata

    from agno.models.utils import MODEL_PROVIDER_CLASSES

    found = MODEL_PROVIDER_CLASSES.get(provider)
    if found is None:
        return None
    module = found[0].removeprefix("agno.models.").partition(".")[0]
    try:
        extras = metadata("mindrian").get_all("Provides-Extra") or []
    except PackageNotFoundError:
        return None
    return module if module in extras else None


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
        cap = next((n for n in _MAX_TOKENS_FIELDS if n in names), None)
        if cap is None:
            missing.append("max_tokens")
        else:
            values[cap] = settings.max_tokens
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
    model = _agno_model(ref)
    if settings.empty:
        return model
    values, missing = setting_values(type(model), settings)
    if missing:
        raise ModelSettingsError(
            f"model {ref!r} ({type(model).__name__}) cannot take {', '.join(missing)}"
        )
    # replace() runs the class's own checks again (Claude validates thinking support there).
    return dataclasses.replace(model, **values)


def run_model(
    chosen: ProviderModel | str,
    settings: ModelSettings,
    *,
    warn: Callable[[str], None],
) -> Model:
    """The Agno model a run asks: ``settings`` adapted to the provider, never refused.

    A setting the provider has no field for is left out and ``warn`` is told so
    once per call. A :class:`ProviderModel` the run chose is also checked before
    any request: a missing SDK or API key raises :class:`ModelUnavailableError`.
    """
    if isinstance(chosen, str):
        return _adapted(_agno_model(chosen), chosen, settings, warn)
    try:
        model = _agno_model(chosen.reference)
    except ImportError as error:  # Agno says which package: "`openai` not installed. ..."
        extra = provider_extra(chosen.provider)
        hint = f" (or `pip install 'mindrian[{extra}]'`)" if extra else ""
        raise ModelUnavailableError(f"{chosen.provider}: {error}{hint}") from error
    model = _adapted(model, chosen.reference, chosen.override.applied_to(settings), warn)
    if chosen.base_url is not None:
        model = _served_at(model, chosen)
    _check_credentials(model, chosen)
    return model if chosen.watch is None else chosen.watch(model)


def _agno_model(ref: str) -> Model:
    from agno.models.utils import get_model

    model = get_model(ref)
    if model is None:  # get_model returns None only for None, which a str never is
        raise ModelSettingsError(f"no model for {ref!r}")
    return model


def _adapted(model: Model, ref: str, settings: ModelSettings, warn: Callable[[str], None]) -> Model:
    if settings.empty:
        return model
    values, missing = setting_values(type(model), settings)
    if missing:
        dropped = ", ".join(f"{name}={getattr(settings, name)}" for name in missing)
        warn(f"{ref} ({type(model).__name__}) takes no {', '.join(missing)}: {dropped} dropped")
    return dataclasses.replace(model, **values) if values else model


def _served_at(model: Model, chosen: ProviderModel) -> Model:
    names = {f.name for f in dataclasses.fields(type(model))}
    if "base_url" not in names:
        raise ModelUnavailableError(
            f"{chosen.provider}: {type(model).__name__} takes no base URL; "
            "use an OpenAI-compatible provider such as openai-chat: with --base-url"
        )
    # Model itself has no base_url: the field belongs to the provider's class checked above.
    values: dict[str, Any] = {"base_url": chosen.base_url}
    return dataclasses.replace(model, **values)


def _check_credentials(model: Model, chosen: ProviderModel) -> None:
    """Build the provider's client now: Agno checks the API key there, before any request.

    Some of Agno's providers (Claude) only log that the key is not set and build a client
    without one, whose SDK fails at the first request; such a client is refused here too,
    with the variable Agno named, and Agno's own log line is kept off the terminal.
    """
    get_client = getattr(model, "get_client", None)
    if get_client is None:
        return
    with _agno_errors() as said:
        try:
            client = get_client()
        except ModelAuthenticationError as error:
            if chosen.base_url is not None and "api_key" in {
                f.name for f in dataclasses.fields(type(model))
            }:
                # A local server (llama.cpp, vLLM, Ollama) wants no key; a gateway's comes from
                # the env.
                model.api_key = _NO_KEY  # type: ignore[attr-defined]
                return
            raise ModelUnavailableError(
                _credentials_message(model, chosen, error.message)
            ) from error
    if _without_credentials(client):
        missing = next((line for line in said if _KEY_NOT_SET.search(line)), "no API key is set")
        raise ModelUnavailableError(_credentials_message(model, chosen, missing))


@contextlib.contextmanager
def _agno_errors() -> Iterator[list[str]]:
    """The messages Agno logs meanwhile, held back from its handlers."""
    from agno.utils import log

    said: list[str] = []

    def hold(record: logging.LogRecord) -> bool:
        said.append(record.getMessage())
        return False

    logger = log.logger  # Agno switches its module logger between agent, team and workflow
    logger.addFilter(hold)
    try:
        yield said
    finally:
        logger.removeFilter(hold)


def _without_credentials(client: object) -> bool:
    """Whether an SDK client that holds its credentials as attributes holds none of them."""
    held = [getattr(client, name) for name in _CREDENTIALS if hasattr(client, name)]
    return bool(held) and not any(held)


def missing_key(message: str) -> str | None:
    """The environment variable an Agno "FOO_API_KEY not set" message names; None otherwise."""
    found = _KEY_NOT_SET.search(message)
    return found.group(1) if found else None


def missing_credentials(chosen: ProviderModel) -> str | None:
    """Why ``chosen`` cannot be asked here (its SDK or API key is missing), in one line naming
    what to install or set; None when it can. The check :func:`run_model` makes."""
    try:
        run_model(chosen, ModelSettings(), warn=lambda line: None)
    except ModelUnavailableError as error:
        return str(error)
    return None


def _credentials_message(model: Model, chosen: ProviderModel, message: str) -> str:
    found = _KEY_NOT_SET.search(message)
    if found is None:
        return f"{chosen.provider}: {message}"
    line = f"{chosen.provider}: set {found.group(1)} in the environment"
    # Only a provider that can be pointed at another server is helped by --base-url.
    if "base_url" not in {f.name for f in dataclasses.fields(type(model))}:
        return line
    return f"{line} (or --base-url URL for an OpenAI-compatible server)"
