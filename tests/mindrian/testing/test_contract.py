"""The per-type test contract's model-settings test: it checks the wiring with no provider SDK.

A generated package's ``test_built_models_carry_the_spec_settings`` builds the
agent with the spec's provider resolved to :class:`StandInModel`; it must pass
on a correctly wired agent and fail when a part's model loses the spec's
settings or is not built from the spec's model string.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import pytest
from agno.models.base import Model
from agno.models.utils import get_model

from mindrian.agents import CollaborativeAgent, RoleAgent
from mindrian.agents.output import scored_output
from mindrian.model_choice import ModelRef
from mindrian.providers import ModelSettings, run_model
from mindrian.testing import ScriptedModel
from mindrian.testing.contract import CollaborativeContract, RoleContract

ROOT = Path(__file__).resolve().parents[3]
SETTINGS = {"temperature": None, "max_tokens": 16000, "thinking_budget": 8000}


class Council(CollaborativeAgent):
    agent_id: ClassVar[str] = "council"
    description: ClassVar[str] = "A small council."
    instructions: ClassVar[str] = "Weigh every view."
    model: ClassVar[str] = "anthropic:claude-opus-4-1"
    model_settings: ClassVar[ModelSettings] = ModelSettings.from_spec(SETTINGS)
    perspectives: ClassVar[tuple[tuple[str, str], ...]] = (
        ("Optimist", "Find the upside."),
        ("Pessimist", "Find the risk."),
        ("Chair", "Decide."),
    )
    synthesizer: ClassVar[str] = "Chair"
    output_schema: ClassVar[Any] = scored_output("Council", [])


class Persona(RoleAgent):
    agent_id: ClassVar[str] = "persona"
    instructions: ClassVar[str] = "Ask questions."
    model: ClassVar[str] = "anthropic:claude-sonnet-4-5"
    model_settings: ClassVar[ModelSettings] = ModelSettings(temperature=0.3, max_tokens=4096)


class DropsSettings(Council):
    def built_model(self, model: ModelRef) -> Model:
        return run_model(model, ModelSettings(), warn=self._warn_once)


class HandsAgnoTheString(Council):
    def built_model(self, model: ModelRef) -> Model:
        assert isinstance(model, str)
        found = get_model(model)  # Agno's defaults, none of the spec's settings
        assert found is not None
        return found


class IgnoresTheString(Council):
    def built_model(self, model: ModelRef) -> Model:
        return ScriptedModel()


def _check(
    agent: type[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: dict[str, Any]
) -> None:
    """Run the contract's settings test on ``agent`` as a generated package's test would."""
    base = RoleContract if issubclass(agent, RoleAgent) else CollaborativeContract
    contract = type("TestContract", (base,), {"agent_class": agent, "model_settings": settings})
    contract().test_built_models_carry_the_spec_settings(tmp_path, monkeypatch)


@pytest.mark.parametrize(
    ("agent", "settings"),
    [(Council, SETTINGS), (Persona, {"temperature": 0.3, "max_tokens": 4096})],
)
def test_a_correctly_wired_agent_passes(
    agent: type[Any], settings: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _check(agent, tmp_path, monkeypatch, settings)


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        (DropsSettings, "max_tokens"),
        (HandsAgnoTheString, "max_tokens"),
        (IgnoresTheString, "a ScriptedModel was built, not the spec's model"),
    ],
)
def test_wrong_model_wiring_fails(
    agent: type[Any], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(AssertionError, match=message):
        _check(agent, tmp_path, monkeypatch, SETTINGS)


def test_settings_the_spec_does_not_state_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The spec's settings in the generated test differ from those the package's agent carries.
    with pytest.raises(AssertionError, match="thinking"):
        _check(Council, tmp_path, monkeypatch, {**SETTINGS, "thinking_budget": 4000})


@pytest.mark.slow
def test_no_provider_sdk_is_imported(tmp_path: Path) -> None:
    # The provider's SDK is most of a test run's imports (about a second for Anthropic's).
    script = textwrap.dedent(
        f"""
        import sys
        import pytest
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_contract import Council, SETTINGS, _check
        with pytest.MonkeyPatch.context() as patch:
            _check(Council, __import__("pathlib").Path({str(tmp_path)!r}), patch, SETTINGS)
        print(sorted(m for m in sys.modules if m.split(".")[0] == "anthropic"
                     or m.startswith("agno.models.anthropic")))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout


# -- which tests a package has -----------------------------------------------------------------

#: A collaborative package whose spec lets anyone call it and accepts no transfer, with no part
#: instructions, scores or JSON examples of its skill.
PLAIN = {
    "agent_class": Council,
    "model_settings": SETTINGS,
    "handoff_contract": {"min_clarity": 0.6, "can_be_called_by": [], "supports": ["delegate"]},
}


def _tests(contract: type[Any]) -> set[str]:
    return {name for name in dir(contract) if name.startswith("test_") and getattr(contract, name)}


def test_a_package_has_only_the_tests_that_concern_it() -> None:
    plain = type("TestContract", (CollaborativeContract,), dict(PLAIN))
    fuller = type(
        "TestContract",
        (CollaborativeContract,),
        {
            **PLAIN,
            "part_items": {"Optimist": "Find the upside."},
            "handoff_contract": {"min_clarity": 0, "can_be_called_by": ["larry"], "supports": []},
            "score_ranges": {"upside": (0.0, 10.0)},
            "output_examples": ({"upside": 5.0},),
        },
    )
    concerning = {
        "test_each_part_is_told_its_own_instructions",
        "test_too_little_clarity_is_refused_without_a_model_call",
        "test_callers_outside_the_contract_are_refused",
        "test_an_answer_following_the_skill_examples_succeeds",
        "test_the_model_is_sent_every_score_with_its_range",
    }
    assert _tests(fuller) - _tests(plain) == concerning - {
        "test_too_little_clarity_is_refused_without_a_model_call"
    }
    assert _tests(plain) - _tests(fuller) == {
        "test_too_little_clarity_is_refused_without_a_model_call"
    }
    # The contract itself keeps every test; so does a package's class for the tests that hold for
    # every package.
    assert concerning <= _tests(CollaborativeContract)
    assert "test_the_runtime_holds_the_spec_contract" in _tests(plain) & _tests(fuller)


def test_pytest_collects_only_the_tests_and_breakages_a_package_has(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text(
        textwrap.dedent(
            """
            from mindrian.testing.contract import CollaborativeContract
            from test_contract import PLAIN

            TestContract = type("TestContract", (CollaborativeContract,), dict(PLAIN))
            """
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join((str(Path(__file__).parent), str(ROOT)))},
        capture_output=True,
        text=True,
        check=False,
    )
    collected = [line.split("::")[-1] for line in done.stdout.splitlines() if "::" in line]
    assert done.returncode == 0, done.stdout + done.stderr
    # The schema declares no score and shows no data: three ways to break it, not eight.
    assert [c for c in collected if c.startswith("test_an_answer_that_breaks")] == [
        f"test_an_answer_that_breaks_the_schema_fails[{b}]"
        for b in ("prose", "confidence", "unknown_score")
    ]
    assert "test_callers_outside_the_contract_are_refused" not in collected
    assert "test_each_part_is_told_its_own_instructions" not in collected
    assert "test_every_skill_item_reaches_every_model" in collected
