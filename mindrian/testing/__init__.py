"""Offline testing support: a scripted Agno model and a pytest guard against real model calls.

:class:`ScriptedModel` replays scripted turns (text, tool calls, structured
output) through the real Agno run loop; :mod:`mindrian.testing.pytest_plugin`
fails any test that reaches a real provider or the network.
"""

from mindrian.scripted import (
    ModelCall,
    ScriptedModel,
    ScriptEntry,
    ScriptExhaustedError,
    SeenMessage,
    Step,
    ToolCall,
)

__all__ = [
    "ModelCall",
    "ScriptEntry",
    "ScriptExhaustedError",
    "ScriptedModel",
    "SeenMessage",
    "Step",
    "ToolCall",
]
