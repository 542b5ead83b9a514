"""``mindrian graph export``: the registry as YAML, JSON or a parameter-free Cypher script.

The Cypher script re-creates the graph in an empty Neo4j database (e.g. piped into
``cypher-shell``). It carries its values as literals rather than ``:param`` blocks,
so it is self-contained and runs anywhere Cypher runs; every literal is produced by
:func:`cypher_literal`, the one function that turns a value into Cypher text. The
statement shapes are those of the registry's own queries, with the parameters
replaced by literals, and the output is byte-identical for the same graph.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from mindrian.graph import FrameworkRecord, dump_registry_yaml
from mindrian.graph import queries as q
from mindrian.graph.registry_yaml import FORMAT_VERSION

__all__ = [
    "EXPORT_FORMATS",
    "cypher_literal",
    "cypher_statements",
    "export_cypher",
    "export_json",
    "export_text",
    "export_yaml",
]

#: Formats of ``mindrian graph export``.
EXPORT_FORMATS = ("yaml", "json", "cypher")

# Only escapes that Neo4j and LadybugDB read alike; every other non-printable character
# of the BMP becomes a \uXXXX escape, so nothing can end the literal or the line.
_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    # Characters beyond the BMP (emoji, private use) cannot end a literal or a line and
    # have no four-digit escape, so they stay as they are.
    if ch.isprintable() or ord(ch) > 0xFFFF:
        return ch
    return f"\\u{ord(ch):04x}"


def cypher_literal(value: Any) -> str:
    """Cypher text for a plain value: string, finite number, bool, None or a list of these.

    Strings are single-quoted with backslash, quote and every non-printable
    character escaped, so the result is always exactly one literal.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no Cypher literal")
        return repr(value)
    if isinstance(value, str):
        return "'" + "".join(_escape_char(ch) for ch in value) + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(cypher_literal(v) for v in value) + "]"
    raise TypeError(f"no Cypher literal for {type(value).__name__}")


def _framework_statement(record: FrameworkRecord) -> str:
    values = (
        ("name", record.name),
        ("type", record.type),
        ("description", record.description),
        ("triggers", list(record.triggers)),
        ("problem_types", list(record.problem_types)),
        ("version", record.version),
        ("source_digest", record.source_digest),
    )
    sets = ",\n    ".join(f"f.{key} = {cypher_literal(value)}" for key, value in values)
    return (
        f"MERGE (f:Framework {{id: {cypher_literal(record.id)}}})\n"
        f"SET {sets},\n    f.registered = true,\n    f.updated_at = datetime()"
    )


def _chain_statement(source: str, target: str, weight: float) -> str:
    # A target that is not registered becomes a placeholder, as in the registry's MERGE_CHAINS.
    return (
        f"MATCH (f:Framework {{id: {cypher_literal(source)}}})\n"
        f"MERGE (t:Framework {{id: {cypher_literal(target)}}})\n"
        "ON CREATE SET t.registered = false\n"
        "MERGE (f)-[r:CHAINS_TO]->(t)\n"
        f"SET r.weight = {cypher_literal(weight)}"
    )


def _good_for_statement(source: str, problem_type: str, confidence: float) -> str:
    return (
        f"MATCH (f:Framework {{id: {cypher_literal(source)}}})\n"
        f"MERGE (p:ProblemType {{name: {cypher_literal(problem_type)}}})\n"
        "MERGE (f)-[r:GOOD_FOR]->(p)\n"
        f"SET r.confidence = {cypher_literal(confidence)}"
    )


def cypher_statements(records: Sequence[FrameworkRecord]) -> tuple[str, ...]:
    """The statements of the script, without terminators: schema, nodes, then relationships."""
    ordered = sorted(records, key=lambda r: r.id)
    return (
        *(query.text for query in q.SCHEMA),
        *(_framework_statement(r) for r in ordered),
        *(_chain_statement(r.id, t, w) for r in ordered for t, w in r.chains_to),
        *(_good_for_statement(r.id, p, c) for r in ordered for p, c in r.good_for),
    )


def export_cypher(records: Sequence[FrameworkRecord]) -> str:
    """A Cypher script (statements ending in ``;``) that re-creates the registry."""
    header = (
        f"// mindrian framework registry: {len(records)} framework(s).\n"
        "// Parameter-free: every value is a literal escaped by "
        "builder.graph.export.cypher_literal.\n"
    )
    return header + "".join(f"\n{statement};\n" for statement in cypher_statements(records))


def export_json(records: Sequence[FrameworkRecord]) -> str:
    """The registry as JSON, in the layout of registry.yaml."""
    document = {
        "format": FORMAT_VERSION,
        "frameworks": [r.to_plain() for r in sorted(records, key=lambda r: r.id)],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def export_yaml(records: Sequence[FrameworkRecord]) -> str:
    """The registry as registry.yaml text."""
    return dump_registry_yaml(records)


def export_text(records: Sequence[FrameworkRecord], fmt: str) -> str:
    """The export in one of :data:`EXPORT_FORMATS`."""
    renderers = {"yaml": export_yaml, "json": export_json, "cypher": export_cypher}
    if fmt not in renderers:
        raise ValueError(
            f"unknown export format {fmt!r}; expected one of {', '.join(EXPORT_FORMATS)}"
        )
    return renderers[fmt](records)
