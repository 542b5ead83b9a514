"""The per-type test contract every generated package runs against its own data.

A generated ``tests/test_agent.py`` subclasses one contract and sets two class
attributes: the agent class, and ``contract_data``, the package's
``tests/contract.json``. That file holds what the tests expect of the agent:
the skill's items (verbatim lines of its SKILL.md, read by the builder from the
file itself), each part's own instructions, the generation settings, the
handoff contract, and for the types answering through an output model the
score ranges and the JSON examples of the skill's output instructions (each
field is the contract attribute of its name; their docstrings say what it
holds). It is read and checked once, when the class is made: a missing or
malformed file raises :class:`ContractDataError` naming the file, so pytest
reports the module as a collection error with that one line. pytest collects
the subclass (its name starts with ``Test``); the contracts here are not
collected themselves.

What every type is held to:

* every skill item reaches the system prompt of every model acting for the
  agent (the agent, each team member and the leader, each phase, each step),
  captured through :class:`~mindrian.testing.ScriptedModel`, and the
  description is stated there once (besides the skill's own lines that hold it);
* each part is told its own instructions;
* the models built from the spec's model string carry its temperature,
  response cap and thinking budget;
* the handoff contract: too little clarity gives ``needs_clarification``
  without a model call, a caller outside ``can_be_called_by`` and a handoff
  type outside ``supports`` are refused, and the README states the same
  accepted types as the runtime;
* tools are wired with valid schemas, and a required MCP server that is down
  stops the run before the model is asked.

Each type then adds its behaviour (structured answers and schema checks,
history, team synthesis, phase order, guided pauses).

A test that holds only for some packages (each part's instructions, when the
skill states parts; the refusal of unknown callers, when the spec names its
callers; ...) says so with :func:`applies_when`, and a package it does not
concern does not have it: its test class hides it when the class is made, so
pytest never collects it (a skip would cost a package's run as much as a test,
and half of a typical package's tests used to be skips). The answer-breaking
test is parametrized with the breakages the package's schema has.

Tests that only read what one run of the agent gave share that run: a fixture of
the test class runs it once (``told``: what each model was told; ``answered``: a
handoff answered well, whose prompts are ``told`` for the types answering through
an output model), and each test still fails when its own property breaks.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import jsonschema
import pytest
from agno.models.base import Model
from agno.models.response import ModelResponse
from agno.models.utils import MODEL_PROVIDER_CLASSES
from agno.tools.function import Function
from pydantic import BaseModel

from mindrian.agent_types import record_of
from mindrian.agents import BACK, SKIP, MindrianAgent, RoleAgent
from mindrian.agents.output import whole_answer
from mindrian.errors import MindrianError
from mindrian.handoff import HandoffManager, HandoffResult, HandoffType, ProblemClarity
from mindrian.model_settings import ModelSettings
from mindrian.scripted import ModelCall, ScriptedModel, Step

__all__ = [
    "AgentContract",
    "Answered",
    "CollaborativeContract",
    "ContractDataError",
    "GuidedContract",
    "OperatorContract",
    "PipelineContract",
    "RoleContract",
    "StandInModel",
    "applies_when",
    "clear_problem",
    "contract_fields",
    "contract_for",
    "load_contract_data",
    "sent_schema",
]

_T = TypeVar("_T")
_Test = TypeVar("_Test", bound=Callable[..., None])
#: The attribute :func:`applies_when` puts the condition in.
_APPLIES = "_mindrian_applies_when"
#: Numbers the tests' state folders (:func:`_new_state_dir`).
_STATE_DIRS = itertools.count()
#: Agent class attributes holding (part name, its own text) pairs, by type.
_PART_ATTRIBUTES = ("perspectives", "phases", "steps")


#: Keys of that file saying where it came from (the builder's notice, the skill's path): no test
#: reads them.
_PROVENANCE = frozenset({"generated", "source"})


class ContractDataError(MindrianError, ValueError):
    """A package's expected data is missing or malformed: one line naming the file, then what is
    wrong with it."""


class _Malformed(Exception):
    """A value not of its field's form: what was expected (the loader names file and field)."""


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _form(value: Any, valid: bool, expected: str) -> Any:
    """``value`` when ``valid``, else :class:`_Malformed` saying what was ``expected``."""
    if not valid:
        raise _Malformed(f"expected {expected}, got {_shown(value)}")
    return value


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _record(value: Any, fields: Mapping[str, tuple[Callable[[Any], bool], str]]) -> dict[str, Any]:
    """``value`` when it is an object with exactly ``fields`` (name → (check, what it is))."""
    _form(value, isinstance(value, dict), "an object")
    if set(value) != set(fields):
        raise _Malformed(
            f"expected the keys {', '.join(sorted(fields))}, got {_shown(sorted(value))}"
        )
    for name, (check, expected) in fields.items():
        if not check(value[name]):
            raise _Malformed(f"{name}: expected {expected}, got {_shown(value[name])}")
    return dict(value)


def _skill_items(value: Any) -> tuple[str, ...]:
    return tuple(_form(value, _texts(value), "a list of strings"))


def _part_items(value: Any) -> dict[str, str]:
    valid = isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    return dict(_form(value, valid, "an object of strings"))


def _model_settings(value: Any) -> dict[str, Any]:
    return _record(
        value,
        {
            "temperature": (lambda v: v is None or _number(v), "a number or null"),
            "max_tokens": (lambda v: v is None or _count(v), "a whole number or null"),
            "thinking_budget": (lambda v: v is None or _count(v), "a whole number or null"),
        },
    )


def _handoff_contract(value: Any) -> dict[str, Any]:
    return _record(
        value,
        {
            "min_clarity": (_number, "a number"),
            "can_be_called_by": (_texts, "a list of strings"),
            "supports": (_texts, "a list of strings"),
        },
    )


def _score_ranges(value: Any) -> dict[str, tuple[float, float]]:
    # JSON has no tuples: each range is a two-number array, a (minimum, maximum) pair here.
    valid = isinstance(value, dict) and all(
        isinstance(r, list) and len(r) == 2 and all(map(_number, r)) for r in value.values()
    )
    ranges = _form(value, valid, "an object of [minimum, maximum] pairs")
    return {name: (low, high) for name, (low, high) in ranges.items()}


