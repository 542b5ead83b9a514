"""Phase checkpoints: ``<root>/<agent_id>/<n>-<phase>.yaml``, one per phase reached.

A checkpoint holds, in this key order: phase, number, builder_version,
input_digest, passed, checks (name, passed, reason, location), warnings and
the phase output as plain YAML. Nothing time- or machine-dependent goes in,
so the same inputs always give the same bytes. Files are replaced atomically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from builder.pipeline.contract import CheckResult
from builder.pipeline.errors import PipelineError
from builder.pipeline.serial import dump_yaml, from_plain, load_yaml, to_plain
from mindrian.atomic import atomic_write_text

__all__ = [
    "Checkpoint",
    "CheckpointStore",
    "parse_checkpoint",
    "render_checkpoint",
    "valid_agent_id",
]

#: Agent ids double as directory names, so only these are accepted.
_AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")

#: The keys every checkpoint has, in the order they are written.
_KEYS = (
    "phase",
    "number",
    "builder_version",
    "input_digest",
    "passed",
    "checks",
    "warnings",
    "output",
)


@dataclass(frozen=True)
class Checkpoint:
    """The stored record of one phase run."""

    phase: str
    """Phase name."""
    number: int
    """1-based phase number."""
    builder_version: str
    """Version of the builder that wrote it."""
    input_digest: str
    """``sha256:`` digest of everything the phase read."""
    passed: bool
    """Whether every check held."""
    checks: tuple[CheckResult, ...]
    """Each check's verdict, in the phase's order."""
    warnings: tuple[str, ...]
    """The phase's warnings."""
    output: Any
    """The phase output as plain data."""


def valid_agent_id(agent_id: str) -> bool:
    """Whether ``agent_id`` can safely name a checkpoint folder."""
    return bool(_AGENT_ID.match(agent_id)) and ".." not in agent_id


def render_checkpoint(checkpoint: Checkpoint) -> str:
    """The YAML text of a checkpoint (deterministic)."""
    return dump_yaml(_plain(checkpoint))


def _plain(checkpoint: Checkpoint) -> dict[str, Any]:
    return {
        "phase": checkpoint.phase,
        "number": checkpoint.number,
        "builder_version": checkpoint.builder_version,
        "input_digest": checkpoint.input_digest,
        "passed": checkpoint.passed,
        "checks": [to_plain(c) for c in checkpoint.checks],
        "warnings": list(checkpoint.warnings),
        "output": checkpoint.output,
    }


def parse_checkpoint(text: str, where: str) -> Checkpoint:
    """Read checkpoint YAML; ``PipelineError`` (P005) naming ``where`` when it is damaged."""
    try:
        data = load_yaml(text)
        if not isinstance(data, dict) or tuple(data) != _KEYS:
            raise ValueError(f"expected the keys {', '.join(_KEYS)}")
        return Checkpoint(
            phase=from_plain(str, data["phase"]),
            number=from_plain(int, data["number"]),
            builder_version=from_plain(str, data["builder_version"]),
            input_digest=from_plain(str, data["input_digest"]),
            passed=from_plain(bool, data["passed"]),
            checks=from_plain(tuple[CheckResult, ...], data["checks"]),
            warnings=from_plain(tuple[str, ...], data["warnings"]),
            output=data["output"],
        )
    except (yaml.YAMLError, TypeError, ValueError, KeyError) as exc:
        raise PipelineError(f"checkpoint {where} is damaged: {exc}", code="P005") from None


@dataclass(frozen=True)
class CheckpointStore:
    """The checkpoint folder of a project (``.mindrian/checkpoints`` by default)."""

    root: Path
    """Folder holding one sub-folder per agent id."""

    def path(self, agent_id: str, number: int, phase: str) -> Path:
        """Where the checkpoint of ``phase`` for ``agent_id`` lives."""
        if not valid_agent_id(agent_id):
            raise PipelineError(
                f"agent id {agent_id!r} cannot name a checkpoint folder", code="P006"
            )
        return self.root / agent_id / f"{number}-{phase}.yaml"

    def write(self, agent_id: str, checkpoint: Checkpoint) -> bool:
        """Store a checkpoint atomically; True when the file's bytes changed."""
        path = self.path(agent_id, checkpoint.number, checkpoint.phase)
        text = render_checkpoint(checkpoint)
        if path.is_file() and path.read_bytes() == text.encode("utf-8"):
            return False
        atomic_write_text(path, text)
        return True

    def read(self, agent_id: str, number: int, phase: str) -> Checkpoint | None:
        """The stored checkpoint, None when there is none (``PipelineError`` when damaged)."""
        path = self.path(agent_id, number, phase)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise PipelineError(f"checkpoint {path} cannot be read: {exc}", code="P005") from None
        return parse_checkpoint(text, str(path))

    def find_agent(self, number: int, phase: str, input_digest: str) -> str | None:
        """The agent whose passing checkpoint of ``phase`` has this input digest.

        Used for phase 1, whose agent id is only known once it has run: only
        the scalar header of each candidate is parsed, not its output.
        """
        for path in sorted(self.root.glob(f"*/{number}-{phase}.yaml")):
            header = _header(path)
            if header.get("input_digest") == input_digest and header.get("passed") is True:
                return path.parent.name
        return None

    def remove_from(self, agent_id: str, number: int) -> None:
        """Delete the agent's checkpoints of phase ``number`` and later (they no longer follow from
        the sources)."""
        folder = self.root / agent_id
        for path in sorted(folder.glob("*-*.yaml")):
            head = path.name.split("-", 1)[0]
            if head.isdigit() and int(head) >= number:
                path.unlink()

    def load_all(self, agent_id: str) -> tuple[dict[str, Any], ...]:
        """Every checkpoint of an agent as stored plain data, by phase number."""
        if not valid_agent_id(agent_id):
            raise PipelineError(f"{agent_id!r} is not an agent id", code="P006")
        found = [
            _plain(parse_checkpoint(path.read_text(encoding="utf-8"), str(path)))
            for path in (self.root / agent_id).glob("*-*.yaml")
        ]
        return tuple(sorted(found, key=lambda c: c["number"]))


def _header(path: Path) -> dict[str, Any]:
    # The scalar keys come first, so reading up to ``checks:`` avoids parsing a large output.
    lines = []
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("checks:"):
                    break
                lines.append(line)
        data = load_yaml("".join(lines))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}
