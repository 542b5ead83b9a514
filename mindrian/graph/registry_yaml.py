"""``generated/registry.yaml``: the committed, deterministic export of the registry.

The embedded database is a build artefact; this file is the reviewed source of truth
it can be rebuilt from. The one field it leaves out, each framework's routing body, is
recomputed on loading from the ``spec.yaml`` of the framework's package beside it
(:func:`with_routing_bodies`), so a registry rebuilt on another machine ranks as the one
the build registered into.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import warnings
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from mindrian.atomic import atomic_write_text
from mindrian.errors import MindrianError, MindrianWarning
from mindrian.graph.base import FrameworkRecord, Registry
from mindrian.graph.embedded import EmbeddedRegistry
from mindrian.routing.text import body_prose
from mindrian.yaml_emit import SafeDumper, libyaml_writes_alike

__all__ = [
    "FORMAT_VERSION",
    "RegistryLayout",
    "RegistryYamlError",
    "RoutingBodyWarning",
    "dump_registry_yaml",
    "laid_out_registry_yaml",
    "load_registry_yaml",
    "parse_registry_yaml",
    "registry_from_yaml",
    "splice_registry_yaml",
    "with_routing_bodies",
    "write_registry_yaml",
    "written_ids",
]

#: Bumped when the layout of registry.yaml changes.
FORMAT_VERSION = 1


def dump_registry_yaml(source: Registry | Iterable[FrameworkRecord]) -> str:
    """YAML text of every registered framework, sorted by id; same graph, same bytes.

    A build of N skills writes this file N times, each time with one entry
    changed: every entry's text is kept (:func:`_entry_text`), so writing costs
    only the changed entry, and the records are remembered under the text
    (:func:`parse_registry_yaml` of it then reads nothing).
    """
    return laid_out_registry_yaml(source)[0]


@dataclass(frozen=True)
class RegistryLayout:
    """Where each framework's entry lies in a registry.yaml text this module wrote: what
    :func:`splice_registry_yaml` needs to change entries without reading the others."""

    ids: tuple[str, ...]
    """The frameworks' ids in the order of their entries (sorted)."""
    sizes: tuple[int, ...]
    """The length in characters of each one's entry, in the same order."""


def laid_out_registry_yaml(
    source: Registry | Iterable[FrameworkRecord],
) -> tuple[str, RegistryLayout]:
    """:func:`dump_registry_yaml` and the layout of the text it gives."""
    records = tuple(sorted(source.export() if isinstance(source, Registry) else source, key=_id))
    entries = tuple(_record_text(r) for r in records)
    text = _join(entries)
    # Remembered as the text holds them: the body's prose is never written to it.
    _remember(text, tuple(_without_body(r) for r in records))
    return text, RegistryLayout(tuple(r.id for r in records), tuple(map(len, entries)))


def splice_registry_yaml(
    text: str,
    layout: RegistryLayout,
    put: Iterable[FrameworkRecord] = (),
    drop: Collection[str] = (),
) -> tuple[str, RegistryLayout]:
    """What :func:`laid_out_registry_yaml` gives for the frameworks of ``text`` with ``put``
    added (or replacing the entry of the same id), then ``drop`` removed, byte for byte, without
    reading or rendering any other entry: a one-skill change costs one entry, not the registry.

    ``text`` must be the very text ``layout`` was made for (callers compare digests); a
    layout that does not fit the text's length and head raises ValueError.
    """
    entries = dict(zip(layout.ids, _cut(text, layout), strict=True))
    for record in put:
        entries[record.id] = _record_text(record)
    for framework_id in drop:
        entries.pop(framework_id, None)
    ids = tuple(sorted(entries))
    kept = tuple(entries[i] for i in ids)
    spliced = _join(kept)
    _remember_ids(_sha256(spliced), ids)
    return spliced, RegistryLayout(ids, tuple(map(len, kept)))


def _cut(text: str, layout: RegistryLayout) -> list[str]:
    """The entries' texts of ``text``, cut where ``layout`` says they lie."""
    if not layout.ids:
        if text != _join(()):
            raise ValueError("the layout lists no framework but the text is not an empty registry")
        return []
    ends = list(itertools.accumulate(layout.sizes, initial=len(_HEAD)))
    if len(layout.sizes) != len(layout.ids) or ends[-1] != len(text) or not text.startswith(_HEAD):
        raise ValueError("the layout does not describe this registry.yaml text")
    return [text[start:end] for start, end in itertools.pairwise(ends)]


