"""A generated agent package as data: its ``spec.yaml`` and ``instructions.md``, read at import.

A generated ``agent.py`` is one class statement::

    PACKAGE = AgentPackage.load(__file__)

    class PwsValidationAgent(OperatorAgent, package=PACKAGE):
        \"\"\"Generated operator agent (pws_validation).\"\"\"

and :meth:`AgentPackage.class_attributes` turns the package's data into the
class attributes every base reads: identity, model and its settings,
instructions, tools, the handoff contract of phase 3; what only a type needs (output model,
perspectives and synthesiser, phases, steps) its base reads with ``type_attributes``. Regenerating a
package therefore changes data, never behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml  # PyYAML, a dependency of agno

from mindrian.agents.output import scored_output
from mindrian.agents.references import reference_elements
from mindrian.agents.tools import ToolWiring
from mindrian.handoff import HandoffType, ReturnBehavior
from mindrian.model_settings import ModelSettings

__all__ = ["INSTRUCTIONS_FILE", "SKILL_FOLDER", "SPEC_FILE", "AgentPackage", "data_file"]

#: The instructions of a package, verbatim from the skill.
INSTRUCTIONS_FILE = "instructions.md"
#: The final AgentSpec of a package.
SPEC_FILE = "spec.yaml"
#: The folder holding a copy of the skill's own files (references, scripts, assets…).
SKILL_FOLDER = "skill"


def data_file(folder: Path, name: str) -> str:
    """A data file of a package without its generated-file header (an HTML comment in markdown)."""
    text = (folder / name).read_text(encoding="utf-8")
    if name.endswith(".md") and text.startswith("<!--"):
        text = text.split("-->\n", 1)[1]
    return text


def _camel(identifier: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in identifier.split("_") if w) or "Agent"


@dataclass(frozen=True)
class AgentPackage:
    """The data of one generated package."""

    folder: Path
    """The package folder."""
    spec: Mapping[str, Any]
    """The final AgentSpec as plain data (``spec.yaml``)."""
    instructions: str
    """What every model acting for the agent is told (``instructions.md``, header removed)."""

    @classmethod
    def load(cls, module_file: str | Path) -> AgentPackage:
        """The package whose module is ``module_file`` (a generated ``agent.py``'s ``__file__``)."""
        folder = Path(module_file).resolve().parent
        spec = yaml.safe_load(data_file(folder, SPEC_FILE))
        if not isinstance(spec, dict) or "id" not in spec:
            raise ValueError(f"{folder / SPEC_FILE} is not an agent spec")
        return cls(folder=folder, spec=spec, instructions=data_file(folder, INSTRUCTIONS_FILE))

    @property
    def tools(self) -> ToolWiring:
        """The tool wiring of the spec's ``tools`` block."""
        return ToolWiring.from_spec(self.spec.get("tools"))

    @property
    def handoff(self) -> Mapping[str, Any]:
        """Phase 3's contract (empty for a spec that has none)."""
        return self.spec.get("handoff") or {}

    @property
    def accepted_handoffs(self) -> frozenset[HandoffType]:
        """Handoff types it accepts: phase 3's ``supports``, read by README and runtime alike."""
        return frozenset(HandoffType(t) for t in self.handoff.get("supports", ("delegate",)))

    @property
    def output_name(self) -> str:
        """Class-name stem of the package's output model (``PwsValidation``)."""
        return _camel(str(self.spec["identifier"]))

    def output_model(self) -> type[Any]:
        """The output model with the spec's scores declared (and ``total`` when bands use it),
        and a ``data`` field when phase 3 inferred a schema from the skill's output example."""
        dimensions = tuple(self.spec.get("scores") or ())
        returns = self.handoff.get("returns") or {}
        return scored_output(
            self.output_name,
            dimensions,
            total=bool(self.spec.get("score_bands")),
            data=returns.get("data_schema") or None,
        )

    def class_attributes(self, agent_type: str) -> dict[str, Any]:
        """The class attributes of the agent class built on the ``agent_type`` base."""
        if agent_type != self.spec["type"]:
            raise TypeError(
                f"{self.folder.name} is a {self.spec['type']} agent, not a {agent_type} agent"
            )
        tools = self.tools
        receives = self.handoff.get("receives") or {}
        routing = self.handoff.get("routing") or {}
        behaviour = routing.get("return_behavior")
        attributes: dict[str, Any] = {
            "package": self,
            "agent_id": self.spec["id"],
            "name": self.spec["name"],
            "description": self.spec["description"],
            "model": self.spec["model"]["string"],
            "model_settings": ModelSettings.from_spec(self.spec["model"]),
            "instructions": self.instructions + tools.guide,
            "tools": tools.all_tools(),
            "mcp_servers": tools.mcp_servers,
            "host_grant": tools.host,
            "skill_dir": self.folder / SKILL_FOLDER,
            "accepted_handoffs": self.accepted_handoffs,
            "min_clarity": float(receives.get("min_clarity") or 0.0),
            "allowed_callers": frozenset(routing.get("can_be_called_by") or ()),
            "return_behavior": ReturnBehavior(behaviour) if behaviour else None,
            "references": reference_elements(self.spec, self.folder / SKILL_FOLDER),
        }
        return attributes

    @property
    def metadata(self) -> Mapping[str, Any]:
        """The spec's ``metadata`` (the skill's fields mindrian does not read itself)."""
        return self.spec.get("metadata") or {}

    def parts(self, key: str) -> tuple[tuple[str, str], ...]:
        """(name, instructions) of each item of the spec's ``key`` list (``steps``,
        ``sub_agents``), in order."""
        return tuple(
            (str(i["name"]), str(i.get("instructions") or "")) for i in self.spec.get(key) or ()
        )
