"""The quick schema check never passes a front matter jsonschema refuses, and passes every valid
front matter of the project, its test fixtures and the shared corpora, so phase 1 imports
jsonschema only for a front matter with errors."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from builder.orchestration.validation import validate
from builder.phases import skill_analysis
from builder.phases.skill_analysis import skill_schema
from builder.pipeline.config import BuildConfig
from builder.schemas.quick_check import surely_valid

ROOT = Path(__file__).resolve().parents[3]
#: The shared corpora, beside the project or beside the folder of its worktrees.
_SHARED = next(
    (p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared") if p.is_dir()), None
)
_SKILL_FILES = sorted(
    {
        *ROOT.joinpath("skills").rglob("SKILL.md"),
        *ROOT.joinpath("tests").rglob("SKILL.md"),
        *(_SHARED.rglob("SKILL.md") if _SHARED else ()),
    }
)
_VALIDATOR = Draft202012Validator(skill_schema())


def _valid(value: Any) -> bool:
    return not any(True for _ in _VALIDATOR.iter_errors(value))


@pytest.fixture(scope="module")
def front_matters() -> list[Any]:
    """Every value phase 1 checks against the schema, over all known SKILL.md files."""
    seen: list[Any] = []

    def spy(schema: Any, value: Any) -> bool:
        seen.append(copy.deepcopy(value))
        return surely_valid(schema, value)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(skill_analysis, "surely_valid", spy)
        for path in _SKILL_FILES:
            validate(path, BuildConfig(root=str(ROOT)))
    assert len(seen) > 20
    return seen


def test_every_known_front_matter_gets_jsonschemas_verdict(front_matters: list[Any]) -> None:
    schema = skill_schema()
    assert [surely_valid(schema, v) for v in front_matters] == [_valid(v) for v in front_matters]


_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 200),
    st.floats(allow_nan=False, width=32),
    st.sampled_from(["", " ", "x", "operator", "role", "Bash", "sonnet", "a b", "-", "1"]),
    st.text(max_size=6),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["name", "type", "x", "steps", "title"]), inner, max_size=3
        )
    ),
    max_leaves=6,
)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*at, index))
    return found


def _mutated(value: Any, at: tuple[Any, ...], change: str, new: Any) -> Any:
    result = copy.deepcopy(value)
    if not at:
        return new
    parent = result
    for part in at[:-1]:
        parent = parent[part]
    if change == "drop":
        del parent[at[-1]]
    elif change == "add" and isinstance(parent[at[-1]], dict):
        parent[at[-1]]["extra"] = new
    elif change == "add" and isinstance(parent[at[-1]], list):
        parent[at[-1]].append(new)
    else:
        parent[at[-1]] = new
    return result


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_a_mutated_front_matter_is_never_passed_when_jsonschema_refuses_it(
    front_matters: list[Any], data: st.DataObject
) -> None:
    value = data.draw(st.sampled_from(front_matters))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.sampled_from(_paths(value)))
        change = data.draw(st.sampled_from(["set", "drop", "add"]) if at else st.just("set"))
        value = _mutated(value, at, change, data.draw(_VALUES))
    if surely_valid(skill_schema(), value):
        assert _valid(value), value


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "integer"}, 1.0),  # jsonschema's integer, left to it
        ({"enum": [1]}, 1.0),
        ({"uniqueItems": True}, [1, 2]),
        ({"$ref": "#/definitions/x"}, 1),
        ({"not": {"type": "string"}}, 1),  # a keyword outside the subset
        ({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}, 1),  # a cycle
        ({"type": "string"}, b"bytes"),
    ],
)
def test_what_the_check_does_not_model_is_left_to_jsonschema(schema: Any, value: Any) -> None:
    assert surely_valid(schema, value) is False


def test_validating_a_valid_skill_does_not_import_jsonschema() -> None:
    probe = (
        "import sys\n"
        "from builder.entry import main\n"
        "status = main(['validate', 'skills/pws/SKILL.md'])\n"
        "assert status == 0, status\n"
        "heavy = ('jsonschema', 'typer', 'builder.cli.app', 'builder.orchestration.runner',"
        " 'agno')\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