def _join(entries: tuple[str, ...]) -> str:
    """The whole document from its entries' texts (sorted by id)."""
    if not entries:
        return _dump({"format": FORMAT_VERSION, "frameworks": []})
    return _HEAD + "".join(entries)


#: How registry.yaml is written; an entry alone, as a one-item list, gets the same lines.
_STYLE: dict[str, Any] = {
    "sort_keys": False,
    "allow_unicode": True,
    "default_flow_style": False,
    "width": 4096,
}


def _id(record: FrameworkRecord) -> str:
    return record.id


def _key(record: FrameworkRecord) -> str:
    return json.dumps(record.to_plain(), sort_keys=False, ensure_ascii=False)


@functools.lru_cache(maxsize=65536)
def _without_body(record: FrameworkRecord) -> FrameworkRecord:
    return replace(record, body="")


@functools.lru_cache(maxsize=65536)
def _record_text(record: FrameworkRecord) -> str:
    """:func:`_entry_text` of a record: a batch passes the same record objects again (the
    previous export with one entry replaced), which this finds without serialising them."""
    return _entry_text(_key(record))


@functools.lru_cache(maxsize=65536)
def _entry_text(plain_json: str) -> str:
    """The lines of one framework under ``frameworks:`` (keyed by its JSON, which keeps order)."""
    return _dump([json.loads(plain_json)])


def _dump(data: object) -> str:
    # libyaml's emitter when it writes these bytes too (an entry nearly always): several times
    # faster, and a batch renders every entry it registers.
    alike = libyaml_writes_alike(data, _never_literal, _STYLE["width"])
    return str(yaml.dump(data, Dumper=_FastDumper if alike else _Dumper, **_STYLE))


def _never_literal(value: str) -> bool:
    """No string of registry.yaml is asked to be a literal block."""
    return False


class _Dumper(SafeDumper):
    """PyYAML's safe dumper, except that strings holding a line break other than LF are
    double-quoted: the other styles fold a NEL, CR, U+2028 or U+2029 into a space or a LF, and
    registry.yaml must read back as exactly what the registry holds."""


