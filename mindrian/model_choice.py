"""Choosing the model agents run with: ``--model PROVIDER:ID``, ``MINDRIAN_MODEL``, or a script.

``scripted:PATH`` replays a YAML or JSON script through
:class:`~mindrian.scripted.ScriptedModel`, so agents run and serve with no API
key (demos, CI, reviewers). Any other ``provider:model_id`` is built by Agno
(:mod:`mindrian.providers`), at ``--base-url`` / ``MINDRIAN_BASE_URL`` when
given, with the run's settings override. The script file::

    # answers every agent takes in turn, unless it has its own list below
    answers:
      - json: {output: "# Scorecard ...", scores: {problem: 20}}
      - text: "A plain text answer"
      - "also a plain text answer"
      - tool_call: {name: get_framework, arguments: {id: jtbd}}
      - tool_calls: [{name: a, arguments: {}}, {name: b}]   # one turn, several calls
        text: "optional text beside them"
    agents:                 # optional: answers of one agent, by id
      lean-canvas: ["Step 1 ...", "Step 2 ..."]
    repeat: false           # true: start over after the last answer (servers, benchmarks)
    tool_calls: [...]       # written by --record: what the host tools did; ignored on replay

Each agent gets its own model over its list, so agents served together do
not take each other's answers; the parts of one agent (pipeline phases,
guided steps, team members) take its answers in the order they run.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import yaml
from agno.models.base import Model

from mindrian.errors import MindrianError
from mindrian.model_settings import SettingsOverride
from mindrian.providers import ProviderModel
from mindrian.recording import Recording
from mindrian.scripted import ScriptedModel, Step, ToolCall

__all__ = [
    "BASE_URL_ENV",
    "MODEL_ENV",
    "SCRIPTED_PREFIX",
    "ModelChoice",
    "ModelRef",
    "ModelScript",
    "ModelScriptError",
    "choose_model",
    "load_script",
    "model_from_environment",
]

#: A model object, a "provider:model_id" string Agno resolves itself, or a run's provider choice.
ModelRef: TypeAlias = Model | str | ProviderModel

#: Environment variable overriding the model of every agent (``provider:id`` or ``scripted:PATH``).
MODEL_ENV = "MINDRIAN_MODEL"
#: Environment variable giving the server of an OpenAI-compatible provider (``--base-url``).
BASE_URL_ENV = "MINDRIAN_BASE_URL"
#: Provider prefix of a scripted model.
SCRIPTED_PREFIX = "scripted:"
#: Keys an answer mapping may have; exactly one of them.
_ANSWER_KINDS = ("text", "json", "tool_call")


class ModelScriptError(MindrianError, ValueError):
    """A ``--model`` value or a script file that cannot be used."""


@dataclass(frozen=True)
class ModelScript:
    """A parsed script file."""

    answers: tuple[Any, ...]
    """Script entries of agents without a list of their own."""
    agents: Mapping[str, tuple[Any, ...]]
    """Script entries by agent id."""
    repeat: bool
    """Whether each model starts over after its last entry."""

    def model_for(self, agent_id: str) -> ScriptedModel:
        """A fresh model replaying ``agent_id``'s answers."""
        entries = self.agents.get(agent_id, self.answers)
        return ScriptedModel(*entries, id=f"scripted:{agent_id}", cycle=self.repeat)


@dataclass(frozen=True)
class ModelChoice:
    """The model every agent of a command runs with; None keeps each agent's own."""

    reference: str | None
    """``provider:id`` or ``scripted:PATH`` as given, or None."""
    script: ModelScript | None = None
    """The loaded script when the reference is ``scripted:``."""
    base_url: str | None = None
    """Server of an OpenAI-compatible provider; None: the provider's own."""
    override: SettingsOverride = field(default_factory=SettingsOverride)
    """Settings put in place of the spec's in every model of every agent."""
    recording: Recording | None = None
    """Where every model's turns are recorded (``--record``); None: not recorded."""

    def model_for(self, agent_id: str, default: str | None = None) -> ModelRef | None:
        """The model for one agent: a scripted model, a provider choice, or None (its own).

        ``default`` is the agent's own model: a base URL, an override or a recording
        given without ``--model`` applies to it.
        """
        watch = None
        if self.recording is not None:
            watch = functools.partial(self.recording.watch, agent_id=agent_id)
        if self.script is not None:
            scripted = self.script.model_for(agent_id)
            return scripted if watch is None else watch(scripted)
        reference = self.reference or default
        if reference is None or (
            self.reference is None
            and self.base_url is None
            and self.override.empty
            and watch is None
        ):
            return self.reference
        return ProviderModel(reference, self.base_url, self.override, watch)

    def run_model_for(self, agent_id: str, default: str | None) -> ModelRef | None:
        """:meth:`model_for` for a command that runs the agent (``run``, ``serve``): the agent's
        own model too becomes a provider choice, so its SDK and API key are checked before any
        request (an agent built in Python keeps its own model unchecked until it runs)."""
        chosen = self.model_for(agent_id, default)
        return ProviderModel(default) if chosen is None and default is not None else chosen


