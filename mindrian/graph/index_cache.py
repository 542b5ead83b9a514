"""The text index of an embedded registry file, kept between processes.

A one-shot ``mindrian select "a sentence"`` (or an MCP server started per session) would
otherwise tokenise every framework of the registry before ranking: about 0.6 s of CPU at
10,000 frameworks without bodies, more with them. The index is a pure function of the
registered frameworks and of the ranking code, so a read-only handle of a registry file
(:class:`mindrian.graph.EmbeddedRegistry`) keeps it in one file per registry file
(``<cache>/routing-index/<digest of the database's path>.pickle``, :mod:`mindrian.cache`),
stamped with what it was built from:

* the registry's revision, ``(registered frameworks, latest updated_at)`` as the registry
  reads it in the same transaction as the ranking (:data:`mindrian.graph.queries.
  ROUTING_REVISION`). Every registration stamps its frameworks with the time of its
  transaction and an unregistration lowers the count, so (the clock running forward) no two
  states of one file's history share a revision, and a rebuilt file has new times;
* the mindrian and Python versions and a digest of the ranking modules' source.

A file whose stamp differs, that fails its digest or that cannot be read back as the plain
data it should hold is ignored and replaced. Writes go through
:func:`mindrian.atomic.atomic_write_bytes`, so concurrent readers see a whole old or a whole
new file, and of two writers the last one wins. The file holds only dicts, lists, strings and
numbers, and is read with an unpickler that refuses every class: a planted file can fail to
load, not run code.

A file names the registry file it indexes in its head, so a write can clear up after
registries that are gone: each new file is followed by one pass over the folder that deletes
the files whose registry no longer exists (or whose head is not this format's), and the
temporaries of writers that died before renaming theirs (:data:`ABANDONED_SECONDS`). The
folder then holds one file per registry file that exists, however many come and go (every
test's temporary registry, every ``--out`` folder deleted). Kept files are only ever replaced
whole by a rename, so deleting one never cuts into a write; a deletion racing a registry
recreated at the same path costs that registry one rebuild of its index, nothing else.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import pickle
import re
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mindrian
from mindrian.atomic import atomic_write_bytes
from mindrian.cache import cache_dir, cache_path
from mindrian.routing import rank, score, terms, text
from mindrian.routing.score import RoutingSnapshot

__all__ = [
    "ABANDONED_SECONDS",
    "FORMAT",
    "KeptIndex",
    "index_cache_file",
    "load_snapshot",
    "prune_index_cache",
    "store_snapshot",
]

#: Bumped when the file's layout changes.
FORMAT = 2
#: A temporary untouched for this long belongs to a writer that died before its rename (a
#: write takes well under a second). Should its writer only have been paused, its rename
#: fails and :func:`store_snapshot` drops the error: the index is rebuilt next time.
ABANDONED_SECONDS = 3600.0
_NAMESPACE = "routing-index"
_SUFFIX = ".pickle"
#: A kept file: this, the SHA-256 of the rest, the registry file's length (4 bytes, big
#: endian) and path, then the pickled data. A torn, truncated or altered file fails the
#: digest before anything is unpickled; the registry's path is readable without the digest.
_MAGIC = b"mindrian routing index 2\n"
_DIGEST = len(_MAGIC) + hashlib.sha256().digest_size
_OWNER_LENGTH = struct.Struct(">I")
_OWNER = _DIGEST + _OWNER_LENGTH.size
#: Longer than any path a file system accepts: a head claiming more is not this format's.
_MAX_OWNER = 1 << 16
#: Kept files and atomic_write_bytes's temporaries of them; other names are left alone.
_KEPT_NAME = re.compile(r"[0-9a-f]{64}" + re.escape(_SUFFIX))
#: The quick index of the same registry file (mindrian.routing.quick): pruned with the kept one.
_QUICK_NAME = re.compile(r"([0-9a-f]{64})\.quick\.sqlite")
_TEMPORARY_NAME = re.compile(r"\.[0-9a-f]{64}\..*\.tmp")


@dataclass(frozen=True)
class KeptIndex:
    """Where the text index of one registry file is kept."""

    registry: bytes
    """The registry file's resolved path (file system encoding), recorded in the kept file."""
    file: Path
    """The kept file, ``<cache>/routing-index/<SHA-256 of registry>.pickle``."""


def index_cache_file(database: Path) -> KeptIndex | None:
    """Where the index of the registry file ``database`` is kept; None when caching is off."""
    where = os.fsencode(database.resolve())
    file = cache_path(cache_dir(_NAMESPACE), where, suffix=_SUFFIX)
    return None if file is None else KeptIndex(where, file)


