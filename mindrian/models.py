"""Choosing the model agents run with: ``--model PROVIDER:ID``, ``MINDRIAN_MODEL``, or a script.

``scripted:PATH`` replays a YAML or JSON script through
:class:`~mindrian.testing.ScriptedModel`, so agents run and serve with no API
key (demos, CI, reviewers). Any other ``provider:model_id`` is handed to Agno
as it is. The script file::

    # answers every agent takes in turn, unless it has its own list below
    answers:
      - json: {output: "# Scorecard ...", scores: {problem: 20}}
      - text: "A plain text answer"
      - "also a plain text answer"
      - tool_call: {name: get_framework, arguments: {id: jtbd}}
    agents:                 # optional: answers of one agent, by id
      lean-canvas: ["Step 1 ...", "Step 2 ..."]
    repeat: false           # true: start over after the last answer (servers, benchmarks)

Each agent gets its own model over its list, so agents served together do
not take each other's answers; the parts of one agent (pipeline phases,
guided steps, team members) take its answers in the order they run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from mindrian.agents.base import ModelRef
from mindrian.errors import MindrianError
from mindrian.testing import ScriptedModel, Step

__all__ = [
    "MODEL_ENV",
    "SCRIPTED_PREFIX",
    "ModelChoice",
    "ModelScript",
    "ModelScriptError",
    "choose_model",
    "load_script",
    "model_from_environment",
]

#: Environment variable overriding the model of every agent (``provider:id`` or ``scripted:PATH``).
MODEL_ENV = "MINDRIAN_MODEL"
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

    def model_for(self, agent_id: str) -> ModelRef | None:
        """The model for one agent: a scripted model, the provider string, or None (its default)."""
        if self.script is not None:
            return self.script.model_for(agent_id)
        return self.reference


def choose_model(option: str | None, *, base: Path | None = None) -> ModelChoice:
    """The ``--model`` option, else ``$MINDRIAN_MODEL``, else each agent's own model.

    A relative script path is resolved against ``base`` (the working directory when None).
    Raises :class:`ModelScriptError` for a malformed reference or script.
    """
    reference = option or os.environ.get(MODEL_ENV) or None
    if reference is None:
        return ModelChoice(None)
    if reference.startswith(SCRIPTED_PREFIX):
        path = Path(reference.removeprefix(SCRIPTED_PREFIX))
        if not path.is_absolute() and base is not None:
            path = base / path
        return ModelChoice(reference, load_script(path))
    provider, _, model_id = reference.partition(":")
    if not provider or not model_id:
        raise ModelScriptError(
            f"model {reference!r} is not PROVIDER:MODEL_ID (e.g. anthropic:claude-sonnet-4-5) "
            f"or {SCRIPTED_PREFIX}PATH"
        )
    return ModelChoice(reference)


def model_from_environment(agent_id: str) -> ModelRef | None:
    """What ``$MINDRIAN_MODEL`` gives ``agent_id``, or None when it is unset."""
    return choose_model(None).model_for(agent_id)


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
    unknown = sorted(set(document) - {"answers", "agents", "repeat"})
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
    """One answer: a string (text), or a mapping with exactly one of text, json, tool_call."""
    if isinstance(item, str):
        return item
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
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise ModelScriptError(f"{where}: 'tool_call' needs a name and optional arguments")
    arguments = value.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise ModelScriptError(f"{where}: tool_call arguments must be a mapping")
    return Step.tool_call(value["name"], **arguments)