_OTHER_BREAKS = frozenset("\r\x85\u2028\u2029")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if not _OTHER_BREAKS.isdisjoint(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


class _FastDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """:class:`_Dumper`'s representation through libyaml's emitter, when installed."""


_FastDumper.add_representer(str, _represent_str)

#: The lines before the first entry of a registry that lists any framework.
_HEAD = _dump({"format": FORMAT_VERSION}) + "frameworks:\n"


#: Records by the sha256 of a text this process wrote or read, newest last (a few kept).
_KNOWN: dict[str, tuple[FrameworkRecord, ...]] = {}


def _remember(text: str, records: tuple[FrameworkRecord, ...]) -> None:
    digest = _sha256(text)
    _KNOWN[digest] = records
    while len(_KNOWN) > 4:
        del _KNOWN[next(iter(_KNOWN))]
    _remember_ids(digest, tuple(r.id for r in records))


#: Framework ids by the sha256 of a text this process wrote (laid out or spliced) or read,
#: newest last (a few kept).
_IDS: dict[str, tuple[str, ...]] = {}


def _remember_ids(digest: str, ids: tuple[str, ...]) -> None:
    _IDS[digest] = ids
    while len(_IDS) > 4:
        del _IDS[next(iter(_IDS))]


def written_ids(sha256: str) -> tuple[str, ...] | None:
    """The framework ids of a registry.yaml text this process wrote or read, by the sha256 (hex)
    of its UTF-8 bytes; None for any other text. A spliced text's records are not all known
    here, but its ids are: what a whole-project build asks of the file it has just written."""
    return _IDS.get(sha256)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RegistryYamlError(MindrianError, ValueError):
    """registry.yaml that is not a registry: not UTF-8, not YAML, or not of its shape.

    ``line`` and ``column`` (1-based, 0 when unknown) place the problem in the file, so the
    command line can print it as ``PATH:LINE:COL: error[CODE]: message``.
    """

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(f"line {line}, column {column}: {message}" if line else message)
        self.message = message
        """What is wrong, without the place."""
        self.line = line
        """1-based line of the problem, 0 when unknown."""
        self.column = column
        """1-based column of the problem, 0 when unknown."""


def parse_registry_yaml(text: str) -> tuple[FrameworkRecord, ...]:
    """Framework records from registry.yaml text; :class:`RegistryYamlError`, placed in the
    text, when it is not a registry."""
    known = _KNOWN.get(_sha256(text))
    if known is not None:
        return known
    try:
        # libyaml's parser when installed: the same data as PyYAML's, ten times faster.
        document = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as error:
        raise _not_yaml(error, text) from None
    records, wrong = _records(document)
    if wrong is not None:
        where, problem = wrong
        raise RegistryYamlError(problem, *_place(text, where))
    _remember(text, records)
    return records


def load_registry_yaml(path: str | Path) -> tuple[FrameworkRecord, ...]:
    """Framework records from a registry.yaml file (:func:`parse_registry_yaml`)."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - data.rfind(b"\n", 0, error.start)
        raise RegistryYamlError(
            f"not UTF-8 text: byte 0x{data[error.start]:02x} cannot be decoded", line, column
        ) from None
    return parse_registry_yaml(text)


#: libyaml's safe loader when installed, else PyYAML's.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: A step into the parsed document: a mapping's key or a list's index.
_Step = str | int
#: Where in the document something is wrong, and what.
_Wrong = tuple[tuple[_Step, ...], str]

#: The keys of an entry whose value is a string, required then optional.
_NAMES = ("id", "name", "type")
_OPTIONAL_TEXTS = ("description", "version", "source_digest")
#: The keys whose value is a list of strings.
_TEXT_LISTS = ("triggers", "problem_types")
#: The keys whose value is a list of {name: string, value: number} mappings.
_PAIRS = {"chains_to": ("target", "weight"), "good_for": ("problem_type", "confidence")}


def _not_yaml(error: yaml.YAMLError, text: str) -> RegistryYamlError:
    """A YAML syntax error (or a character YAML refuses) as a placed RegistryYamlError."""
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        context = f"{error.context}: " if error.context else ""
        mark = error.problem_mark
        return RegistryYamlError(
            f"not YAML: {context}{error.problem}", mark.line + 1, mark.column + 1
        )
    if isinstance(error, yaml.reader.ReaderError):
        before = text[: error.position]
        line, column = before.count("\n") + 1, error.position - before.rfind("\n")
        character = error.character
        shown = f"U+{ord(character):04X}" if isinstance(character, str) else repr(character)
        return RegistryYamlError(f"not YAML: character {shown} is not allowed", line, column)
    return RegistryYamlError(f"not YAML: {' '.join(str(error).split())}")


def _records(document: Any) -> tuple[tuple[FrameworkRecord, ...], _Wrong | None]:
    """The records of a parsed registry.yaml, or what is wrong with it and where."""
    wrong = _misshapen(document)
    if wrong is not None:
        return (), wrong
    records: list[FrameworkRecord] = []
    first: dict[str, int] = {}
    for index, entry in enumerate(document.get("frameworks") or ()):
        where: tuple[_Step, ...] = ("frameworks", index)
        try:
            record = FrameworkRecord.from_plain(entry)
        except (ValueError, TypeError) as error:  # the record's own checks (targets, weights)
            return (), (where, f"{_dotted(where)}: {' '.join(str(error).split())}")
        if record.id in first:
            listed = _dotted(("frameworks", first[record.id]))
            return (), ((*where, "id"), f"framework {record.id!r} is listed twice (first {listed})")
        first[record.id] = index
        records.append(record)
    return tuple(records), None


def _misshapen(document: Any) -> _Wrong | None:
    """Where and how a parsed registry.yaml is not a mapping of ``format`` and a list of
    ``frameworks`` entries each of the types :meth:`FrameworkRecord.to_plain` writes."""
    if not isinstance(document, dict):
        what = "empty (null)" if document is None else _kind(document)
        return (), f"the file is {what}, not a mapping of format: {FORMAT_VERSION} and frameworks"
    if "format" not in document:
        return (), f"the file has no format: {FORMAT_VERSION}"
    version = document["format"]
    if isinstance(version, bool) or not isinstance(version, int) or version != FORMAT_VERSION:
        return ("format",), f"format is {_kind(version)}, not {FORMAT_VERSION}"
    entries = document.get("frameworks")
    if entries is None:
        return None
    if not isinstance(entries, list):
        return ("frameworks",), f"frameworks is {_kind(entries)}, not a list"
    for index, entry in enumerate(entries):
        wrong = _misshapen_entry(entry, ("frameworks", index))
        if wrong is not None:
            return wrong
    return None


def _misshapen_entry(entry: Any, where: tuple[_Step, ...]) -> _Wrong | None:
    if not isinstance(entry, dict):
        return _expected(where, entry, "a mapping")
    for key in _NAMES:
        if key not in entry:
            return where, f"{_dotted(where)} has no {key}"
    checks: list[tuple[tuple[_Step, ...], Any, str]] = [
        ((*where, key), entry[key], "a string") for key in _NAMES
    ]
    checks += [
        ((*where, key), entry[key], "a string")
        for key in _OPTIONAL_TEXTS
        if entry.get(key) is not None
    ]
    for wrong in (_expected(at, value, want) for at, value, want in checks):
        if wrong is not None:
            return wrong
    for key in (*_TEXT_LISTS, *_PAIRS):
        if entry.get(key) is None:
            continue
        wrong = _misshapen_list((*where, key), entry[key], _PAIRS.get(key))
        if wrong is not None:
            return wrong
    return None


def _misshapen_list(
    where: tuple[_Step, ...], items: Any, pair: tuple[str, str] | None
) -> _Wrong | None:
    """A list of strings (``pair`` None) or of ``{pair[0]: string, pair[1]: number}``."""
    if not isinstance(items, list):
        return _expected(where, items, "a list")
    for index, item in enumerate(items):
        at = (*where, index)
        if pair is None:
            wrong = _expected(at, item, "a string")
        elif not isinstance(item, dict):
            wrong = at, f"{_dotted(at)} is {_kind(item)}, not a mapping of {pair[0]} and {pair[1]}"
        elif not {*pair} <= item.keys():
            wrong = at, f"{_dotted(at)} has no {' and no '.join(k for k in pair if k not in item)}"
        else:
            wrong = _expected((*at, pair[0]), item[pair[0]], "a string") or _expected(
                (*at, pair[1]), item[pair[1]], "a number"
            )
        if wrong is not None:
            return wrong
    return None


def _expected(where: tuple[_Step, ...], value: Any, want: str) -> _Wrong | None:
    """None when ``value`` is what ``want`` names, else where and what it is instead."""
    fits = {
        "a string": isinstance(value, str),
        "a number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "a mapping": isinstance(value, dict),
        "a list": isinstance(value, list),
    }[want]
    return None if fits else (where, f"{_dotted(where)} is {_kind(value)}, not {want}")


def _kind(value: Any) -> str:
    """What a parsed YAML value is, in words, with a short scalar shown."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({value[:40]!r})"
    if isinstance(value, (list, dict)):
        return "a list" if isinstance(value, list) else "a mapping"
    return f"a {type(value).__name__}"  # a date, a set or bytes from a YAML tag


def _dotted(where: tuple[_Step, ...]) -> str:
    """``frameworks[2].triggers[0]`` for the steps ``("frameworks", 2, "triggers", 0)``."""
    return "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in where).lstrip(".")


def _place(text: str, where: tuple[_Step, ...]) -> tuple[int, int]:
    """1-based line and column of the deepest node of ``where`` in ``text`` (only on an error:
    composing the text again costs a second parse)."""
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError:
        return 0, 0
    if node is None:
        return 0, 0
    for step in where:
        found = _child(node, step)
        if found is None:
            break
        node = found
    return node.start_mark.line + 1, node.start_mark.column + 1


def _child(node: yaml.Node, step: _Step) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode) and isinstance(step, str):
        return next((v for k, v in node.value if k.value == step), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
        child: yaml.Node = node.value[step]
        return child
    return None


def write_registry_yaml(source: Registry | Iterable[FrameworkRecord], path: str | Path) -> None:
    """Write registry.yaml atomically (temp file in the same folder, then os.replace)."""
    atomic_write_text(path, dump_registry_yaml(source))


def registry_from_yaml(
    yaml_path: str | Path, db_path: str | Path | None = None
) -> EmbeddedRegistry:
    """An embedded registry (in memory unless ``db_path``) holding what registry.yaml lists,
    with the routing bodies of the packages beside it (:func:`with_routing_bodies`)."""
    registry = EmbeddedRegistry(db_path)
    try:
        records = load_registry_yaml(yaml_path)
        registry.register_many(with_routing_bodies(records, yaml_path))
    except BaseException:
        registry.close()
        raise
    return registry


class RoutingBodyWarning(MindrianWarning):
    """Frameworks loaded from registry.yaml that rank without their body: no package of
    theirs beside it, or one whose spec.yaml no longer agrees with the registered record."""

    code = "W701"


#: The spec.yaml keys that registry.yaml also holds: a package whose values differ is not
#: the build that registry.yaml records, so its body would not be either.
_SHARED_KEYS = ("name", "type", "description", "version", "triggers", "problem_types")

#: How many frameworks a RoutingBodyWarning names before it only counts the rest.
_NAMED_IN_WARNING = 5


def with_routing_bodies(
    records: Iterable[FrameworkRecord], yaml_path: str | Path
) -> tuple[FrameworkRecord, ...]:
    """``records`` of the registry.yaml at ``yaml_path``, each with its routing body
    recomputed from its package's ``spec.yaml`` in the same folder.

    The body is :func:`~mindrian.routing.text.body_prose` of the spec's instruction
    blocks, what phase 5 stores at registration. A framework without a package there, or
    whose spec.yaml disagrees with its record (:data:`_SHARED_KEYS`), keeps no body, and one
    :class:`RoutingBodyWarning` names each such framework and why: its selection scores
    would differ from the registering machine's, which must not pass unnoticed.
    """
    packages = Path(yaml_path).parent
    specs, problems = _specs_by_id(packages)
    found: list[FrameworkRecord] = []
    for record in records:
        spec = specs.get(record.id)
        problem = _stale(record, spec[1]) if spec is not None else "no package beside it"
        if spec is not None and problem is None:
            found.append(replace(record, body=_spec_body(spec[1])))
            continue
        where = spec[0].as_posix() if spec is not None else None
        problems.append(f"{record.id}: {problem}" + (f" ({where})" if where else ""))
        found.append(replace(record, body=""))
    if problems:
        _warn(Path(yaml_path), problems)
    return tuple(found)


def _specs_by_id(packages: Path) -> tuple[dict[str, tuple[Path, Mapping[str, Any]]], list[str]]:
    """Each package's (spec.yaml path, contents) by framework id, and the unreadable ones."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    specs: dict[str, tuple[Path, Mapping[str, Any]]] = {}
    unreadable: list[str] = []
    for path in sorted(packages.glob("*/spec.yaml")):
        try:
            spec = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            unreadable.append(f"{path.as_posix()}: unreadable ({' '.join(str(error).split())})")
            continue
        if isinstance(spec, Mapping) and isinstance(spec.get("id"), str):
            specs[spec["id"]] = (path, spec)
    return specs, unreadable


def _stale(record: FrameworkRecord, spec: Mapping[str, Any]) -> str | None:
    plain = record.to_plain()
    differ = [key for key in _SHARED_KEYS if spec.get(key) != plain[key]]
    if differ:
        return f"its spec.yaml differs from registry.yaml in {', '.join(differ)}"
    instructions = spec.get("instructions")
    blocks = instructions.get("blocks") if isinstance(instructions, Mapping) else None
    if not isinstance(blocks, list) or not all(
        isinstance(b, Mapping) and isinstance(b.get("text"), str) for b in blocks
    ):
        return "its spec.yaml has no instructions.blocks texts"
    return None


def _spec_body(spec: Mapping[str, Any]) -> str:
    return body_prose(block["text"] for block in spec["instructions"]["blocks"])


def _warn(yaml_path: Path, problems: list[str]) -> None:
    named = "; ".join(problems[:_NAMED_IN_WARNING])
    more = len(problems) - _NAMED_IN_WARNING
    rest = f"; and {more} more" if more > 0 else ""
    message = (
        "ranked without the body of their skill (selection may differ from the registering "
        f"build until it is registered again): {named}{rest}"
    )
    warnings.warn(RoutingBodyWarning(yaml_path.as_posix(), message), stacklevel=3)
