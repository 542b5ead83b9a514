"""The edge condition language (Attractor §10): ``key=value`` clauses joined by ``&&``.

Keys are ``outcome``, ``preferred_label``, ``context.PATH`` or, as §10.4 resolves
them, any other dotted context key (``tool.verify.output``). A clause without an
operator tests that the key is set to a non-empty value. Literals are quoted
strings, integers, booleans or bare words (``[A-Za-z_][A-Za-z0-9_.:-]*``).

``outcome`` and ``preferred_label`` compare case-insensitively (outcomes are the
lower-case status words, labels are normalised as routing normalises them);
context values compare exactly, as the specification says. ``==`` is accepted
as a spelling of ``=``, which earlier thought graphs of this project used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mindrian.workflow.model import WorkflowError, normalise_label, normalise_outcome

__all__ = ["Clause", "condition_holds", "parse_condition"]

_KEY = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*"
_LITERAL = r'"(?:[^"\\]|\\.)*"|-?[0-9]+|[A-Za-z_][A-Za-z0-9_.:-]*'
_CLAUSE = re.compile(rf"\s*({_KEY})\s*(?:(!=|==|=)\s*({_LITERAL}))?\s*")


@dataclass(frozen=True)
class Clause:
    """One test: ``key=value``, ``key!=value`` or a bare ``key`` (set and non-empty)."""

    negated: bool
    """True for ``!=``."""
    value: str | None
    """The literal (unquoted, normalised for outcome and preferred_label); None for a bare key."""
    key: str = "outcome"
    """What is tested: ``outcome``, ``preferred_label`` or a context key."""

    def holds(
        self,
        outcome: str,
        preferred_label: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether the clause holds for this outcome, preferred label and run context."""
        actual = _resolve(self.key, outcome, preferred_label, context or {})
        if self.value is None:
            return bool(actual)
        return (actual == self.value) != self.negated


def _resolve(key: str, outcome: str, label: str | None, context: Mapping[str, Any]) -> str:
    if key == "outcome":
        return normalise_outcome(outcome)
    if key == "preferred_label":
        return normalise_label(label or "")
    for candidate in (key, key.removeprefix("context.")):
        if candidate in context and context[candidate] is not None:
            return _text(context[candidate])
    return ""


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, sort_keys=True)


def _literal(key: str, raw: str) -> str:
    value = json.loads(raw) if raw.startswith('"') else raw
    if key == "outcome":
        return normalise_outcome(value)
    if key == "preferred_label":
        return normalise_label(value)
    return str(value)


def parse_condition(text: str) -> tuple[Clause, ...]:
    """Parse ``outcome=success && context.tests!=failed``; WorkflowError naming the bad clause."""
    clauses = []
    for part in text.split("&&"):
        if not part.strip():
            raise WorkflowError(f"invalid condition {text!r}: empty clause around '&&'")
        match = _CLAUSE.fullmatch(part)
        if match is None:
            raise WorkflowError(
                f"invalid condition {text!r}: clause {part.strip()!r} is not KEY=VALUE, "
                "KEY!=VALUE or KEY (keys: outcome, preferred_label, context.NAME)"
            )
        key, operator, raw = match.groups()
        try:
            value = None if raw is None else _literal(key, raw)
        except json.JSONDecodeError:
            raise WorkflowError(f"invalid condition {text!r}: bad string {raw}") from None
        clauses.append(Clause(operator == "!=", value, key))
    return tuple(clauses)


def condition_holds(
    text: str,
    outcome: str,
    preferred_label: str | None = None,
    context: Mapping[str, Any] | None = None,
) -> bool:
    """Whether every clause of condition ``text`` holds."""
    return all(c.holds(outcome, preferred_label, context) for c in parse_condition(text))
