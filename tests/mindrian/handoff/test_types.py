"""The handoff vocabularies: members, wire values and string behaviour."""

import json

import pytest

from mindrian.handoff import HandoffMode, HandoffType, ReturnBehavior


@pytest.mark.parametrize(
    ("enum", "values"),
    [
        (HandoffType, ("delegate", "transfer", "return", "escalate")),
        (HandoffMode, ("sequential", "parallel", "selective", "debate")),
        (ReturnBehavior, ("synthesize", "passthrough", "iterate")),
    ],
)
def test_members_and_values(enum, values):
    assert tuple(m.value for m in enum) == values
    assert tuple(m.name for m in enum) == tuple(v.upper() for v in values)


@pytest.mark.parametrize("member", [*HandoffType, *HandoffMode, *ReturnBehavior])
def test_members_are_strings_that_survive_json(member):
    assert isinstance(member, str)
    assert member == member.value
    assert type(member)(json.loads(json.dumps(member))) is member


@pytest.mark.parametrize("enum", [HandoffType, HandoffMode, ReturnBehavior])
def test_unknown_value_is_rejected(enum):
    with pytest.raises(ValueError):
        enum("teleport")
