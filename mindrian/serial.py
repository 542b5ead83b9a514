"""Plain-data conversion of frozen dataclasses, and deterministic YAML.

One serialiser for the runtime and the builder (which imports it through
``builder.pipeline.serial``): the builder's phase outputs and checkpoints, the
runtime's saved session state. The values are frozen dataclasses made of str,
int, float, bool, None, enums, tuples, string-keyed mappings and other such
dataclasses. ``to_plain`` turns them into JSON/YAML-safe data in a fixed order;
``from_plain`` rebuilds them from their type hints, so what was saved loads back
without loss.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re
import types
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from mindrian.yaml_emit import SafeDumper, libyaml_writes_alike

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["dump_yaml", "from_plain", "load_yaml", "to_plain"]

T = TypeVar("T", bound="DataclassInstance")

#: The exact types that are plain data as they are (not their subclasses: an enum may be one).
_SCALARS = frozenset({str, int, float, bool})


def to_plain(value: Any) -> Any:
    """Convert a value to plain data (dataclass field order kept, mapping keys sorted)."""
    if value is None or type(value) in _SCALARS:
        return value  # first: most values are, and the checks below cost more
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): to_plain(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, (tuple, list)):
        return [to_plain(v) for v in value]
    if isinstance(value, (frozenset, set)):
        return sorted(to_plain(v) for v in value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot serialise {type(value).__name__!r} to plain data")


def from_plain(cls: Any, data: Any) -> Any:
    """Rebuild a value of type ``cls`` from plain data produced by :func:`to_plain`."""
    origin = typing.get_origin(cls)
    if origin in (typing.Union, types.UnionType):
        return _union_from_plain(cls, data)
    if cls is Any:
        return data
    if origin is tuple:
        return _tuple_from_plain(cls, data)
    if origin in (dict, Mapping, typing.Mapping) or cls in (dict, Mapping):
        key_t, val_t = typing.get_args(cls) or (str, Any)
        return {
            from_plain(key_t, k): from_plain(val_t, v) for k, v in _expect(dict, data, cls).items()
        }
    if origin is typing.Literal:
        if data not in typing.get_args(cls):
            raise ValueError(f"{data!r} is not one of {typing.get_args(cls)}")
        return data
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        return cls(data)
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):
        return _dataclass_from_plain(cls, _expect(dict, data, cls))
    if cls is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if cls in (str, int, float, bool, type(None)):
        return _expect(cls, data, cls)
    raise TypeError(f"unsupported type {cls!r}")


def _union_from_plain(cls: Any, data: Any) -> Any:
    """The first member of the union ``cls`` that ``data`` fits, tried in declaration order."""
    options = typing.get_args(cls)
    if data is None and type(None) in options:
        return None
    errors = []
    for option in options:
        if option is type(None):
            continue
        try:
            return from_plain(option, data)
        except (TypeError, ValueError, KeyError) as exc:
            errors.append(str(exc))
    raise TypeError(f"{data!r} fits none of {cls}: {'; '.join(errors)}")


def _tuple_from_plain(cls: Any, data: Any) -> tuple[Any, ...]:
    """A homogeneous ``tuple[X, ...]`` or a fixed-length ``tuple[X, Y]`` from a list."""
    args = typing.get_args(cls)
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(from_plain(args[0], v) for v in _expect(list, data, cls))
    return tuple(from_plain(a, v) for a, v in zip(args, _expect(list, data, cls), strict=True))


def _dataclass_from_plain(cls: type[T], data: dict[str, Any]) -> T:
    hints = _hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise KeyError(f"{cls.__name__} has no field(s) {', '.join(unknown)}")
    kwargs = {name: from_plain(hints[name], value) for name, value in data.items()}
    return cls(**kwargs)


@functools.cache
def _hints(cls: type[DataclassInstance]) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _expect(kind: type, data: Any, cls: Any) -> Any:
    if kind is float and isinstance(data, bool):
        raise TypeError(f"expected {cls}, got bool")
    if kind is int and isinstance(data, bool):
        raise TypeError(f"expected {cls}, got bool")
    if not isinstance(data, kind):
        raise TypeError(f"expected {cls}, got {type(data).__name__}")
    return data


#: The tag of a string scalar.
_STR_TAG = "tag:yaml.org,2002:str"


class _Dumper(SafeDumper):
    """SafeDumper that writes multi-line strings as literal blocks for readable diffs."""

    def represent_data(self, data: Any) -> yaml.Node:
        if type(data) is str:
            return _str_node(self, data)
        return super().represent_data(data)


#: Line breaks of YAML 1.1 besides LF: PyYAML's plain, single-quoted and literal styles fold
#: them (a NEL read back as a space), so only the double-quoted style, which escapes them, keeps
#: them.
_OTHER_BREAKS = re.compile("[\r\x85\u2028\u2029]")


def _str_style(value: str) -> str | None:
    # Literal blocks cannot carry trailing spaces or some control characters
    # faithfully; fall back to the quoted style for those so round trips are exact.
    if ("\r" in value) if value.isascii() else (_OTHER_BREAKS.search(value) is not None):
        return '"'
    return "|" if "\n" in value and _literal_safe(value) else None


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar(_STR_TAG, value, style=_str_style(value))


def _str_node(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    """The node :func:`_represent_str` gives ``value`` (a ``str`` itself), without the
    representer's dispatch: strings are most of what the builder dumps (every checkpoint),
    and its type lookups and alias bookkeeping cost more than the emitter's C for them."""
    dumper.alias_key = None  # as ``represent_data`` leaves it for a value never aliased
    style = _str_style(value)
    return yaml.ScalarNode(_STR_TAG, value, style=dumper.default_style if style is None else style)


