"""The mindrian runtime: everything a generated agent package imports.

Submodules are imported on demand so that ``import mindrian`` stays cheap:
``mindrian.handoff`` (the typed handoff protocol and its manager),
``mindrian.agents`` (one base per agent type, on Agno), ``mindrian.graph``
(framework registries), ``mindrian.frames`` (terminal control frames),
``mindrian.workflow`` (DOT thought graphs), ``mindrian.guards`` (the read-only
Cypher tool) and ``mindrian.testing`` (ScriptedModel and the offline guard).
``MindrianError`` is the base of every public exception the runtime raises.
"""

from mindrian.errors import MindrianError

__all__ = ["MindrianError", "__version__"]

__version__ = "0.1.0"
