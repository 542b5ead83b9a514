"""Selected frameworks with what a model needs to choose between them: description and what
the author says the skill is not for."""

from __future__ import annotations

from mindrian.graph import EmbeddedRegistry, FrameworkRecord, Selection
from mindrian.handoff.tools import Orchestration, bound, select_frameworks
from mindrian.routing.candidates import MAX_LINE, MAX_LINES, describe, when_not_to_use

BODY = """# Review SQL

Reads migrations and flags locking risks.

## When not to use

- Reviewing application code: use code-review.
- Designing a schema from nothing.

## Steps

1. Read the migration.

### Do not use this skill for

* Data fixes run by hand
"""


def test_negative_clauses_then_the_lines_of_sections_headed_so() -> None:
    found = when_not_to_use("Reviews SQL migrations. Not for ORM models.", BODY)
    assert found == (
        "Not for ORM models.",
        "Reviewing application code: use code-review.",
        "Designing a schema from nothing.",
        "Data fixes run by hand",
    )
    # "Steps" closes the section: its lines are not negative.
    assert not any("Read the migration" in line for line in found)


def test_chinese_headings_and_bounds() -> None:
    body = "## 不适用场景\n" + "".join(f"- 第{i}条 " + "很长" * 200 + "\n" for i in range(9))
    found = when_not_to_use("整理文档。", body)
    assert len(found) == MAX_LINES and all(len(line) <= MAX_LINE for line in found)
    assert found[0].startswith("第0条") and found[0].endswith("…")
    assert when_not_to_use("Plan a sprint.", "## Usage\n- plan") == ()


def _registry() -> EmbeddedRegistry:
    registry = EmbeddedRegistry(None)
    registry.register_many(
        [
            FrameworkRecord(
                "sql-review",
                "SQL review",
                "operator",
                description="Review SQL migrations for locking risks. Not for application code.",
                body=BODY,
            ),
            FrameworkRecord(
                "code-review",
                "Code review",
                "operator",
                description="Review application code changes.",
            ),
        ]
    )
    return registry


def test_describe_reads_each_selection_from_the_registry() -> None:
    with _registry() as registry:
        chosen = (Selection("sql-review", "SQL review", 0.9, 0.95), Selection("gone", "Gone", 0.1))
        sql, gone = describe(chosen, registry.get)
    assert sql.confident and sql.description.startswith("Review SQL migrations")
    assert sql.not_for[:2] == (
        "Not for application code.",
        "Reviewing application code: use code-review.",
    )
    assert gone.plain() == {
        "id": "gone",
        "name": "Gone",
        "score": 0.1,
        "confident": False,
        "description": "",
        "not_for": [],
    }


def test_larrys_select_frameworks_lists_what_each_is_and_is_not_for() -> None:
    with _registry() as registry:
        orchestration = Orchestration(agent_id="larry", registry=registry, agents={}.get)
        with bound(orchestration, "s"):
            listed = select_frameworks("review these SQL migrations for locking").splitlines()
    assert listed[1].startswith("1. sql-review (SQL review): score ")
    assert listed[1].endswith("(confident: the router stands behind it alone)")
    assert listed[2] == "   for: Review SQL migrations for locking risks. Not for application code."
    assert listed[3:5] == [
        "   not for: Not for application code.",
        "   not for: Reviewing application code: use code-review.",
    ]
