"""The per-type test contract's model-settings test: it checks the wiring with no provider SDK.

A generated package's ``test_built_models_carry_the_spec_settings`` builds the
agent with the spec's provider resolved to :class:`StandInModel`; it must pass
on a correctly wired agent and fail when a part's model loses the spec's
settings or is not built from the spec's model string.
"""

from __future__ import annotations

import json
import os
import shutil
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
from mindrian.testing.contract import CollaborativeContract, ContractDataError, RoleContract

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


# -- the package's expected data (tests/contract.json) ---------------------------------------

#: What a generated collaborative package's contract.json holds for :class:`Council`.
COUNCIL_DATA = {
    "generated": "generated by mindrian — do not edit.",
    "source": "skills/council/SKILL.md",
    "skill_items": ["Weigh every view."],
    "part_items": {"Optimist": "Find the upside."},
    "model_settings": SETTINGS,
    "handoff_contract": {"min_clarity": 0.6, "can_be_called_by": [], "supports": ["delegate"]},
    "score_ranges": {"upside": [0.0, 10.0]},
    "output_examples": [{"upside": 5.0}],
    "synthesizer": "Chair",
}


def _from_file(path: Path, data: Any = None) -> type[Any]:
    """A package's test class for :class:`Council` reading its expected data from ``path``,
    written first as ``data`` (bytes as they are, anything else as JSON) unless it is None."""
    if data is not None:
        path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    attributes = {"agent_class": Council, "contract_data": path}
    return type("TestContract", (CollaborativeContract,), attributes)


def test_the_expected_data_is_read_into_the_contract_fields(tmp_path: Path) -> None:
    contract = _from_file(tmp_path / "contract.json", COUNCIL_DATA)
    assert contract.skill_items == ("Weigh every view.",)
    assert contract.part_items == {"Optimist": "Find the upside."}
    assert contract.model_settings == SETTINGS
    assert contract.score_ranges == {"upside": (0.0, 10.0)}  # JSON has no tuples
    assert contract.output_examples == ({"upside": 5.0},)
    assert contract.synthesizer == "Chair"
    # Which tests the package has is decided from the data read.
    assert _tests(contract) == _tests(type("TestContract", (CollaborativeContract,), FULLER))


#: :data:`COUNCIL_DATA` as class attributes, the way a test class may still set them.
FULLER = {
    "agent_class": Council,
    "skill_items": ("Weigh every view.",),
    "part_items": {"Optimist": "Find the upside."},
    "model_settings": SETTINGS,
    "handoff_contract": {"min_clarity": 0.6, "can_be_called_by": [], "supports": ["delegate"]},
    "score_ranges": {"upside": (0.0, 10.0)},
    "output_examples": ({"upside": 5.0},),
    "synthesizer": "Chair",
}


def test_a_skill_line_the_prompt_lacks_fails_the_contract(tmp_path: Path) -> None:
    state = tmp_path / "state"
    agrees = _from_file(tmp_path / "agrees.json", COUNCIL_DATA)
    agrees().test_every_skill_item_reaches_every_model(agrees().system_prompts(state))
    lacking = {**COUNCIL_DATA, "skill_items": ["Weigh every view.", "A line nobody was told."]}
    disagrees = _from_file(tmp_path / "disagrees.json", lacking)
    with pytest.raises(AssertionError, match="A line nobody was told"):
        disagrees().test_every_skill_item_reaches_every_model(disagrees().system_prompts(state))


def test_a_score_range_the_schema_lacks_fails_the_contract(tmp_path: Path) -> None:
    # The schema sent to the model declares no score: a range read from the file must fail it.
    contract = _from_file(tmp_path / "contract.json", COUNCIL_DATA)
    with pytest.raises(AssertionError, match="does not declare upside"):
        answered = contract().answered_handoff(tmp_path / "state")
        contract().test_the_model_is_sent_every_score_with_its_range(answered)


