"""Framework records for the registry tests, with scores worked out by hand."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from mindrian.graph import FrameworkRecord, Registry

#: Opens a registry on the engine under test (the ``engine`` fixture): every one opened sees
#: the same graph on Neo4j (one database), a new empty one on the embedded engine (in memory).
OpenRegistry = Callable[[], Registry]

#: Text that would break out of a string literal if it were ever spliced into Cypher.
INJECTION = "1.0', f.pwned = true, f.note = '"


def framework(framework_id: str, **overrides: Any) -> FrameworkRecord:
    """A complete record with predictable defaults; override any field."""
    defaults: dict[str, Any] = {
        "id": framework_id,
        "name": framework_id.replace("-", " ").title(),
        "type": "operator",
        "description": f"About {framework_id}.",
        "version": "1.0.0",
        "source_digest": f"sha256:{framework_id}",
    }
    return FrameworkRecord(**{**defaults, **overrides})


#: Six frameworks (seed 000 §5 names) whose selection scores are computed in the tests.
SIX = (
    framework(
        "minto",
        triggers=("structure", "scqa", "communicate"),
        problem_types=("ill-defined", "well-defined"),
        chains_to=(("pws", 0.9),),
        good_for=(("ill-defined", 0.7),),
    ),
    framework(
        "pws",
        triggers=("problem", "validate"),
        problem_types=("ill-defined",),
        chains_to=(("minto", 0.4),),
        good_for=(("ill-defined", 0.9), ("wicked", 0.6)),
    ),
    framework(
        "jtbd",
        triggers=("customer", "job"),
        problem_types=("market",),
        chains_to=(("pws", 0.5), ("csio", 0.2)),
        good_for=(("market", 0.8),),
    ),
    framework("csio", triggers=("scqa", "innovation"), problem_types=("wicked",)),
    framework(
        "scenario",
        triggers=("future", "scqa"),
        problem_types=("ill-defined",),
        chains_to=(("pws", 0.3),),
    ),
    framework("trending", triggers=("trend",), problem_types=("market", "ill-defined")),
)


def by_id(framework_id: str) -> FrameworkRecord:
    """One of :data:`SIX`."""
    return next(r for r in SIX if r.id == framework_id)


def with_injection(record: FrameworkRecord) -> FrameworkRecord:
    """``record`` with the injection text in every free-text field it has."""
    return replace(
        record,
        name=INJECTION,
        description=INJECTION,
        version=INJECTION,
        triggers=(INJECTION, "scqa"),
        problem_types=(INJECTION,),
        good_for=((INJECTION, 0.5),),
    )