def choose_model(
    option: str | None,
    *,
    base: Path | None = None,
    base_url: str | None = None,
    override: SettingsOverride | None = None,
    recording: Recording | None = None,
) -> ModelChoice:
    """The ``--model`` option, else ``$MINDRIAN_MODEL``, else each agent's own model.

    ``base_url`` (else ``$MINDRIAN_BASE_URL``) and ``override`` apply to every
    provider model; ``recording`` records every model's turns. A relative script
    path is resolved against ``base`` (the
    working directory when None). Raises :class:`ModelScriptError` for a
    malformed reference, base URL or script.
    """
    reference = option or os.environ.get(MODEL_ENV) or None
    url = base_url or os.environ.get(BASE_URL_ENV) or None
    override = override or SettingsOverride()
    if url is not None and not url.startswith(("http://", "https://")):
        raise ModelScriptError(f"base URL {url!r} is not http://... or https://...")
    if reference is None:
        return ModelChoice(None, base_url=url, override=override, recording=recording)
    if reference.startswith(SCRIPTED_PREFIX):
        path = Path(reference.removeprefix(SCRIPTED_PREFIX))
        if not path.is_absolute() and base is not None:
            path = base / path
        return ModelChoice(reference, load_script(path), recording=recording)
    provider, _, model_id = reference.partition(":")
    if not provider or not model_id:
        raise ModelScriptError(
            f"model {reference!r} is not PROVIDER:MODEL_ID (e.g. anthropic:claude-sonnet-4-5) "
            f"or {SCRIPTED_PREFIX}PATH"
        )
    return ModelChoice(reference, base_url=url, override=override, recording=recording)


def model_from_environment(agent_id: str, default: str | None = None) -> ModelRef | None:
    """What ``$MINDRIAN_MODEL`` and ``$MINDRIAN_BASE_URL`` give ``agent_id``, or None when unset.

    ``default`` is the agent's own model, which a base URL alone applies to.
    """
    return choose_model(None).model_for(agent_id, default)


def load_script(path: Path) -> ModelScript:
    """Read and check a script file (YAML, of which JSON is a subset)."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ModelScriptError(f"{path}: cannot read the model script: {error.strerror}") from error
    except yaml.YAMLError as error:
        raise ModelScriptError(f"{path}: not YAML: {error}") from error
    if not isinstance(document, dict):
        raise ModelScriptError(
            f"{path}: a model script is a mapping with 'answers' and/or 'agents'"
        )
    unknown = sorted(set(document) - {"answers", "agents", "repeat", "tool_calls"})
    if unknown:
        raise ModelScriptError(f"{path}: unknown key(s) {', '.join(unknown)}")
    agents = document.get("agents") or {}
    if not isinstance(agents, dict):
        raise ModelScriptError(f"{path}: 'agents' maps agent ids to lists of answers")
    script = ModelScript(
        answers=_entries(document.get("answers") or [], f"{path}: answers"),
        agents={str(k): _entries(v, f"{path}: agents.{k}") for k, v in sorted(agents.items())},
        repeat=bool(document.get("repeat", False)),
    )
    if not script.answers and not script.agents:
        raise ModelScriptError(f"{path}: the script has no answers")
    return script


def _entries(items: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(items, list):
        raise ModelScriptError(f"{where}: expected a list of answers")
    return tuple(_entry(item, f"{where}[{index}]") for index, item in enumerate(items))


def _entry(item: Any, where: str) -> Any:
    """One answer: a string (text), or a mapping with exactly one of text, json, tool_call.

    A turn of several tool calls is ``tool_calls`` (a list), with an optional ``text``.
    """
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and "tool_calls" in item:
        return _tool_calls_entry(item, where)
    kinds = [k for k in _ANSWER_KINDS if isinstance(item, dict) and k in item]
    if not isinstance(item, dict) or len(kinds) != 1 or len(item) != 1:
        raise ModelScriptError(
            f"{where}: an answer is a string or a mapping with one key: {', '.join(_ANSWER_KINDS)}"
        )
    value = item[kinds[0]]
    if kinds[0] == "text":
        if not isinstance(value, str):
            raise ModelScriptError(f"{where}: 'text' must be a string")
        return value
    if kinds[0] == "json":
        # Sent as the model's JSON text, exactly as a provider's structured answer would arrive.
        return Step.text(json.dumps(value, sort_keys=True))
    call = _tool_call(value, where)
    return Step.tool_call(call.name, **call.arguments)


def _tool_call(value: Any, where: str) -> ToolCall:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise ModelScriptError(f"{where}: 'tool_call' needs a name and optional arguments")
    arguments = value.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise ModelScriptError(f"{where}: tool_call arguments must be a mapping")
    return ToolCall(value["name"], arguments)


def _tool_calls_entry(item: dict[str, Any], where: str) -> Step:
    calls, text = item["tool_calls"], item.get("text")
    if set(item) - {"tool_calls", "text"} or not isinstance(calls, list) or not calls:
        raise ModelScriptError(
            f"{where}: 'tool_calls' is a non-empty list, beside an optional text"
        )
    if text is not None and not isinstance(text, str):
        raise ModelScriptError(f"{where}: 'text' must be a string")
    found = tuple(_tool_call(call, f"{where}.tool_calls[{n}]") for n, call in enumerate(calls))
    return Step(content=text, tool_calls=found)
