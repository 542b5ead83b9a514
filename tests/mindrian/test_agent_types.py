"""The agent type records: each one agrees with the base class, contract and workflow it names,
and no other module keeps a table of the types."""

from __future__ import annotations

import ast
import importlib
import inspect
import typing
from pathlib import Path

import pytest

import mindrian.agents
from mindrian.agent_types import (
    AGENT_TYPE_NAMES,
    AGENT_TYPES,
    AgentType,
    AgentTypeRecord,
    Readme,
    is_agent_type,
    record_of,
)
from mindrian.handoff import HandoffType, ReturnBehavior
from mindrian.testing.contract import AgentContract, contract_for
from mindrian.workflow import WorkflowKind

ROOT = Path(__file__).resolve().parents[2]


def _base(record: AgentTypeRecord) -> type[mindrian.agents.MindrianAgent]:
    cls: type[mindrian.agents.MindrianAgent] = getattr(
        importlib.import_module(record.module), record.base_class
    )
    return cls


def test_the_literal_lists_the_records_in_order() -> None:
    assert typing.get_args(AgentType) == AGENT_TYPE_NAMES
    assert len(set(AGENT_TYPE_NAMES)) == len(AGENT_TYPES)


@pytest.mark.parametrize("record", AGENT_TYPES, ids=AGENT_TYPE_NAMES)
def test_the_base_class_is_the_type_and_the_runtime_exports_it(record: AgentTypeRecord) -> None:
    cls = _base(record)
    assert cls.agent_type == record.name
    assert getattr(mindrian.agents, record.base_class) is cls


@pytest.mark.parametrize("record", AGENT_TYPES, ids=AGENT_TYPE_NAMES)
def test_the_contract_named_is_the_one_bound_to_the_base(record: AgentTypeRecord) -> None:
    contract = contract_for(_base(record))
    assert isinstance(contract, AgentContract)
    assert type(contract).__name__ == record.contract


@pytest.mark.parametrize("record", AGENT_TYPES, ids=AGENT_TYPE_NAMES)
def test_what_the_record_says_the_base_class_does(record: AgentTypeRecord) -> None:
    cls = _base(record)
    takes_state = "state_dir" in inspect.signature(cls.__init__).parameters
    assert record.keeps_state == takes_state, "a run gives state_dir to the types that take it"
    assert record.output_model == hasattr(cls, "output_schema")
    assert (record.workflow is None) == (record.parts is None), "a workflow is made of parts"
    assert record.steps_wait <= (record.parts == "steps"), "only steps wait for the user"


@pytest.mark.parametrize("record", AGENT_TYPES, ids=AGENT_TYPE_NAMES)
def test_the_values_are_ones_the_runtime_and_templates_know(record: AgentTypeRecord) -> None:
    assert record.workflow is None or record.workflow in typing.get_args(WorkflowKind)
    assert record.readme in typing.get_args(Readme)
    assert record.scaffold in AGENT_TYPE_NAMES, "a skeleton is one a type introduced"
    assert record.handoffs and all(HandoffType(h) for h in record.handoffs)
    assert ReturnBehavior(record.return_behavior)
    provider, _, model_id = record.model.partition(":")
    assert provider and model_id
    gen = record.generation
    if gen.thinking_budget is not None:
        assert gen.temperature is None and gen.max_tokens > gen.thinking_budget


def test_a_name_is_looked_up_exactly() -> None:
    assert record_of("guided").name == "guided"
    assert is_agent_type("role") and not is_agent_type("Role") and not is_agent_type(None)
    with pytest.raises(KeyError, match="unknown agent type 'wizard'; expected one of operator"):
        record_of("wizard")


def _tables(path: Path, root: Path = ROOT) -> list[str]:
    """Displays (dict, tuple, list, set) in ``path`` naming two or more agent types."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            items: list[ast.expr | None] = list(node.keys)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = list(node.elts)
        else:
            continue
        named = {i.value for i in items if isinstance(i, ast.Constant)} & set(AGENT_TYPE_NAMES)
        if len(named) >= 2:
            found.append(f"{path.relative_to(root)}:{node.lineno}: {sorted(named)}")
    return found


#: Modules whose tables name something else after the types: the workflow shapes, which a type's
#: record picks (``workflow``), were named after the types that introduced them.
_OTHER_TABLES = frozenset({ROOT / "mindrian" / "workflow" / "build.py"})


def test_no_module_but_the_records_keeps_a_table_of_the_types() -> None:
    home = ROOT / "mindrian" / "agent_types.py"
    modules = sorted((ROOT / "builder").rglob("*.py")) + sorted((ROOT / "mindrian").rglob("*.py"))
    found = [t for path in modules if path not in {home, *_OTHER_TABLES} for t in _tables(path)]
    assert not found, "per-type facts belong in mindrian/agent_types.py:\n" + "\n".join(found)


def test_the_table_scan_sees_each_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        'A = {"operator": 1, "role": 2}\nB = ("pipeline", "guided")\nC = ["role"]\n'
        'D = {"collaborative", "operator"}\n',
        encoding="utf-8",
    )
    lines = [t.split(":")[1] for t in _tables(sample, tmp_path)]
    assert lines == ["1", "2", "4"]
