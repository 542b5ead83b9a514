"""``mindrian fmt``: Mindrian fields under ``metadata.mindrian``, so a skill stays an Agent Skill.

The Agent Skills standard allows only ``name``, ``description``, ``license``,
``allowed-tools``, ``metadata`` and ``compatibility`` at the top level, and its
reference validator (``agentskills validate``, strictyaml) rejects flow-style
collections (``[a, b]``). :func:`format_skill` rewrites the front matter with a
ruamel.yaml round trip that

* moves every top-level Mindrian field (:data:`~builder.phases.skill_analysis.MINDRIAN_KEYS`)
  to the end of ``metadata.mindrian``, in its order, with the comments attached to it;
* moves any other non-standard top-level key (a host's ``when_to_use``, a ``synthesizer``),
  and a standard key of a shape the standard does not define (``compatibility`` as a
  mapping), into ``metadata``, before ``mindrian``: phase 1 keeps both places in the same
  metadata;
* rewrites the shorthands phase 1 accepts (:mod:`builder.skill.shorthands`) to the
  canonical form: an item's ``title`` becomes ``name`` in its place, a bare text
  where a list is expected becomes a one-item list, a synonym repeating the
  canonical key's value is dropped, a list of score names becomes
  ``dimensions`` (an ``id`` beside a different ``name`` stays: it is the item's key);
* quotes a plain value that holds ``': '`` (``description: Use when: …``), which
  phase 1 reads leniently as text (warning W103) and strict YAML refuses;
* turns flow-style mappings and lists into block style;
* keeps everything else (other keys, comments, quoting, the body) as written.

The values are unchanged, so phase 1 reads the same skill: the build output
differs only in the source digest and in the line numbers it quotes. Formatting
formatted text changes nothing. A field set both at the top level and under
``metadata.mindrian``, or an item whose synonym and canonical key differ, is not
guessed at: :class:`FormatError` names both lines.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.phases.skill_analysis import MINDRIAN_KEYS, STANDARD_KEYS, has_standard_shape
from builder.pipeline.errors import SkillError, SourceLocation
from builder.skill.chain import CHAIN_FILE, CHAIN_KEYS, stage_files
from builder.skill.frontmatter import KeyPath
from builder.skill.lenient_yaml import load_leniently
from builder.skill.shorthands import ShorthandConflict, find_shorthands, nested_score

__all__ = ["FormatError", "FormatResult", "format_file", "format_skill", "skill_files"]

_DELIMITER = "---"
#: How much deeper a key sits under ``metadata.mindrian`` than at the top level.
_NESTED_INDENT = 4


class FormatError(SkillError):
    """A SKILL.md that fmt cannot rewrite without guessing (code M001, located)."""

    def __init__(self, message: str, path: str, line: int) -> None:
        super().__init__(message, location=SourceLocation(path, line), code="M001")


@dataclass(frozen=True)
class FormatResult:
    """The outcome of formatting one file."""

    path: Path
    """The SKILL.md."""
    changed: bool
    """Whether formatting changes its text."""
    moved: tuple[str, ...]
    """The top-level keys moved under ``metadata.mindrian``, in order."""


def skill_files(paths: Iterable[Path]) -> tuple[Path, ...]:
    """Files named directly, or the SKILL.md files and chains (each CHAIN.md, then its stage
    files in order) found under the folders named, sorted by path."""
    found: list[Path] = []
    for path in paths:
        if not path.is_dir():
            found.append(path)
            continue
        for file in sorted(
            (*path.rglob("SKILL.md"), *path.rglob(CHAIN_FILE)), key=lambda p: p.as_posix()
        ):
            found.append(file)
            if file.name == CHAIN_FILE:
                names = [p.name for p in file.parent.iterdir() if p.is_file()]
                found.extend(file.parent / stage.path for stage in stage_files(names))
    return tuple(dict.fromkeys(found))


def _role(path: str) -> str:
    """``chain`` for a CHAIN.md, ``stage`` for a stage file beside one, else ``skill``."""
    where = Path(path)
    if where.name == CHAIN_FILE:
        return "chain"
    if stage_files([where.name]) and (where.parent / CHAIN_FILE).is_file():
        return "stage"
    return "skill"


def format_file(path: Path, *, write: bool) -> FormatResult:
    """Format one SKILL.md; rewrite it only when ``write`` and the text changes."""
    try:
        original = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise FormatError(f"not UTF-8 (byte {error.start})", str(path), 0) from None
    formatted, moved = format_skill(original, str(path))
    changed = formatted != original
    if changed and write:
        path.write_bytes(formatted.encode("utf-8"))
    return FormatResult(path, changed, moved)


def format_skill(text: str, path: str = "SKILL.md") -> tuple[str, tuple[str, ...]]:
    """The formatted text of a SKILL.md and the keys moved; see the module docstring."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.replace("\r\n", "\n").split("\n")
    bom = lines[0][:1] == "\ufeff"
    if lines[0].lstrip("\ufeff").rstrip() != _DELIMITER:
        raise FormatError("no front matter (the first line is not '---')", path, 1)
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() == _DELIMITER), None)
    if close is None:
        raise FormatError("the front matter is not closed by a '---' line", path, 1)
    data = _load("\n".join(lines[1:close]) + "\n", path)
    role = _role(path)
    # A stage file is no Agent Skill: its keys stay where phase 1 reads them (only quoting and
    # block style apply), and so do CHAIN.md's own keys.
    moved = () if role == "stage" else _move(data, path, CHAIN_KEYS if role == "chain" else ())
    if role != "stage":
        _expand_shorthands(data, path)
    _block_style(data)
    out = io.StringIO()
    _yaml().dump(data, out)
    head = ("\ufeff" if bom else "") + _DELIMITER
    result = "\n".join([head, *out.getvalue().rstrip("\n").split("\n"), *lines[close:]])
    return result.replace("\n", newline), moved