#: What a literal block cannot carry besides a space or tab ending a line: a control character
#: other than tab and LF. The builder writes every skill's instructions through here several
#: times: substring searches find the line ends, and one character class the rest, in about a
#: third of the time of one regex with both (whose alternation tries every character twice).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")


def _literal_safe(value: str) -> bool:
    return (
        not value.startswith((" ", "\n"))
        and not value.endswith((" ", "\t"))
        and " \n" not in value
        and "\t\n" not in value
        and _CONTROL.search(value) is None
    )


_Dumper.add_representer(str, _represent_str)


class _FastDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """:class:`_Dumper`'s representation through libyaml's emitter (several times faster)."""

    def represent_data(self, data: Any) -> yaml.Node:
        if type(data) is str:
            return _str_node(self, data)
        node: yaml.Node = super().represent_data(data)
        return node


_FastDumper.add_representer(str, _represent_str)


def dump_yaml(data: Any, *, fast: bool = False) -> str:
    """Deterministic YAML text for plain data: insertion order, UTF-8, LF, no line folding.

    ``fast`` emits with libyaml when installed: the same data, but not always
    the same bytes as the pure-Python emitter, so it is for files the builder
    alone reads back (checkpoints). Without it libyaml still writes ``data`` when
    it is of the shape both emitters write byte for byte
    (:func:`~mindrian.yaml_emit.libyaml_writes_alike`; a skill's ``spec.yaml``
    nearly always is), else the pure-Python emitter does.
    """
    alike = fast or libyaml_writes_alike(data, _literal_style, _WIDTH)
    return yaml.dump(
        data,
        Dumper=_FastDumper if alike else _Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=_WIDTH,
    )


#: No line is folded.
_WIDTH = 2**31 - 1


def _literal_style(value: str) -> bool:
    """Whether :func:`_represent_str` writes ``value`` as a literal block."""
    return _str_style(value) == "|"


def load_yaml(text: str) -> Any:
    """Parse YAML written by :func:`dump_yaml` (safe loader)."""
    return yaml.load(
        text, Loader=yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader
    )
