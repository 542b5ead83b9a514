"""Model scripts for ``--model scripted:PATH`` built from the committed examples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from http_server import ROOT

__all__ = ["GOOD_PWS", "SCHEMA_BREAKING_PWS", "write_script"]


def _first_answer(name: str) -> dict[str, Any]:
    document = yaml.safe_load((ROOT / "examples" / name).read_text(encoding="utf-8"))
    answer: dict[str, Any] = document["answers"][0]
    return answer


#: The scorecard of examples/pws.yaml (a ``json`` answer).
GOOD_PWS = _first_answer("pws.yaml")
#: The answer of examples/pws-schema-breaking.yaml.
SCHEMA_BREAKING_PWS = _first_answer("pws-schema-breaking.yaml")


def write_script(path: Path, agents: dict[str, list[Any]], *, repeat: bool = False) -> Path:
    """A script file giving each agent its answers; returns its path."""
    path.write_text(yaml.safe_dump({"agents": agents, "repeat": repeat}), encoding="utf-8")
    return path