def _output_examples(value: Any) -> tuple[dict[str, Any], ...]:
    valid = isinstance(value, list) and all(isinstance(e, dict) for e in value)
    return tuple(_form(value, valid, "a list of objects"))


def _synthesizer(value: Any) -> str:
    return str(_form(value, isinstance(value, str), "a string"))


#: Every field a contract may read from a package's expected data, with the function that checks
#: its form and gives the attribute's value; a contract reads those of its attributes.
_FIELDS: Mapping[str, Callable[[Any], Any]] = {
    "skill_items": _skill_items,
    "part_items": _part_items,
    "model_settings": _model_settings,
    "handoff_contract": _handoff_contract,
    "score_ranges": _score_ranges,
    "output_examples": _output_examples,
    "synthesizer": _synthesizer,
}


def contract_fields(contract: type[AgentContract]) -> tuple[str, ...]:
    """The fields of a package's expected data that ``contract`` reads: those of its attributes
    (a type's own fields are attributes of its contract only)."""
    return tuple(name for name in _FIELDS if hasattr(contract, name))


def load_contract_data(path: Path, fields: Iterable[str]) -> dict[str, Any]:
    """The values of ``fields`` in the expected data at ``path``, each checked for its form;
    :class:`ContractDataError` when the file is missing, is no JSON object, lacks one of
    ``fields``, has a key no contract field or provenance is, or holds a value of another form."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ContractDataError(f"{path}: missing (the package's expected data)") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ContractDataError(f"{path}: not readable JSON ({_one_line(exc)})") from None
    if not isinstance(data, dict):
        raise ContractDataError(f"{path}: expected a JSON object, got {_shown(data)}")
    wanted = list(fields)
    missing = [name for name in wanted if name not in data]
    unknown = sorted(set(data) - set(wanted) - _PROVENANCE)
    if missing or unknown:
        problems = [f"no {', '.join(missing)}"] if missing else []
        problems += [f"unknown {', '.join(unknown)}"] if unknown else []
        raise ContractDataError(f"{path}: {'; '.join(problems)}")
    try:
        return {name: _converted(name, data[name]) for name in wanted}
    except _Malformed as exc:
        raise ContractDataError(f"{path}: {exc}") from None


def _converted(name: str, value: Any) -> Any:
    try:
        return _FIELDS[name](value)
    except _Malformed as exc:
        raise _Malformed(f"{name}: {exc}") from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _new_state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new folder for an agent's saved state under the run's base temporary folder, not made."""
    return tmp_path_factory.getbasetemp() / f"state-{next(_STATE_DIRS)}"


#: The event loop of the test class under way (``AgentContract._event_loop``), if any.
_CLASS_LOOPS: list[asyncio.AbstractEventLoop] = []


def run(awaitable: Awaitable[_T]) -> _T:
    """Run a coroutine to completion (tests are synchronous).

    In a test class, in its event loop, cancelling what the run left as
    ``asyncio.run`` does when its run ends: a loop made and closed for every run
    (``asyncio.run``, as outside a test class) cost a tenth of a scripted run.
    """
    if not _CLASS_LOOPS:
        return asyncio.run(awaitable)  # type: ignore[arg-type]
    loop = _CLASS_LOOPS[-1]
    try:
        return loop.run_until_complete(awaitable)
    finally:
        _cancel_what_is_left(loop)