def _with(**changes: Any) -> dict[str, Any]:
    return {**COUNCIL_DATA, **changes}


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (None, "missing (the package's expected data)"),
        (b"{not json", "not readable JSON (Expecting property name"),
        (b"\xff{}", "not readable JSON ('utf-8' codec can't decode"),
        (["a", "list"], 'expected a JSON object, got ["a", "list"]'),
        ({k: v for k, v in COUNCIL_DATA.items() if k != "synthesizer"}, "no synthesizer"),
        (_with(skill_item=[]), "unknown skill_item"),
        (_with(skill_items="Weigh"), "skill_items: expected a list of strings"),
        (_with(part_items={"A": 1}), "part_items: expected an object of strings"),
        (
            _with(model_settings={"max_tokens": 1}),
            "model_settings: expected the keys max_tokens, temperature, thinking_budget",
        ),
        (
            _with(model_settings={**SETTINGS, "max_tokens": 1.5}),
            "model_settings: max_tokens: expected a whole number or null, got 1.5",
        ),
        (
            _with(handoff_contract={"min_clarity": True, "can_be_called_by": [], "supports": []}),
            "handoff_contract: min_clarity: expected a number, got true",
        ),
        (
            _with(score_ranges={"upside": [0, 1, 2]}),
            "score_ranges: expected an object of [minimum, maximum] pairs",
        ),
        (_with(output_examples=[1]), "output_examples: expected a list of objects, got [1]"),
        (_with(synthesizer=None), "synthesizer: expected a string, got null"),
    ],
)
def test_a_missing_or_malformed_file_is_one_line_naming_it(
    tmp_path: Path, data: Any, problem: str
) -> None:
    path = tmp_path / "contract.json"
    with pytest.raises(ContractDataError) as failed:
        _from_file(path, data)
    message = str(failed.value)
    assert message.startswith(f"{path}: ") and problem in message, message
    assert "\n" not in message


# -- runs the tests share ----------------------------------------------------------------------

#: A pytest plugin counting the runs of operator and collaborative agents by the test whose setup
#: or call made them, written to the file ``$RUNS_FILE`` at the end of the session.
RUN_COUNTER = """
import json
import os

import pytest

from mindrian.agents import CollaborativeAgent, OperatorAgent

RUNS = {}
NOW = [""]


def counted(method):
    async def run(self, *args, **kwargs):
        RUNS[NOW[0]] = RUNS.get(NOW[0], 0) + 1
        return await method(self, *args, **kwargs)

    return run


for base in (OperatorAgent, CollaborativeAgent):
    base.run = counted(base.run)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    NOW[0] = item.nodeid


def pytest_sessionfinish(session):
    with open(os.environ["RUNS_FILE"], "w", encoding="utf-8") as out:
        json.dump(RUNS, out)
"""

#: The tests that only read the prompts of one run or one well-answered handoff.
READERS = {
    "test_every_skill_item_reaches_every_model",
    "test_the_description_is_stated_once",
    "test_each_part_is_told_its_own_instructions",
    "test_handoff_returns_the_structured_answer",
    "test_the_model_is_sent_every_score_with_its_range",
    "test_the_synthesis_fills_the_declared_returns",
}


@pytest.mark.slow
def test_the_tests_reading_one_run_share_it(tmp_path: Path) -> None:
    # A team with part instructions, and an operator with score ranges: every reader applies.
    folder = tmp_path / "packages"
    for name in ("de_bono_hats", "jtbd"):
        shutil.copytree(
            ROOT / "generated" / name, folder / name, ignore=shutil.ignore_patterns("__pycache__")
        )
    (tmp_path / "run_counter.py").write_text(RUN_COUNTER, encoding="utf-8")
    runs = tmp_path / "runs.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "run_counter"],
        cwd=folder,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join((str(tmp_path), str(folder), str(ROOT))),
            "RUNS_FILE": str(runs),
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    counted = json.loads(runs.read_text(encoding="utf-8"))
    for name in ("de_bono_hats", "jtbd"):
        readers = {
            test: count
            for test, count in counted.items()
            if test.startswith(f"{name}/") and test.rpartition("::")[2] in READERS
        }
        # One handoff answered well, whose prompts are also what the models were told: not a run
        # per reader.
        assert sum(readers.values()) == 1, readers


#: A package's test class whose two tests each run a coroutine that leaves a task behind.
LOOPS = """
import asyncio

from mindrian.testing.contract import CollaborativeContract, run
from test_contract import PLAIN

Package = type("Package", (CollaborativeContract,), dict(PLAIN))


async def leave_a_task():
    loop = asyncio.get_running_loop()
    return loop, loop.create_task(asyncio.sleep(60))


class TestLoops(Package):
    loops = []

    def test_first(self):
        loop, left = run(leave_a_task())
        assert left.cancelled()  # as asyncio.run leaves nothing running
        self.loops.append(loop)

    def test_second(self):
        loop, left = run(leave_a_task())
        assert left.cancelled()
        assert loop is self.loops[0]
"""


@pytest.mark.slow
def test_the_runs_of_a_class_share_its_event_loop_and_leave_nothing_running(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_loops.py").write_text(LOOPS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "first or second"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join((str(Path(__file__).parent), str(ROOT)))},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout + done.stderr
