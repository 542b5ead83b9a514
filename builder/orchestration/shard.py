"""``--shard I/N``: split the skills of ``build --all`` and ``check`` across CI machines.

A skill belongs to shard ``1 + h mod N``, where ``h`` is the first eight bytes
of the SHA-256 of its path relative to the project root. The split depends on
the path alone, so it is the same on every machine, and adding a skill never
moves another one to a different shard (CI caches stay warm).

``check`` compares only what a shard owns. A top-level entry of the output
folder (a package) is owned through the ``source_path`` its ``spec.yaml``
names, the committed one first, else the regenerated one, else its own name;
an entry of ``registry.yaml`` is owned like the package of the same agent id,
else by the id itself. Every shard applies the same rule, so the union of the
shards' drift is the drift of the whole check.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import yaml

from builder.pipeline.errors import UsageError

__all__ = ["REGISTRY_FILE", "Shard", "owned_tree", "shard_of", "spec_sources"]

#: The output folder's registry export, split entry by entry.
REGISTRY_FILE = "registry.yaml"

T = TypeVar("T")


def shard_of(key: str, count: int) -> int:
    """The 1-based shard of ``key`` among ``count``."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


@dataclass(frozen=True)
class Shard:
    """One part of a run split ``count`` ways."""

    index: int
    """1-based number of this part."""
    count: int
    """How many parts the run is split into."""

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``I/N`` with 1 <= I <= N; :class:`UsageError` (U017) otherwise."""
        left, slash, right = text.partition("/")
        if slash and left.isdigit() and right.isdigit():
            index, count = int(left), int(right)
            if 1 <= index <= count:
                return cls(index, count)
        raise UsageError(
            f"--shard takes I/N with 1 <= I <= N (e.g. 2/4), not {text!r}", code="U017"
        )

    @property
    def whole(self) -> bool:
        """The run is not split."""
        return self.count == 1

    def owns(self, key: str) -> bool:
        """Whether the skill (or output entry) keyed ``key`` belongs to this shard."""
        return self.whole or shard_of(key, self.count) == self.index

    def select(self, items: Sequence[T], key: str | None = None) -> list[T]:
        """The items of this shard, in their order; ``key`` names the attribute to hash."""
        return [i for i in items if self.owns(str(getattr(i, key)) if key else str(i))]


def spec_sources(tree: Mapping[str, bytes]) -> dict[str, tuple[str, str]]:
    """Top-level folder -> (agent id, source path) from each package's ``spec.yaml`` in ``tree``."""
    found = {}
    for name, data in tree.items():
        folder, _, rest = name.partition("/")
        if rest != "spec.yaml":
            continue
        try:
            spec = yaml.safe_load(data.decode("utf-8"))
        except (UnicodeDecodeError, yaml.YAMLError):
            continue
        if isinstance(spec, dict) and isinstance(spec.get("source_path"), str):
            found[folder] = (str(spec.get("id", "")), spec["source_path"])
    return found


def owned_tree(
    tree: Mapping[str, bytes], shard: Shard, sources: Mapping[str, tuple[str, str]]
) -> dict[str, bytes]:
    """The files of ``tree`` this shard owns; ``registry.yaml`` cut down to the owned entries.

    ``sources`` maps a top-level folder to its package's agent id and source
    path (:func:`spec_sources` of the committed tree over the regenerated one).
    """
    if shard.whole:
        return dict(tree)
    by_id = {agent_id: path for agent_id, path in sources.values() if agent_id}
    owned = {}
    for name, data in tree.items():
        folder = name.partition("/")[0]
        if name == REGISTRY_FILE:
            owned[name] = _owned_registry(data, shard, by_id)
        elif shard.owns(sources.get(folder, ("", folder))[1]):
            owned[name] = data
    return owned


def _owned_registry(data: bytes, shard: Shard, by_id: Mapping[str, str]) -> bytes:
    """``registry.yaml`` with only the frameworks this shard owns (kept whole if unparsable)."""
    try:
        document = yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError):
        return data
    if not isinstance(document, dict) or not isinstance(document.get("frameworks"), list):
        return data
    kept = [
        entry
        for entry in document["frameworks"]
        if isinstance(entry, dict)
        and shard.owns(by_id.get(str(entry.get("id")), str(entry.get("id"))))
    ]
    text = yaml.safe_dump(
        {**document, "frameworks": kept},
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=4096,
    )
    return text.encode("utf-8")