def _load(front: str, path: str) -> Any:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        # Line 2 of the file is the front matter's first line.
        data, _ = load_leniently(front, _yaml().load, 2)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 2 if mark is not None else 2
        raise FormatError(f"YAML error: {error.problem or error}", path, line) from None
    except YAMLError as error:
        raise FormatError(f"YAML error: {error}", path, 2) from None
    if not isinstance(data, dict):
        raise FormatError("the front matter is not a mapping", path, 2)
    return data


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a long description
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def _move(data: Any, path: str, keep: tuple[str, ...]) -> tuple[str, ...]:
    """Move top-level Mindrian keys under ``metadata.mindrian``, other extras under ``metadata``,
    except the keys in ``keep``.

    Returns the keys moved, in their order.
    """
    mindrian = [k for k in data if k in MINDRIAN_KEYS]
    extras = [
        k
        for k in data
        if k not in MINDRIAN_KEYS
        and k not in keep
        and (k not in STANDARD_KEYS or (data[k] is not None and not has_standard_shape(k, data[k])))
    ]
    if not mindrian and not extras:
        return ()
    metadata = _child(data, "metadata", path, ())
    for key in extras:
        # Before ``mindrian``, so the host's extras read first and Mindrian's block stays last.
        at = list(metadata).index("mindrian") if "mindrian" in metadata else len(metadata)
        _transfer(data, metadata, key, at, ("metadata",), path, 2)
    if mindrian:
        nested = _child(metadata, "mindrian", path, ("metadata",))
        for key in mindrian:
            _transfer(
                data, nested, key, len(nested), ("metadata", "mindrian"), path, _NESTED_INDENT
            )
    return (*extras, *mindrian)


def _expand_shorthands(data: Any, path: str) -> None:
    """Rewrite every shorthand in place, comments kept with the key they belong to."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    try:
        shorthands = find_shorthands(data)
    except ShorthandConflict as conflict:
        written, other = _at(data, conflict.written[:-1]), _at(data, conflict.other[:-1])
        raise FormatError(
            f"{'.'.join(map(str, conflict.written))} and {'.'.join(map(str, conflict.other))} "
            f"(line {_line(other, str(conflict.other[-1]))}) give different values; keep one",
            path,
            _line(written, str(conflict.written[-1])),
        ) from None
    for shorthand in shorthands:
        parent, key = _at(data, shorthand.written[:-1]), shorthand.written[-1]
        if shorthand.keyed:
            continue  # the author's key stays for other hosts; phase 1 reads it as a decision
        if shorthand.wraps:
            parent[key] = CommentedSeq([parent[key]])
        elif shorthand.nests:
            dimensions = CommentedSeq([_mapping(nested_score(item)) for item in parent[key]])
            parent[key] = CommentedMap([("dimensions", dimensions)])
        elif shorthand.redundant:
            parent.ca.items.pop(key, None)
            del parent[key]
        else:
            new_key, comment = shorthand.canonical[-1], parent.ca.items.pop(key, None)
            parent.insert(list(parent).index(key), new_key, parent.pop(key))
            if comment is not None:
                parent.ca.items[new_key] = comment


def _mapping(value: Any) -> Any:
    """A round-trip mapping for a plain one (comments of a round-trip one kept)."""
    from ruamel.yaml.comments import CommentedMap

    return value if isinstance(value, CommentedMap) else CommentedMap(value)


def _at(data: Any, key_path: KeyPath) -> Any:
    for part in key_path:
        data = data[part]
    return data


def _child(parent: Any, key: str, path: str, where: tuple[str, ...]) -> Any:
    """``parent[key]``, created empty when absent; M001 when it is not a mapping."""
    from ruamel.yaml.comments import CommentedMap

    if parent.get(key) is None:
        parent[key] = CommentedMap()
    if not isinstance(parent[key], dict):
        raise FormatError(f"{'.'.join((*where, key))} is not a mapping", path, _line(parent, key))
    return parent[key]


def _transfer(
    data: Any, target: Any, key: str, at: int, where: tuple[str, ...], path: str, indent: int
) -> None:
    """Move the top-level ``key`` (value and comments) into ``target`` at position ``at``."""
    dotted = ".".join((*where, key))
    if key in target:
        raise FormatError(
            f"{key} is set here and as {dotted} (line {_line(target, key)}); "
            "keep one, then run mindrian fmt again",
            path,
            _line(data, key),
        )
    comment = data.ca.items.pop(key, None)
    target.insert(at, key, data.pop(key))
    if comment is not None:
        target.ca.items[key] = _indented(comment, indent)


def _indented(comment: list[Any], columns: int) -> list[Any]:
    """A key's comment tokens moved right by ``columns``: an end-of-line comment keeps its gap."""
    for token in comment:
        if token is not None and hasattr(token, "column") and token.column is not None:
            token.column += columns
    return comment


def _line(mapping: Any, key: str) -> int:
    """1-based line of ``key`` in the front matter's file (the front matter starts on line 2)."""
    return int(mapping.lc.key(key)[0]) + 2


def _block_style(node: Any) -> None:
    """Every mapping and list in block style (agentskills' strictyaml rejects flow style)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
        node.fa.set_block_style()
        for value in node.values():
            _block_style(value)
    elif isinstance(node, CommentedSeq):
        node.fa.set_block_style()
        for item in node:
            _block_style(item)
