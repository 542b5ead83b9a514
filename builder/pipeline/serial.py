"""The builder's plain-data conversion and YAML: the runtime's one serialiser.

``mindrian.serial`` holds it, since ``mindrian`` never imports ``builder``; phase
outputs, checkpoints and the builder's modules reach it through this name.
"""

from __future__ import annotations

from mindrian.serial import dump_yaml, from_plain, load_yaml, to_plain

__all__ = ["dump_yaml", "from_plain", "load_yaml", "to_plain"]
