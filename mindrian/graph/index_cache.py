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
"""

from __future__ import annotations

import functools
import hashlib
import io
import pickle
import sys
from pathlib import Path
from typing import Any

import mindrian
from mindrian.atomic import atomic_write_bytes
from mindrian.cache import cache_dir, cache_path
from mindrian.routing import rank, score, terms, text
from mindrian.routing.score import RoutingSnapshot

__all__ = ["FORMAT", "index_cache_file", "load_snapshot", "store_snapshot"]

#: Bumped when the file's layout changes.
FORMAT = 1
_NAMESPACE = "routing-index"
#: A kept file: this, the SHA-256 of the rest, then the pickled data. A torn, truncated or
#: altered file fails the digest before anything is unpickled.
_MAGIC = b"mindrian routing index\n"
_BODY = len(_MAGIC) + hashlib.sha256().digest_size


def index_cache_file(database: Path) -> Path | None:
    """Where the index of the registry file ``database`` is kept; None when caching is off."""
    where = str(database.resolve()).encode("utf-8")
    return cache_path(cache_dir(_NAMESPACE), where, suffix=".pickle")


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


def store_snapshot(path: Path | None, revision: tuple[int, str], snapshot: RoutingSnapshot) -> None:
    """Keep ``snapshot``, built at the registry's ``revision``; a cache that cannot be written
    only costs time, so a refusal of the file system is dropped."""
    if path is None:
        return
    data = {**_stamp(revision), "snapshot": snapshot.to_plain()}
    body = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        atomic_write_bytes(path, _MAGIC + hashlib.sha256(body).digest() + body)
    except OSError:
        pass


def load_snapshot(
    path: Path | None, revision: tuple[int, str], current: tuple[int, str]
) -> RoutingSnapshot | None:
    """The snapshot kept at ``path`` if it was built at the registry's ``revision`` by this
    code, as of the caller's ``current`` revision; None when absent, stale or damaged."""
    if path is None:
        return None
    try:
        kept = path.read_bytes()
    except OSError:
        return None
    digest, body = kept[len(_MAGIC) : _BODY], kept[_BODY:]
    if not kept.startswith(_MAGIC) or hashlib.sha256(body).digest() != digest:
        return None
    wanted = _stamp(revision)
    try:
        data = _PlainUnpickler(io.BytesIO(body)).load()
        if not isinstance(data, dict) or {k: data.get(k) for k in wanted} != wanted:
            return None
        return RoutingSnapshot.from_plain(current, data["snapshot"])
    except (EOFError, pickle.UnpicklingError, AttributeError, KeyError, TypeError, ValueError):
        return None


class _PlainUnpickler(pickle.Unpickler):
    """Reads dicts, lists, tuples, strings and numbers, which need no class lookup; any
    other object in the file ends the load."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name}: the index cache holds plain data only")