@functools.cache
def _code_stamp() -> str:
    """The mindrian version, the Python version and a digest of the code that builds and
    reads the index."""
    digest = hashlib.sha256()
    for module in (rank, score, terms, text):
        source = Path(module.__file__ or "").read_bytes()
        digest.update(b"%d:" % len(source) + source)
    # The interpreter too: tokens depend on its Unicode tables (NFKC, character classes).
    return f"{mindrian.__version__}:{sys.version}:{digest.hexdigest()}"


def _stamp(revision: tuple[int, str]) -> dict[str, Any]:
    return {"format": FORMAT, "code": _code_stamp(), "revision": [revision[0], revision[1]]}


def store_snapshot(
    kept: KeptIndex | None, revision: tuple[int, str], snapshot: RoutingSnapshot
) -> None:
    """Keep ``snapshot``, built at the registry's ``revision``, then prune the folder; a cache
    that cannot be written only costs time, so a refusal of the file system is dropped."""
    if kept is None:
        return
    data = {**_stamp(revision), "snapshot": snapshot.to_plain()}
    rest = (
        _OWNER_LENGTH.pack(len(kept.registry))
        + kept.registry
        + pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    )
    try:
        atomic_write_bytes(kept.file, _MAGIC + hashlib.sha256(rest).digest() + rest)
    except OSError:
        return
    prune_index_cache(kept.file.parent, time.time())


def load_snapshot(
    kept: KeptIndex | None, revision: tuple[int, str], current: tuple[int, str]
) -> RoutingSnapshot | None:
    """The snapshot kept for ``kept.registry`` if it was built at the registry's ``revision``
    by this code, as of the caller's ``current`` revision; None when absent, stale or damaged."""
    if kept is None:
        return None
    try:
        data = kept.file.read_bytes()
    except OSError:
        return None
    digest, rest = data[len(_MAGIC) : _DIGEST], data[_DIGEST:]
    if not data.startswith(_MAGIC) or hashlib.sha256(rest).digest() != digest:
        return None
    if _owner(data) != kept.registry:
        return None
    body = data[_OWNER + len(kept.registry) :]
    wanted = _stamp(revision)
    try:
        plain = _PlainUnpickler(io.BytesIO(body)).load()
        if not isinstance(plain, dict) or {k: plain.get(k) for k in wanted} != wanted:
            return None
        return RoutingSnapshot.from_plain(current, plain["snapshot"])
    except (EOFError, pickle.UnpicklingError, AttributeError, KeyError, TypeError, ValueError):
        return None


def prune_index_cache(folder: Path, now: float) -> None:
    """Delete from ``folder`` the kept files whose registry file no longer exists or whose
    head is not this format's, the quick indexes (:mod:`mindrian.routing.quick`) of kept files
    gone, and the temporaries untouched for :data:`ABANDONED_SECONDS`
    before ``now``; files of other names are left alone, and a file that cannot be read or
    deleted is kept (another pass may manage)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names:
        path = folder / name
        try:
            quick = _QUICK_NAME.fullmatch(name)
            if _KEPT_NAME.fullmatch(name):
                stale = _orphaned(path)
            elif quick:
                stale = not (folder / (quick.group(1) + _SUFFIX)).exists()
            elif _TEMPORARY_NAME.fullmatch(name):
                stale = now - path.stat().st_mtime > ABANDONED_SECONDS
            else:
                stale = False
            if stale:
                path.unlink(missing_ok=True)
        except OSError:
            continue


def _orphaned(path: Path) -> bool:
    """True when the kept file ``path`` names no registry file that exists (its head alone is
    read: the files are as large as the index). Raises OSError when it cannot be read."""
    with path.open("rb") as stream:
        head = stream.read(_OWNER)
        owner = _owner(head + stream.read(_owner_length(head)))
    return owner is None or not os.path.exists(owner)


def _owner_length(head: bytes) -> int:
    """The length of the registry path a kept file's ``head`` announces (0 when it is not a
    head of this format, or announces more than :data:`_MAX_OWNER`)."""
    if len(head) < _OWNER or not head.startswith(_MAGIC):
        return 0
    (length,) = _OWNER_LENGTH.unpack_from(head, _DIGEST)
    return int(length) if length <= _MAX_OWNER else 0


def _owner(data: bytes) -> bytes | None:
    """The registry path recorded in the start ``data`` of a kept file; None when it has none."""
    length = _owner_length(data[:_OWNER])
    owner = data[_OWNER : _OWNER + length]
    return owner if length and len(owner) == length else None


class _PlainUnpickler(pickle.Unpickler):
    """Reads dicts, lists, tuples, strings and numbers, which need no class lookup; any
    other object in the file ends the load."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name}: the index cache holds plain data only")
