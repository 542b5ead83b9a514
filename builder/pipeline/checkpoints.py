"""Phase checkpoints: ``<root>/<agent_id>/<n>-<phase>.yaml``, one per phase reached.

A checkpoint holds, in this key order: phase, number, builder_version,
input_digest, output_digest, passed, checks (name, passed, reason, location),
warnings and the phase output as plain YAML. Nothing time- or
machine-dependent goes in, so the same inputs always give the same bytes.
Files are replaced atomically, without an fsync (:mod:`mindrian.atomic`): a
checkpoint that a crash of the machine left truncated fails its parse or its
output digest, or is missing, and a build then runs its phase again (``--from``,
which relies on it, says it is damaged: P005); the index entries below are
trusted only once their checkpoint is read.

The output comes last so that :meth:`CheckpointStore.read_head` can skip it:
deciding that a phase is current needs its input digest and the output's
digest (the next phase's digest covers it), not the output. A passing phase-1
checkpoint is also indexed by its input digest under ``<root>/.by-digest/``
with the agent id and package identifier, so a skill is matched with its
checkpoints, and two skills sharing a package are found, without reading
every agent's files.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from builder.pipeline.contract import CheckResult
from builder.pipeline.errors import PipelineError
from builder.pipeline.serial import dump_yaml, from_plain, load_yaml, to_plain
from builder.pipeline.stamps import Written
from mindrian.atomic import atomic_write_bytes, atomic_write_text

__all__ = [
    "Checkpoint",
    "CheckpointStore",
    "Identity",
    "Saved",
    "output_digest",
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
    "output_digest",
    "passed",
    "checks",
    "warnings",
    "output",
)
#: The phase whose checkpoints are indexed by input digest.
_FIRST = "skill_analysis"
#: Folder of the phase-1 digest index (a name no agent id can take: ids start alphanumeric).
_INDEX = ".by-digest"


def _tail(plain: Any) -> str:
    """The ``output:`` part of a checkpoint's text (a block mapping's keys render one by one).

    A phase's output is digested and then written: the last text is kept for the
    same object (held here, so its id cannot be reused), which halves the YAML work.
    """
    if _last_tail and _last_tail[0][0] is plain:
        return _last_tail[0][1]
    text = _output_text(plain)
    _last_tail[:] = [(plain, text)]
    return text


#: The last (output, text) pair :func:`_tail` rendered; outputs are never changed once made.
_last_tail: list[tuple[Any, str]] = []


def _output_text(plain: Any) -> str:
    """``dump_yaml({"output": plain}, fast=True)``, made of the texts of its entries.

    Phases 2-4 each store the whole AgentSpec, one or two entries changed from the phase
    before, and phase 5's queries are the same for every skill: each entry ``key: value``
    of a mapping output is rendered once per value (the texts kept by ``(key, repr(value))``,
    which tells ``True`` from ``1`` and ``1.0`` where ``==`` does not) and the entries the
    output has no text for yet are rendered together. Their text is split where its lines
    start at column 2 with neither a space nor ``-`` (an entry's value is written further
    right, or at column 2 as an item of an indentless sequence, ``- ``); any doubt (a key
    that is not a plain name, an anchor, a literal block keeping its final line breaks, ``|+``,
    after which libyaml ends the document with ``...``) renders the whole output.
    ``plain`` must not hold one list or mapping twice (what :func:`to_plain` makes never
    does), or the whole text would have anchors where the entries have none.
    """
    if not isinstance(plain, dict) or not plain or not all(_NAME.match(k) for k in plain):
        return dump_yaml({"output": plain}, fast=True)
    keys = [(k, repr(v)) for k, v in plain.items()]
    texts = {key: _ENTRY_TEXTS.get(key) for key in keys}
    missing = [key for key, text in texts.items() if text is None]
    if missing:
        parts = _entries(dump_yaml({"output": {k: plain[k] for k, _ in missing}}, fast=True))
        if len(parts) != len(missing) or not all(
            part.startswith(f"  {key}:") for (key, _), part in zip(missing, parts, strict=True)
        ):
            return dump_yaml({"output": plain}, fast=True)
        if len(_ENTRY_TEXTS) + len(missing) > _MAX_ENTRY_TEXTS:
            _ENTRY_TEXTS.clear()
        for key, part in zip(missing, parts, strict=True):
            texts[key] = _ENTRY_TEXTS[key] = part
    text = "output:\n" + "".join(texts[key] or "" for key in keys)
    if "|+\n" in text:
        # A literal block keeping its final line breaks makes libyaml end the document with
        # "..." (however many entries follow it): only the whole dump says where.
        return dump_yaml({"output": plain}, fast=True)
    return text


#: The keys whose entries are rendered alone: names, which YAML writes plain.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: Where an entry of the ``output`` mapping starts in its text (see :func:`_output_text`).
_ENTRY_START = re.compile(r"^  (?=[^ \n-])", re.MULTILINE)
#: Texts of output entries by ``(key, repr(value))``; emptied when it would pass
#: :data:`_MAX_ENTRY_TEXTS` (a worker renders a few dozen entries per skill).
_ENTRY_TEXTS: dict[tuple[str, str], str] = {}
_MAX_ENTRY_TEXTS = 2048


def _entries(text: str) -> list[str]:
    """The entries of ``output:`` in ``text`` (``output:`` then its entries); none when an
    entry has an anchor or an alias (a list or mapping seen twice), whose text belongs to the
    whole."""
    body = text.removeprefix("output:\n")
    if body == text or "&id" in body or "*id" in body or body.endswith("\n...\n"):
        return []  # an anchor, an alias, or the end of a document after a "|+" block
    starts = [match.start() for match in _ENTRY_START.finditer(body)]
    if not starts or starts[0] != 0:
        return []
    return [body[a:b] for a, b in zip(starts, [*starts[1:], len(body)], strict=True)]


def _text_digest(tail: str) -> str:
    return "sha256:" + hashlib.sha256(tail.encode("utf-8")).hexdigest()


def output_digest(plain: Any) -> str:
    """``sha256:`` of the text a phase output takes in its checkpoint.

    Hashing the text rather than the data lets a reader check that a stored
    output is intact without parsing it.
    """
    return _text_digest(_tail(plain))


@dataclass(frozen=True)
class Identity:
    """What the phase-1 index records for a passing skill analysis."""

    agent_id: str
    """The agent id (its checkpoint folder)."""
    identifier: str | None
    """The package identifier, when the output names one."""


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
    """The phase output as plain data (None when only the head was read)."""
    output_digest: str = ""
    """:func:`output_digest` of ``output``; computed from it when not given."""

    def __post_init__(self) -> None:
        if not self.output_digest and self.output is not None:
            object.__setattr__(self, "output_digest", output_digest(self.output))


def valid_agent_id(agent_id: str) -> bool:
    """Whether ``agent_id`` can safely name a checkpoint folder."""
    return bool(_AGENT_ID.match(agent_id)) and ".." not in agent_id


def render_checkpoint(checkpoint: Checkpoint) -> str:
    """The YAML text of a checkpoint (deterministic)."""
    head = _plain(checkpoint)
    del head["output"]
    # A head whose last text keeps its final line breaks ("|+") ends its document with "...",
    # and the output after it would be a second document: the mark goes, the output follows.
    text = dump_yaml(head, fast=True)
    if text.endswith("\n...\n"):
        text = text[: -len("...\n")]
    return text + _tail(checkpoint.output)


def _plain(checkpoint: Checkpoint) -> dict[str, Any]:
    return {
        "phase": checkpoint.phase,
        "number": checkpoint.number,
        "builder_version": checkpoint.builder_version,
        "input_digest": checkpoint.input_digest,
        "output_digest": checkpoint.output_digest,
        "passed": checkpoint.passed,
        "checks": [to_plain(c) for c in checkpoint.checks],
        "warnings": list(checkpoint.warnings),
        "output": checkpoint.output,
    }


def parse_checkpoint(text: str, where: str, *, head: bool = False) -> Checkpoint:
    """Read checkpoint YAML; ``PipelineError`` (P005) naming ``where`` when it is damaged.

    ``head`` parses everything but the output (which stays None): the output is
    the last key and starts at column 0, where no text of an earlier value can.
    Either way the output's text must match ``output_digest``.
    """
    before, marker, after = text.partition("\noutput:")
    keys = _KEYS[:-1] if head else _KEYS
    try:
        data = load_yaml(before + "\n" if head else text)
        if not isinstance(data, dict) or tuple(data) != keys:
            raise ValueError(f"expected the keys {', '.join(keys)}")
        checkpoint = Checkpoint(
            phase=from_plain(str, data["phase"]),
            number=from_plain(int, data["number"]),
            builder_version=from_plain(str, data["builder_version"]),
            input_digest=from_plain(str, data["input_digest"]),
            passed=from_plain(bool, data["passed"]),
            checks=from_plain(tuple[CheckResult, ...], data["checks"]),
            warnings=from_plain(tuple[str, ...], data["warnings"]),
            output=None if head else data["output"],
            output_digest=from_plain(str, data["output_digest"]),
        )
        if _text_digest(marker.lstrip("\n") + after) != checkpoint.output_digest:
            raise ValueError("its output does not match its output_digest")
        return checkpoint
    except (yaml.YAMLError, TypeError, ValueError, KeyError) as exc:
        raise PipelineError(f"checkpoint {where} is damaged: {exc}", code="P005") from None


@dataclass(frozen=True)
class Saved:
    """What :meth:`CheckpointStore.write` did."""

    changed: bool
    """The file's bytes changed; False: it held them already, and nothing was written."""
    written: Written | None
    """The file as written (named relative to the agent's folder); None when nothing was, or
    another writer replaced it before its stat could be taken."""


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

    def write(self, agent_id: str, checkpoint: Checkpoint) -> Saved:
        """Store a checkpoint atomically, unless the file already holds its bytes."""
        path = self.path(agent_id, checkpoint.number, checkpoint.phase)
        data = render_checkpoint(checkpoint).encode("utf-8")
        if checkpoint.number == 1 and checkpoint.passed:
            self._index(agent_id, checkpoint)
        if path.is_file() and path.read_bytes() == data:
            return Saved(changed=False, written=None)
        after = atomic_write_bytes(path, data, durable=False)
        return Saved(True, None if after is None else Written.of(path.name, data, after))

    def _index(self, agent_id: str, checkpoint: Checkpoint) -> None:
        output = checkpoint.output if isinstance(checkpoint.output, dict) else {}
        identifier = output.get("identifier")
        entry = {
            "agent_id": agent_id,
            "identifier": identifier if isinstance(identifier, str) else None,
        }
        path = self._index_path(checkpoint.input_digest)
        text = json.dumps(entry, sort_keys=True) + "\n"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            atomic_write_text(path, text, durable=False)

    def _index_path(self, input_digest: str) -> Path:
        return self.root / _INDEX / (input_digest.removeprefix("sha256:") + ".json")

    def read(self, agent_id: str, number: int, phase: str) -> Checkpoint | None:
        """The stored checkpoint, None when there is none (``PipelineError`` when damaged)."""
        return self._read(agent_id, number, phase, head=False)

    def read_head(self, agent_id: str, number: int, phase: str) -> Checkpoint | None:
        """The stored checkpoint without its output (None), as :meth:`read` otherwise."""
        return self._read(agent_id, number, phase, head=True)

    def _read(self, agent_id: str, number: int, phase: str, *, head: bool) -> Checkpoint | None:
        path = self.path(agent_id, number, phase)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise PipelineError(f"checkpoint {path} cannot be read: {exc}", code="P005") from None
        return parse_checkpoint(text, str(path), head=head)

    def identity(self, input_digest: str) -> Identity | None:
        """The skill whose passing phase-1 checkpoint has this input digest, from the index.

        The index entry is trusted only when that checkpoint still exists,
        passed and carries the digest (an entry outlives a skill's edits).
        """
        try:
            entry = json.loads(self._index_path(input_digest).read_text(encoding="utf-8"))
            agent_id, identifier = entry["agent_id"], entry["identifier"]
            head = self.read_head(agent_id, 1, _FIRST)
        except (OSError, ValueError, KeyError, TypeError, PipelineError):
            return None
        if head is None or not head.passed or head.input_digest != input_digest:
            return None
        return Identity(agent_id, identifier)

    def find_agent(self, number: int, phase: str, input_digest: str) -> str | None:
        """The agent whose passing phase-1 checkpoint has this input digest (see :meth:`identity`).

        Used for phase 1, whose agent id is only known once it has run; other
        phases are always looked up by agent id.
        """
        if (number, phase) != (1, _FIRST):
            raise ValueError(f"only phase 1 ({_FIRST}) is indexed by digest, not {phase}")
        found = self.identity(input_digest)
        return None if found is None else found.agent_id

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
