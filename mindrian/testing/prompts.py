"""The exact system prompts of a generated agent, for authors and reviewers.

``mindrian explain ID --prompt`` prints them.

The agent runs once, offline, with a :class:`~mindrian.testing.ScriptedModel`
for every model that acts for it (the agent, each team member and the leader,
each phase, each step); what each model received as its system message is what
a real model would receive. MCP servers are not started: they change the tools
offered, not the prompt.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

from mindrian.agents import MindrianAgent
from mindrian.agents.package import SPEC_FILE, AgentPackage
from mindrian.errors import MindrianError
from mindrian.testing.contract import contract_for

__all__ = ["PackageNotFoundError", "agent_class_of", "render_prompts", "system_prompts"]


class PackageNotFoundError(MindrianError, LookupError):
    """No generated package under the folder has the agent id."""


def _package_folder(out_dir: Path, agent_id: str) -> Path:
    for spec in sorted(out_dir.glob(f"*/{SPEC_FILE}")):
        if AgentPackage.load(spec).spec.get("id") == agent_id:
            return spec.parent
    raise PackageNotFoundError(f"no generated package with id {agent_id!r} under {out_dir}")


def agent_class_of(out_dir: Path, agent_id: str) -> type[MindrianAgent]:
    """The agent class of the package with ``agent_id`` under ``out_dir`` (imported from there)."""
    folder = _package_folder(out_dir, agent_id)
    root = str(folder.parent.resolve())
    if root not in sys.path:
        sys.path.insert(0, root)
    module = importlib.import_module(f"{folder.name}.agent")
    classes = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, MindrianAgent)
        and getattr(value, "package", None) is not None
        and value.__module__ == module.__name__
    ]
    if len(classes) != 1:
        raise PackageNotFoundError(f"{folder} declares {len(classes)} agent classes, not one")
    return classes[0]


def system_prompts(agent_class: type[MindrianAgent]) -> dict[str, str]:
    """Part label → the exact system message that part's model receives."""
    package = agent_class.package
    custom = package.tools.custom_functions() if package is not None else ()
    offline = type(
        agent_class.__name__,
        (agent_class,),
        {"__module__": agent_class.__module__, "tools": custom, "mcp_servers": ()},
    )
    with tempfile.TemporaryDirectory(prefix="mindrian-prompt-") as state:
        return contract_for(offline).system_prompts(Path(state))


def render_prompts(prompts: dict[str, str]) -> str:
    """The prompts as text, each under a ``=== label ===`` line."""
    return (
        "\n\n".join(f"=== {label} ===\n{text.rstrip()}" for label, text in prompts.items()) + "\n"
    )
