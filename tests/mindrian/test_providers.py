"""``mindrian.providers``: provider models a run chose, adapted to what the provider can take."""

from __future__ import annotations

import logging
import re
import tomllib
from collections.abc import Callable
from importlib.metadata import metadata
from pathlib import Path

import pytest
from agno.models.openai import OpenAIChat

from mindrian.agents import PipelineAgent
from mindrian.model_choice import BASE_URL_ENV, ModelScriptError, choose_model
from mindrian.model_settings import ModelSettings, SettingsOverride
from mindrian.providers import (
    ModelSettingsError,
    ModelUnavailableError,
    ProviderModel,
    configured_model,
    provider_extra,
    run_model,
)

_SPEC = ModelSettings(temperature=0.3, max_tokens=4000, thinking_budget=8000)
_LOCAL = "http://127.0.0.1:9/v1"


def _collect() -> tuple[list[str], Callable[[str], None]]:
    seen: list[str] = []
    return seen, seen.append


def test_a_thinking_budget_the_provider_lacks_is_dropped_with_a_warning() -> None:
    seen, warn = _collect()
    model = run_model("openai-chat:gpt-4o-mini", _SPEC, warn=warn)
    assert isinstance(model, OpenAIChat)
    assert (model.temperature, model.max_tokens) == (0.3, 4000)
    assert seen == [
        "openai-chat:gpt-4o-mini (OpenAIChat) takes no thinking_budget: "
        "thinking_budget=8000 dropped"
    ]


def test_the_builders_strict_form_still_refuses_it() -> None:
    with pytest.raises(ModelSettingsError, match="cannot take thinking_budget"):
        configured_model("openai-chat:gpt-4o-mini", _SPEC)


def test_the_override_replaces_the_specs_settings_and_can_drop_thinking() -> None:
    seen, warn = _collect()
    override = SettingsOverride(temperature=0.0, max_tokens=64, no_thinking=True)
    chosen = ProviderModel("openai-chat:small", _LOCAL, override)
    model = run_model(chosen, _SPEC, warn=warn)
    assert isinstance(model, OpenAIChat)
    assert (model.temperature, model.max_tokens, model.base_url) == (0.0, 64, _LOCAL)
    assert seen == []  # nothing left to drop


def test_a_base_url_needs_no_key_but_the_providers_own_server_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    served = run_model(ProviderModel("openai-chat:small", _LOCAL), ModelSettings(), warn=print)
    assert served.api_key == "not-provided"  # type: ignore[attr-defined]
    with pytest.raises(ModelUnavailableError) as refused:
        run_model(ProviderModel("openai:gpt-4o-mini"), ModelSettings(), warn=print)
    assert str(refused.value) == (
        "openai: set OPENAI_API_KEY in the environment "
        "(or --base-url URL for an OpenAI-compatible server)"
    )


def test_a_provider_that_only_logs_a_missing_key_is_refused_before_any_request(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Repro: Agno's Claude logs "ANTHROPIC_API_KEY … not set" and builds a client without a
    key, so the run reached the SDK, which failed at the request with its own message."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(ModelUnavailableError) as refused:
        run_model(ProviderModel("anthropic:claude-sonnet-4-5"), ModelSettings(), warn=print)
    assert str(refused.value) == "anthropic: set ANTHROPIC_API_KEY in the environment"
    assert "not set" not in "".join(capfd.readouterr())  # Agno's own line is held back
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    model = run_model(ProviderModel("anthropic:claude-sonnet-4-5"), ModelSettings(), warn=print)
    assert model.api_key == "sk-ant-test"  # type: ignore[attr-defined]


def test_a_key_in_the_environment_is_used_at_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-gateway")
    served = run_model(ProviderModel("openai-chat:small", _LOCAL), ModelSettings(), warn=print)
    assert served.api_key == "sk-gateway"  # type: ignore[attr-defined]


def test_a_provider_without_a_base_url_field_is_refused_in_one_line() -> None:
    with pytest.raises(ModelUnavailableError, match=r"^anthropic: Claude takes no base URL; "):
        run_model(ProviderModel("anthropic:claude-x", _LOCAL), ModelSettings(), warn=print)


def test_a_provider_whose_sdk_is_missing_names_the_package() -> None:
    try:
        import groq  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("groq's SDK is installed here")
    with pytest.raises(
        ModelUnavailableError,
        match=r"^groq: `groq` not installed.*\(or `pip install 'mindrian\[groq\]'`\)$",
    ):
        run_model(ProviderModel("groq:llama"), ModelSettings(), warn=print)


_ROOT = Path(__file__).resolve().parents[2]


def _provider_extras() -> dict[str, list[str]]:
    table = tomllib.loads((_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = dict(table["project"]["optional-dependencies"])
    # build, dev and the sentence encoder (semantic) are the extras that name no model provider.
    return {name: extras[name] for name in extras if name not in ("build", "dev", "semantic")}


def test_each_provider_extra_is_named_after_an_agno_module_and_uses_agnos_extra() -> None:
    from agno.models.utils import MODEL_PROVIDER_CLASSES

    agno_extras = set(metadata("agno").get_all("Provides-Extra") or ())
    extras = _provider_extras()
    assert extras, "pyproject.toml declares provider extras"
    for name, requirements in extras.items():
        providers = [
            p for p, (module, _) in MODEL_PROVIDER_CLASSES.items() if module.split(".")[2] == name
        ]
        assert providers, f"extra {name!r} is not the name of a module in agno.models"
        assert all(provider_extra(p) == name for p in providers), name
        wanted = {m for r in requirements for m in re.findall(r"^agno\[([\w-]+)\]$", r)}
        assert wanted and wanted <= agno_extras, f"extra {name!r} must pull an extra Agno declares"


def test_providers_whose_sdk_is_a_dependency_or_unknown_have_no_extra() -> None:
    assert [provider_extra(p) for p in ("anthropic", "openai-chat", "no-such-provider")] == [
        None,
        None,
        None,
    ]


def test_the_base_url_comes_from_the_option_else_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(BASE_URL_ENV, "http://gateway/v1")
    assert choose_model("openai-chat:a").model_for("x") == ProviderModel(
        "openai-chat:a", "http://gateway/v1"
    )
    assert choose_model("openai-chat:a", base_url=_LOCAL).model_for("x") == ProviderModel(
        "openai-chat:a", _LOCAL
    )
    with pytest.raises(ModelScriptError, match="is not http"):
        choose_model("openai-chat:a", base_url="127.0.0.1:8080")


def test_a_base_url_or_override_alone_applies_to_the_agents_own_model() -> None:
    override = SettingsOverride(max_tokens=10)
    assert choose_model(None).model_for("x", "anthropic:c") is None
    assert choose_model(None, override=override).model_for("x", "anthropic:c") == ProviderModel(
        "anthropic:c", None, override
    )


class _Phased(PipelineAgent):
    agent_id = "phased"
    phases = (("one", "First."), ("two", "Second."), ("three", "Third."))
    model_settings = _SPEC


def test_a_pipeline_runs_on_a_provider_without_thinking_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    agent = _Phased(model=ProviderModel("openai-chat:small", _LOCAL), state_dir=tmp_path)
    with caplog.at_level(logging.WARNING, logger="mindrian.agents"):
        steps = agent.agent.steps
    assert [s.agent.model.max_tokens for s in steps] == [4000, 4000, 4000]
    assert [r.getMessage() for r in caplog.records] == [
        "warning: phased: openai-chat:small (OpenAIChat) takes no thinking_budget: "
        "thinking_budget=8000 dropped"
    ]