def _cancel_what_is_left(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the tasks a run left in ``loop`` and wait for them, reporting their errors to the
    loop, as ``asyncio.run`` does before it closes its loop."""
    left = asyncio.all_tasks(loop)
    if not left:
        return
    for task in left:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
    for task in left:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {
                    "message": "unhandled exception when a test's run ended",
                    "exception": task.exception(),
                    "task": task,
                }
            )


def applies_when(condition: Callable[[Any], bool]) -> Callable[[_Test], _Test]:
    """Marks a contract test as one of a package's tests only when ``condition(contract)`` holds
    (the contract: an instance of the package's test class); see the module docstring."""

    def mark(test: _Test) -> _Test:
        setattr(test, _APPLIES, condition)
        return test

    return mark


def clear_problem(level: float = 1.0) -> ProblemClarity:
    """A problem clarified to ``level`` on all three questions."""
    return ProblemClarity(
        what="A stated problem",
        who="Named people",
        success="A measurable change",
        what_clarity=level,
        who_clarity=level,
        success_clarity=level,
    )


def _prompts_of(models: Mapping[str, ScriptedModel]) -> dict[str, str]:
    """Part label → the system message of the first call its model received (``models`` by part
    label, after a run)."""
    prompts = {}
    for label, model in models.items():
        assert model.calls, f"{label} was never asked"
        prompts[label] = system_text(model.calls[0])
    return prompts


def system_text(call: ModelCall) -> str:
    """Everything the model was told as system messages in one call."""
    return "\n".join(call.contents("system"))


def sent_schema(call: ModelCall) -> Any:
    """The JSON schema of the answer as the model received it.

    Models with native structured output get the output model itself; the
    others (the scripted model among them) get its properties in the system
    message, between ``<json_field_properties>`` tags.
    """
    fmt = call.response_format
    if isinstance(fmt, type) and issubclass(fmt, BaseModel):
        return fmt.model_json_schema()
    found = re.search(
        r"<json_field_properties>\s*(\{.*\})\s*</json_field_properties>",
        system_text(call),
        re.S,
    )
    assert found, "the model was sent no schema for its answer"
    return json.loads(found.group(1))


def _declares(schema: Any, name: str, low: float, high: float) -> bool:
    """Whether ``schema`` anywhere declares property ``name`` as a number in ``low..high``."""
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            if (
                key == name
                and isinstance(value, Mapping)
                and value.get("minimum") == low
                and value.get("maximum") == high
                and value.get("description")
            ):
                return True
            if _declares(value, name, low, high):
                return True
    if isinstance(schema, list):
        return any(_declares(v, name, low, high) for v in schema)
    return False


@dataclass
class StandInModel(Model):
    """The model a settings test builds in place of the spec's provider's: Agno's registry of
    providers names it for that provider, so the agent builds it from its spec's model string
    and settings exactly as it builds the real one. It has the setting fields of Anthropic's
    ``Claude`` (the runtime fills them in that class's form) and answers nothing."""

    temperature: float | None = None
    """Sampling temperature, as the runtime set it."""
    max_tokens: int | None = None
    """Response cap, as the runtime set it."""
    thinking: dict[str, Any] | None = None
    """Extended thinking in Anthropic's form (``{"type": "enabled", "budget_tokens": N}``)."""

    def invoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise _never_asked()

    async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise _never_asked()

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Iterator[ModelResponse]:
        raise _never_asked()

    def ainvoke_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelResponse]:
        raise _never_asked()

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        raise _never_asked()

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        raise _never_asked()


def _never_asked() -> AssertionError:
    return AssertionError("a stand-in model is never asked")


class AgentContract:
    """What every generated agent is held to; subclasses add their type's behaviour."""

    agent_class: ClassVar[type[MindrianAgent]]
    """The generated agent class."""
    contract_data: ClassVar[Path]
    """The package's expected data (a generated package's ``tests/contract.json``): a JSON
    object holding each of this contract's fields below under its name. Read once, when the
    class is made, into those attributes; a class without it sets them itself."""
    skill_items: ClassVar[tuple[str, ...]] = ()
    """Verbatim lines of the skill's SKILL.md (description, tone, front-matter rules, every body
    line that carries words), read from the file itself: each must reach the system prompt of
    every model acting for the agent."""
    part_items: ClassVar[Mapping[str, str]] = {}
    """Part name → its own instructions as the skill states them (perspectives, phases, steps)."""
    model_settings: ClassVar[Mapping[str, Any]] = {}
    """``temperature``, ``max_tokens`` and ``thinking_budget`` the built models must carry."""
    handoff_contract: ClassVar[Mapping[str, Any]] = {}
    """Phase 3's ``min_clarity``, ``can_be_called_by`` and ``supports``, which the runtime must
    enforce."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "agent_class" not in vars(cls):
            return  # a type's contract, not a package's tests
        if "contract_data" in vars(cls):
            for name, value in load_contract_data(cls.contract_data, contract_fields(cls)).items():
                setattr(cls, name, value)
        contract = cls()
        for name in dir(cls):
            condition = getattr(getattr(cls, name, None), _APPLIES, None)
            if condition is not None and not condition(contract):
                setattr(cls, name, None)  # pytest collects nothing from a None

    @property
    def caller(self) -> str:
        """An agent allowed to call this one (the tests' handoffs come from it)."""
        callers = self.handoff_contract.get("can_be_called_by") or ["larry"]
        return str(callers[0])

    # -- what each type provides ------------------------------------------------------

    def acting_models(self, state_dir: Path) -> dict[str, ScriptedModel]:
        """Run the agent once on a task; every model that acted, by part label."""
        raise NotImplementedError

    def new_agent(self, state_dir: Path, **options: Any) -> MindrianAgent:
        """An instance of the agent class with test state under ``state_dir``."""
        return self.agent_class(**options)

    def probe_agent(self, task: str, answer: Mapping[str, Any], state_dir: Path) -> MindrianAgent:
        """An instance whose every model is scripted for one handoff of ``task`` (phase 7's
        end-to-end probe); ``answer`` is a structured answer valid for its output schema, which
        the types answering through one give."""
        raise NotImplementedError

    # -- fixtures -----------------------------------------------------------------------

    @pytest.fixture
    def state_dir(self, tmp_path_factory: pytest.TempPathFactory) -> Path:
        """A folder of this test's own for the agent's saved state, not made yet: the agents that
        save any make it, and most never do. (pytest's ``tmp_path`` makes and numbers a folder
        for every test, listing those made before: about a tenth of a package's test run.)"""
        return _new_state_dir(tmp_path_factory)

    @pytest.fixture(scope="class")
    @classmethod
    def told(cls, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
        """:meth:`system_prompts` of one run, shared by the tests of what the models are told
        (each reads it only): a run each cost a package a run of the agent per test."""
        return cls().system_prompts(_new_state_dir(tmp_path_factory))

    @pytest.fixture(autouse=True, scope="class")
    @classmethod
    def _event_loop(cls) -> Iterator[None]:
        """One event loop for the runs of the class's tests (see :func:`run`), closed after them
        as ``asyncio.run`` closes its own (async generators and the default executor shut down).
        """
        with asyncio.Runner() as runner:
            _CLASS_LOOPS.append(runner.get_loop())
            try:
                yield
            finally:
                _CLASS_LOOPS.pop()

    @pytest.fixture(autouse=True, scope="class")
    @classmethod
    def _mcp_servers_stay_offline(cls) -> Iterator[None]:
        # Scripted models call no MCP tool and tests start no server; the refusal test puts its own
        # on top. Once for the class: a function's fixture costs each test its setup.
        package = cls.agent_class.package
        declared = cls.agent_class.tools
        custom = package.tools.custom_functions() if package is not None else ()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cls.agent_class, "declared_tools", declared, raising=False)
            patch.setattr(cls.agent_class, "tools", custom)
            patch.setattr(cls.agent_class, "mcp_servers", ())
            yield

    # -- the prompt ------------------------------------------------------------------------

    def system_prompts(self, state_dir: Path) -> dict[str, str]:
        """Part label → the system message its model received when the agent ran once."""
        return _prompts_of(self.acting_models(state_dir))

    def test_every_skill_item_reaches_every_model(self, told: Mapping[str, str]) -> None:
        assert self.skill_items, "the skill gave no items to check"
        for label, system in told.items():
            missing = [item for item in self.skill_items if item not in system]
            assert not missing, f"{label} was not told {len(missing)} item(s), first: {missing[:3]}"

    def test_the_description_is_stated_once(self, told: Mapping[str, str]) -> None:
        description = self.agent_class.description.strip()
        assert description
        # The skill's own lines may hold the description's words too (a title equal to it);
        # they are told as written: the description itself is added exactly once.
        parts = [text for key in _PART_ATTRIBUTES for _, text in getattr(self.agent_class, key, ())]
        written = "\n".join([self.agent_class.instructions, *parts]).count(description)
        for label, system in told.items():
            times = system.count(description)
            assert 1 <= times <= 1 + written, (
                f"{label} was told the description {times} times ({written} in the skill's text)"
            )

    @applies_when(lambda contract: bool(contract.part_items))  # the skill states parts
    def test_each_part_is_told_its_own_instructions(self, told: Mapping[str, str]) -> None:
        for name, text in self.part_items.items():
            assert name in told, f"part {name!r} never acted"
            assert text in told[name], f"part {name!r} was not told its instructions"

    # -- model settings ---------------------------------------------------------------------

    def built_models(self, agent: MindrianAgent) -> list[Any]:
        """The Agno models of the built agent (leader, members, steps)."""
        built = agent.agent
        models = [getattr(built, "model", None)]
        models += [m.model for m in getattr(built, "members", None) or ()]
        models += [s.agent.model for s in getattr(built, "steps", None) or () if s.agent]
        return [m for m in models if m is not None]

    def test_built_models_carry_the_spec_settings(
        self, state_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The spec's provider resolves to a stand-in with the setting fields of Anthropic's class,
        # built through Agno's registry of providers as the real model would be, so no provider
        # SDK is imported (about a second of every test run). Phase 2 built the real model with
        # these settings: whether the provider takes them was checked there.
        provider, _, model_id = self.agent_class.model.partition(":")
        classes = MODEL_PROVIDER_CLASSES
        assert provider in classes, f"Agno has no model provider {provider!r}"
        monkeypatch.setitem(classes, provider, (StandInModel.__module__, StandInModel.__name__))
        settings = ModelSettings.from_spec(self.model_settings)
        thinking = settings.thinking_budget
        models = self.built_models(self.new_agent(state_dir))
        assert models
        for model in models:
            assert isinstance(model, StandInModel), (
                f"a {type(model).__name__} was built, not the spec's model {self.agent_class.model}"
            )
            assert model.id == model_id
            assert model.temperature == settings.temperature, "temperature"
            assert model.max_tokens == settings.max_tokens, "max_tokens"
            assert model.thinking == (
                None if thinking is None else {"type": "enabled", "budget_tokens": thinking}
            ), "thinking"

    # -- the handoff contract ---------------------------------------------------------

    def test_the_runtime_holds_the_spec_contract(self) -> None:
        cls = self.agent_class
        assert cls.min_clarity == self.handoff_contract["min_clarity"]
        assert cls.allowed_callers == frozenset(self.handoff_contract["can_be_called_by"])
        assert {t.value for t in cls.accepted_handoffs} == set(self.handoff_contract["supports"])

    @applies_when(lambda contract: float(contract.handoff_contract.get("min_clarity", 0)) > 0)
    def test_too_little_clarity_is_refused_without_a_model_call(self, state_dir: Path) -> None:
        needed = float(self.handoff_contract["min_clarity"])
        model = ScriptedModel()
        agent = self.new_agent(state_dir, model=model)
        context = agent.create_handoff_context(
            "Help", problem_clarity=clear_problem(needed / 2), from_agent=self.caller
        )
        result = run(agent.process_handoff(context))
        assert not result.success
        assert result.error_code == "needs_clarification"
        assert result.needs_human_input
        assert {"what", "who", "success"} <= set(
            re.findall(r"\b(what|who|success)\b", result.error or "")
        )
        assert not model.calls, "the model was asked although the problem is unclear"

    @applies_when(lambda contract: bool(contract.handoff_contract.get("can_be_called_by")))
    def test_callers_outside_the_contract_are_refused(self, state_dir: Path) -> None:
        callers = self.handoff_contract["can_be_called_by"]
        model = ScriptedModel()
        agent = self.new_agent(state_dir, model=model)
        stranger = "-".join(sorted(callers)) + "-stranger"
        context = agent.create_handoff_context(
            "Help", problem_clarity=clear_problem(), from_agent=stranger
        )
        result = run(agent.process_handoff(context))
        assert result.error_code == "caller_refused"
        assert not model.calls

    def refused_handoffs(self) -> list[HandoffType]:
        """The handoff types the spec does not accept."""
        accepted = set(self.handoff_contract.get("supports", ()))
        return [t for t in HandoffType if t.value not in accepted]

    @applies_when(lambda contract: bool(contract.refused_handoffs()))
    def test_handoff_types_outside_the_contract_are_refused(self, state_dir: Path) -> None:
        for kind in self.refused_handoffs():
            model = ScriptedModel()
            agent = self.new_agent(state_dir, model=model)
            context = agent.create_handoff_context(
                "Help", problem_clarity=clear_problem(), from_agent=self.caller, handoff_type=kind
            )
            result = run(agent.process_handoff(context))
            assert result.error_code == "handoff_type_refused", kind
            assert not model.calls

    def test_readme_states_the_accepted_handoffs(self) -> None:
        package = self.agent_class.package
        assert package is not None
        readme = (package.folder / "README.md").read_text(encoding="utf-8")
        row = re.search(r"^\| accepts \| (.*) \|$", readme, re.M)
        assert row, "the README has no accepts row"
        stated = {t.strip() for t in row.group(1).split(",")}
        assert stated == {t.value for t in self.agent_class.accepted_handoffs}

    # -- tools -------------------------------------------------------------------------

    @applies_when(lambda contract: _gives_tools(contract.agent_class))
    def test_tools_are_wired_with_valid_schemas(self) -> None:
        package = self.agent_class.package
        assert package is not None
        wiring = package.tools
        declared = self.agent_class.declared_tools  # type: ignore[attr-defined]
        functions = [t for t in declared if isinstance(t, Function)]
        toolkits = [t for t in declared if not isinstance(t, Function)]
        assert [f.name for f in functions] == [t["name"] for t in wiring.custom_tools]
        for definition in wiring.definitions:
            jsonschema.Draft202012Validator.check_schema(definition["parameters"])
            assert definition["parameters"]["type"] == "object"
        assert [list(t.include_tools or ()) for t in toolkits] == [
            list(s["tools"]) for s in wiring.mcp_servers
        ]
        for action in wiring.global_actions:
            assert action["action"] in self.agent_class.instructions

    @applies_when(lambda contract: _needs_a_server(contract.agent_class))
    def test_refuses_to_run_while_a_required_mcp_server_is_down(
        self, state_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        package = self.agent_class.package
        assert package is not None
        servers = package.tools.mcp_servers
        from mindrian.agents.mcp import McpUnavailableError, mcp_toolkit

        # Each server replaced by a process that exits at once: offline, and as down as it gets.
        down = tuple(
            {
                **s,
                "transport": "stdio",
                "command": sys.executable,
                "args": ["-c", "raise SystemExit(3)"],
                "url": "",
            }
            for s in servers
        )
        tools = package.tools.custom_functions() + tuple(map(mcp_toolkit, down))
        monkeypatch.setattr(self.agent_class, "tools", tools)
        monkeypatch.setattr(self.agent_class, "mcp_servers", down)
        model = ScriptedModel()
        with pytest.raises(McpUnavailableError) as refused:
            run(self.new_agent(state_dir, model=model).run("Anything at all"))
        for server in down:
            assert (f"MCP server {server['name']!r}" in str(refused.value)) is server["required"]
        assert not model.calls, "the model was asked before the servers were checked"


def _gives_tools(agent_class: type[MindrianAgent]) -> bool:
    """The skill gives the agent tools (or the class has no package: the test says so)."""
    package = agent_class.package
    if package is None:
        return True
    wiring = package.tools
    return bool(wiring.custom_tools or wiring.mcp_servers or wiring.global_actions)


def _needs_a_server(agent_class: type[MindrianAgent]) -> bool:
    """The agent needs an MCP server (or the class has no package: the test says so)."""
    package = agent_class.package
    return package is None or any(s.get("required") for s in package.tools.mcp_servers)


# -- OPERATOR ------------------------------------------------------------------------------


def _midpoint_scores(schema: type[Any]) -> dict[str, float]:
    scores = schema.model_fields["scores"].annotation
    values = {}
    for name, info in scores.model_fields.items():
        if name == "total":
            continue
        bounds = {type(m).__name__: m for m in info.metadata}
        low, high = bounds["Ge"].ge, bounds["Le"].le
        values[info.alias or name] = (low + high) / 2
    return values


@dataclass(frozen=True)
class Answered:
    """A handoff to an agent scripted to give a well-formed answer, as the tests read it."""

    answer: Mapping[str, Any]
    """The structured answer its model was scripted to give."""
    models: Mapping[str, Any]
    """The agent's scripted models (:meth:`StructuredAnswers.script`), holding the calls they
    received."""
    result: HandoffResult
    """What the handoff returned."""


class StructuredAnswers(AgentContract):
    """Shared by the types whose answer is an output model (operator, collaborative)."""

    agent_class: ClassVar[type[MindrianAgent]]
    output_examples: ClassVar[tuple[Mapping[str, Any], ...]] = ()
    """JSON examples of the skill's output instructions (whole answers, ``data`` or ``scores``
    objects): an answer following each must pass."""
    score_ranges: ClassVar[Mapping[str, tuple[float, float]]] = {}
    """Score name → (minimum, maximum) as the skill declares them: the schema sent to the model
    must declare each (a two-number array in the JSON file)."""

    def data_examples(self) -> tuple[Mapping[str, Any], ...]:
        """The skill's examples of the answer's ``data`` (none unless its schema has ``data``)."""
        schema = self.agent_class.output_schema  # type: ignore[attr-defined]
        if "data" not in schema.model_fields:
            return ()
        return tuple(e for e in self.output_examples if not whole_answer(e))

    def answer(self, **changes: Any) -> dict[str, Any]:
        """A well-formed answer: every declared score at the middle of its range, and the skill's
        first data example as the ``data`` when the schema has one."""
        schema = self.agent_class.output_schema  # type: ignore[attr-defined]
        answer = {
            "output": "# Result\n\nThe scripted analysis.",
            "key_findings": ["first finding", "second finding"],
            "recommendations": ["do the cheapest test first"],
            "confidence": 0.75,
            "scores": _midpoint_scores(schema),
            "open_questions": ["what would change the verdict?"],
        }
        if data := self.data_examples():
            answer["data"] = dict(data[0])
        answer.update(changes)
        return answer

    def script(self, answer: Any) -> dict[str, Any]:
        """Constructor arguments making the agent give ``answer`` as its final structured turn."""
        raise NotImplementedError

    def handoff(self, state_dir: Path, answer: Any) -> HandoffResult:
        """A handoff to the agent scripted (:meth:`script`) to give ``answer``."""
        return self.handoff_with(state_dir, self.script(answer))

    def handoff_with(self, state_dir: Path, models: Mapping[str, Any]) -> HandoffResult:
        """A handoff to the agent made with ``models`` (constructor arguments)."""
        agent = self.new_agent(state_dir, **models)
        context = agent.create_handoff_context(
            "Assess the scripted opportunity",
            problem_clarity=clear_problem(),
            from_agent=self.caller,
            return_to="larry",
        )
        return run(agent.process_handoff(context))

    def answered_handoff(self, state_dir: Path) -> Answered:
        """A handoff to the agent scripted to give the well-formed :meth:`answer`."""
        answer = self.answer()
        models = self.script(answer)
        return Answered(answer, models, self.handoff_with(state_dir, models))

    @pytest.fixture(scope="class")
    @classmethod
    def answered(cls, tmp_path_factory: pytest.TempPathFactory) -> Answered:
        """:meth:`answered_handoff` once, shared by the tests that read what it returned and what
        the models were sent (each reads it only)."""
        return cls().answered_handoff(_new_state_dir(tmp_path_factory))

    def acting(self, models: Mapping[str, Any]) -> dict[str, ScriptedModel]:
        """The scripted models of ``models`` (:meth:`script`'s constructor arguments) by part
        label, as :meth:`acting_models` gives them."""
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def told(cls, answered: Answered) -> dict[str, str]:
        """What each model was told in the well-answered handoff: every model of the agent acts
        in it, so the prompt tests read it rather than a run of their own (one run fewer)."""
        return _prompts_of(cls().acting(answered.models))

    def test_handoff_returns_the_structured_answer(self, answered: Answered) -> None:
        answer, result = answered.answer, answered.result
        assert result.success, result.error
        assert result.output_format == "structured"
        assert result.key_findings == tuple(answer["key_findings"])
        assert result.recommendations == tuple(answer["recommendations"])
        assert result.confidence == 0.75
        assert result.open_questions == tuple(answer["open_questions"])
        for name, value in answer["scores"].items():
            assert result.scores[name] == value
        for key, value in answer.get("data", {}).items():
            assert result.data[key] == value

    @applies_when(lambda contract: bool(contract.output_examples))
    def test_an_answer_following_the_skill_examples_succeeds(self, state_dir: Path) -> None:
        data = self.data_examples()
        for example in self.output_examples:
            if whole_answer(example):
                answer = dict(example)
            elif example in data:
                answer = self.answer(data=dict(example))
            else:
                answer = self.answer(scores=dict(example))
            result = self.handoff(state_dir, answer)
            assert result.success, result.error
            for name, value in answer.get("scores", {}).items():
                assert result.scores[name] == value
            for key, value in answer.get("data", {}).items():
                assert result.data[key] == value

    @applies_when(lambda contract: bool(contract.score_ranges))
    def test_the_model_is_sent_every_score_with_its_range(self, answered: Answered) -> None:
        schema = sent_schema(answered.models["model"].calls[-1])
        for name, (low, high) in self.score_ranges.items():
            assert _declares(schema, name, low, high), f"the schema does not declare {name}"

    def breakages(self) -> list[str]:
        """The ways to break the answer's schema that this package's schema has: scores to put
        out of range or leave out when it declares any, a total when it derives one, ``data``
        when the skill shows an example of it."""
        answer = self.answer()
        schema: Any = self.agent_class.output_schema  # type: ignore[attr-defined]
        found = ["prose", "confidence", "unknown_score"]
        if answer["scores"]:
            found += ["out_of_range", "no_scores"]
            if "total" in schema.model_fields["scores"].annotation.model_fields:
                found.append("wrong_total")
        if "data" in answer:
            found += ["no_data", "unknown_data_key"]
        return found

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "breakage" in metafunc.fixturenames:
            metafunc.parametrize("breakage", self.breakages())

    def test_an_answer_that_breaks_the_schema_fails(self, state_dir: Path, breakage: str) -> None:
        answer: Any = self.answer()
        scores = answer["scores"]
        answer = {
            "wrong_total": {**answer, "scores": {**scores, "total": sum(scores.values()) + 1}},
            "prose": "This is prose, not the structured answer.",
            "confidence": {**answer, "confidence": 1.5},
            "unknown_score": {**answer, "scores": {**scores, "not_a_declared_score": 1.0}},
            "out_of_range": {**answer, "scores": {k: v * 10 + 100 for k, v in scores.items()}},
            "no_scores": {**answer, "scores": {}},
            "no_data": {k: v for k, v in answer.items() if k != "data"},
            "unknown_data_key": {
                **answer,
                "data": {**answer.get("data", {}), "not_a_key_of_the_example": 1},
            },
        }[breakage]
        result = self.handoff(state_dir, answer)
        assert not result.success
        assert "schema" in (result.error or "")


class OperatorContract(StructuredAnswers, AgentContract):
    """An operator: one structured answer, through a handoff or the manager."""

    def script(self, answer: Any) -> dict[str, Any]:
        return {
            "model": ScriptedModel(Step.structured(answer) if isinstance(answer, dict) else answer)
        }

    def acting(self, models: Mapping[str, Any]) -> dict[str, ScriptedModel]:
        return {"agent": models["model"]}

    def acting_models(self, state_dir: Path) -> dict[str, ScriptedModel]:
        models = self.script(self.answer())
        run(self.new_agent(state_dir, **models).run("Assess the scripted opportunity"))
        return self.acting(models)

    def probe_agent(self, task: str, answer: Mapping[str, Any], state_dir: Path) -> MindrianAgent:
        return self.new_agent(state_dir, model=ScriptedModel(Step.structured(dict(answer))))

    def test_runs_through_the_handoff_manager(self, state_dir: Path) -> None:
        answer = self.answer()
        agent = self.new_agent(state_dir, model=ScriptedModel(Step.structured(answer)))
        manager = HandoffManager()
        manager.register_agent(agent.agent_id, agent)
        context = manager.create_delegation(
            from_agent=self.caller,
            to_agent=agent.agent_id,
            task="Assess it",
            problem_clarity=clear_problem(),
        )
        result = run(manager.execute(context))
        assert result.success, result.error
        assert result.key_findings == tuple(answer["key_findings"])


# -- ROLE ----------------------------------------------------------------------------------


class RoleContract(AgentContract):
    """A role: a conversation whose history persists per session."""

    def new_agent(self, state_dir: Path, **options: Any) -> MindrianAgent:
        return self.agent_class(state_dir=state_dir, **options)  # type: ignore[call-arg]

    def acting_models(self, state_dir: Path) -> dict[str, ScriptedModel]:
        model = ScriptedModel("What exactly goes wrong, and for whom?")
        run(self.new_agent(state_dir, model=model).run("I have an idea", session_id="prompt"))
        return {"agent": model}

    def probe_agent(self, task: str, answer: Mapping[str, Any], state_dir: Path) -> MindrianAgent:
        model = ScriptedModel("Probe reply: what is the problem, and for whom?")
        return self.new_agent(state_dir, model=model)

    def test_conversation_keeps_its_history(self, state_dir: Path) -> None:
        turns = [f"question {n}" for n in range(1, 5)]
        model = ScriptedModel(*turns)
        agent = self.new_agent(state_dir, model=model)
        assert isinstance(agent, RoleAgent)
        for n in range(1, 5):
            assert run(agent.run(f"user turn {n}", session_id="c")).content == f"question {n}"
        model.assert_complete()
        # The last call sees every earlier exchange of the session, in order.
        seen = model.calls[-1].pairs
        for n in range(1, 4):
            assert ("assistant", f"question {n}") in seen
            assert any(role == "user" and f"user turn {n}" in text for role, text in seen)
        users = [text for role, text in agent.history("c") if role == "user"]
        assert users[-4:] == [f"user turn {n}" for n in range(1, 5)]

    def test_sessions_do_not_share_history(self, state_dir: Path) -> None:
        model = ScriptedModel("First.", "Second.")
        agent = self.new_agent(state_dir, model=model)
        run(agent.run("Only in session one", session_id="one"))
        run(agent.run("Only in session two", session_id="two"))
        assert not any("Only in session one" in text for _, text in model.calls[1].pairs)

    def test_history_survives_a_new_instance(self, state_dir: Path) -> None:
        run(
            self.new_agent(state_dir, model=ScriptedModel("Noted.")).run(
                "Remember the dentists", session_id="k"
            )
        )
        model = ScriptedModel("You told me about dentists.")
        run(self.new_agent(state_dir, model=model).run("What did I say?", session_id="k"))
        assert any("Remember the dentists" in text for _, text in model.calls[0].pairs)

    @applies_when(lambda contract: HandoffType.TRANSFER in contract.agent_class.accepted_handoffs)
    def test_accepts_a_transfer(self, state_dir: Path) -> None:
        model = ScriptedModel("I have the conversation now.")
        agent = self.new_agent(state_dir, model=model)
        context = agent.create_handoff_context(
            "The user wants to keep talking",
            problem_clarity=clear_problem(),
            from_agent="orchestrator",
            handoff_type=HandoffType.TRANSFER,
            session_id="transferred",
        )
        result = run(agent.process_handoff(context))
        assert result.success, result.error
        assert result.output == "I have the conversation now."
        assert "The user wants to keep talking" in model.calls[0].last_user_message


# -- COLLABORATIVE ------------------------------------------------------------------------


class CollaborativeContract(StructuredAnswers, AgentContract):
    """A team: every member consulted, then one structured synthesis."""

    synthesizer: ClassVar[str] = ""
    """The perspective the skill names to write the synthesis ("" for none: the leader alone)."""

    def test_the_synthesiser_is_the_one_the_skill_names(self) -> None:
        assert self.agent_class.synthesizer == self.synthesizer  # type: ignore[attr-defined]

    @property
    def members(self) -> tuple[str, ...]:
        """The perspectives asked for a position: every one but the synthesiser."""
        cls: Any = self.agent_class
        return tuple(name for name, _ in cls.perspectives if name != cls.synthesizer)

    def team(self, answer: Any, task: str = "Weigh the decision") -> dict[str, Any]:
        rounds = self.agent_class.debate_rounds  # type: ignore[attr-defined]
        final = Step.structured(answer) if isinstance(answer, dict) else answer
        leader_turns = [Step.tool_call("delegate_task_to_members", task=task), final] * rounds
        members = {n: ScriptedModel(*[f"{n}: scripted position"] * rounds) for n in self.members}
        return {"model": ScriptedModel(*leader_turns), "part_models": members}

    def script(self, answer: Any) -> dict[str, Any]:
        return self.team(answer)

    def acting(self, models: Mapping[str, Any]) -> dict[str, ScriptedModel]:
        leader = self.agent_class.synthesizer or "leader"  # type: ignore[attr-defined]
        return {leader: models["model"], **models["part_models"]}

    def acting_models(self, state_dir: Path) -> dict[str, ScriptedModel]:
        models = self.team(self.answer())
        run(self.new_agent(state_dir, **models).run("Should we open a second shop?"))
        return self.acting(models)

    def probe_agent(self, task: str, answer: Mapping[str, Any], state_dir: Path) -> MindrianAgent:
        cls: Any = self.agent_class
        rounds = int(cls.debate_rounds)
        members = {
            name: ScriptedModel(*[f"{name}: probe position"] * rounds) for name in self.members
        }
        synthesis = Step.structured(dict(answer)) if cls.output_schema else "Probe synthesis"
        leader = [Step.tool_call("delegate_task_to_members", task=task), synthesis] * rounds
        return self.new_agent(state_dir, model=ScriptedModel(*leader), part_models=members)

    def test_every_member_is_consulted_and_the_synthesiser_sees_them_all(
        self, state_dir: Path
    ) -> None:
        answer = self.answer()
        models = self.team(answer)
        reply = run(self.new_agent(state_dir, **models).run("Should we open a second shop?"))
        models["model"].assert_complete()
        rounds = self.agent_class.debate_rounds  # type: ignore[attr-defined]
        for model in models["part_models"].values():
            model.assert_complete()
            assert "Should we open a second shop?" in model.calls[0].last_user_message
        assert len(reply.partials) == len(self.members) * rounds
        assert reply.content == answer["output"]
        synthesis_input = models["model"].calls[-1].contents("tool")[-1]
        for name in self.members:
            assert f"{name}: scripted position" in synthesis_input

    def test_the_synthesis_fills_the_declared_returns(self, answered: Answered) -> None:
        answer, result = answered.answer, answered.result
        assert result.success, result.error
        assert result.output.startswith(answer["output"])
        assert result.key_findings and result.recommendations
        for name in self.members:
            assert f"### {name}" in result.output

    def test_a_silent_member_fails_the_handoff(self, state_dir: Path) -> None:
        models = self.team(self.answer())
        silent = self.members[0]
        models["part_models"][silent] = ScriptedModel("")
        agent = self.new_agent(state_dir, **models)
        context = agent.create_handoff_context(
            "Decide", problem_clarity=clear_problem(), from_agent=self.caller
        )
        result = run(agent.process_handoff(context))
        assert not result.success
        assert silent in (result.error or "")


# -- PIPELINE ------------------------------------------------------------------------------


class PipelineContract(AgentContract):
    """A pipeline: phases in order, each building on the one before."""

    @property
    def phases(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.agent_class.phases)  # type: ignore[attr-defined]

    def phase_models(self) -> dict[str, ScriptedModel]:
        return {name: ScriptedModel(f"<<{name} output>>") for name in self.phases}

    def acting_models(self, state_dir: Path) -> dict[str, ScriptedModel]:
        models = self.phase_models()
        run(self.new_agent(state_dir, model=ScriptedModel(), part_models=models).run("Research it"))
        return dict(models)

    def probe_agent(self, task: str, answer: Mapping[str, Any], state_dir: Path) -> MindrianAgent:
        parts = {name: ScriptedModel(f"probe output of {name}") for name in self.phases}
        return self.new_agent(state_dir, model=ScriptedModel(), part_models=parts)

    def test_phases_run_in_order_and_each_sees_the_previous_output(self, state_dir: Path) -> None:
        models = self.phase_models()
        agent = self.new_agent(state_dir, model=ScriptedModel(), part_models=models)
        reply = run(agent.run("Research the scripted question"))
        assert [p.name for p in reply.partials] == list(self.phases)
        assert reply.content == f"<<{self.phases[-1]} output>>"
        for earlier, later in zip(self.phases, self.phases[1:], strict=False):
            assert f"<<{earlier} output>>" in models[later].calls[0].last_user_message
        for model in models.values():
            model.assert_complete()
            assert "Research the scripted question" in "\n".join(t for _, t in model.calls[0].pairs)

    def test_a_phase_without_output_fails_the_handoff(self, state_dir: Path) -> None:
        models = self.phase_models()
        models[self.phases[-1]] = ScriptedModel("")
        agent = self.new_agent(state_dir, model=ScriptedModel(), part_models=models)
        context = agent.create_handoff_context(
            "Go", problem_clarity=clear_problem(), from_agent=self.caller
        )
        result = run(agent.process_handoff(context))
        assert not result.success
        assert self.phases[-1] in (result.error or "")

    def test_handoff_returns_the_last_phase_with_every_partial(self, state_dir: Path) -> None:
        agent = self.new_agent(state_dir, model=ScriptedModel(), part_models=self.phase_models())
        context = agent.create_handoff_context(
            "Go", problem_clarity=clear_problem(), from_agent=self.caller, return_to="larry"
        )
        result = run(agent.process_handoff(context))
        assert result.success, result.error
        assert result.output.startswith(f"<<{self.phases[-1]} output>>")
        for name in self.phases:
            assert f"### {name}" in result.output


# -- GUIDED --------------------------------------------------------------------------------


class GuidedContract(AgentContract):
    """A guided agent: pauses for the user at every step; back, skip and resume."""

    @property
    def steps(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.agent_class.steps)  # type: ignore[attr-defined]

    def step_models(self, turns: int = 1) -> dict[str, ScriptedModel]:
        return {name: ScriptedModel(*[f"<<{name} question>>"] * turns) for name in self.steps}

    def new_agent(self, state_dir: Path, **options: Any) -> MindrianAgent:
        return self.agent_class(state_dir=state_dir, **options)  # type: ignore[call-arg]

    def probe_agent(self, task: str, answer: Mapping[str, Any], state_dir: Path) -> MindrianAgent:
        parts = {name: ScriptedModel(f"probe question of {name}") for name in self.steps}
        return self.new_agent(state_dir, model=ScriptedModel(), part_models=parts)

    def acting_models(self, state_dir: Path) -> dict[str, ScriptedModel]:
        models = self.step_models()
        agent = self.new_agent(state_dir, model=ScriptedModel(), part_models=models)
        reply = run(agent.start("Help me", session_id="prompt"))  # type: ignore[attr-defined]
        while reply.awaiting_input:
            reply = run(agent.respond("prompt", "an answer"))  # type: ignore[attr-defined]
        return dict(models)

    def test_pauses_at_every_step_and_finishes(self, state_dir: Path) -> None:
        models = self.step_models()
        agent: Any = self.new_agent(state_dir, model=ScriptedModel(), part_models=models)
        reply = run(agent.start("Help me fill this in", session_id="s1"))
        for index, name in enumerate(self.steps):
            assert reply.awaiting_input
            assert reply.content == f"<<{name} question>>"
            assert f"Step {index + 1} of {len(self.steps)}" in reply.prompt_for_user
            reply = run(agent.respond("s1", f"answer to {name}"))
        assert not reply.awaiting_input
        assert [p.user_input for p in reply.partials] == [f"answer to {n}" for n in self.steps]
        for earlier, later in zip(self.steps, self.steps[1:], strict=False):
            assert f"answer to {earlier}" in models[later].calls[0].last_user_message

    def test_resumes_in_a_new_instance(self, state_dir: Path) -> None:
        models = self.step_models()
        first: Any = self.new_agent(state_dir, model=ScriptedModel(), part_models=models)
        run(first.start("Help me", session_id="kept"))
        resumed: Any = self.new_agent(state_dir, model=ScriptedModel(), part_models=models)
        progress = resumed.load_progress("kept")
        assert progress is not None and progress.position == 0
        run(resumed.respond("kept", "my first answer"))
        assert resumed.load_progress("kept").partials[0].user_input == "my first answer"

    @applies_when(lambda contract: len(contract.steps) >= 2)  # one has nothing to go back to
    def test_back_reopens_the_previous_step(self, state_dir: Path) -> None:
        agent: Any = self.new_agent(
            state_dir, model=ScriptedModel(), part_models=self.step_models(turns=2)
        )
        run(agent.start("Help me", session_id="b"))
        run(agent.respond("b", "first try"))
        reply = run(agent.respond("b", BACK))
        assert reply.awaiting_input and reply.content == f"<<{self.steps[0]} question>>"
        run(agent.respond("b", "second try"))
        assert agent.load_progress("b").partials[0].user_input == "second try"

    def test_skip_leaves_the_step_out(self, state_dir: Path) -> None:
        agent: Any = self.new_agent(
            state_dir, model=ScriptedModel(), part_models=self.step_models()
        )
        run(agent.start("Help me", session_id="k"))
        reply = run(agent.respond("k", SKIP))
        assert reply.partials[0].status == "skipped"

    def test_handoff_pauses_and_asks_for_the_user(self, state_dir: Path) -> None:
        agent = self.new_agent(state_dir, model=ScriptedModel(), part_models=self.step_models())
        context = agent.create_handoff_context(
            "Walk me through it",
            problem_clarity=clear_problem(),
            from_agent=self.caller,
            session_id="h",
        )
        result = run(agent.process_handoff(context))
        assert result.success, result.error
        assert result.needs_human_input
        assert f"Step 1 of {len(self.steps)}" in result.human_input_reason


def contract_for(agent_class: type[MindrianAgent]) -> AgentContract:
    """The contract of ``agent_class``'s type (its record names it), bound to it (for use outside
    pytest)."""
    contract_class: type[AgentContract] = globals()[record_of(agent_class.agent_type).contract]
    contract = contract_class()
    contract.agent_class = agent_class  # type: ignore[misc]
    return contract
