"""Guided progress and pipeline checkpoints go through mindrian.serial, in the same bytes as before.

The files are read back by sessions saved before the change (and sent over HTTP in a
served guided session), so the format is pinned here as literal JSON.
"""

from __future__ import annotations

import pytest

from mindrian.agents.base import Partial
from mindrian.agents.guided import GuidedProgress
from mindrian.agents.pipeline import PipelineCheckpoint

PARTIALS = (
    Partial("problem", "Zu teuer — «too dear»"),
    Partial("customer", "", status="skipped", user_input="skip"),
)

GUIDED = """{
  "agent_id": "lean-canvas",
  "partials": [
    {
      "name": "problem",
      "output": "Zu teuer — «too dear»",
      "status": "done",
      "user_input": ""
    },
    {
      "name": "customer",
      "output": "",
      "status": "skipped",
      "user_input": "skip"
    }
  ],
  "position": 2,
  "session_id": "s1",
  "task": "a canvas"
}
"""


def test_guided_progress_keeps_its_file_format() -> None:
    progress = GuidedProgress("lean-canvas", "s1", "a canvas", 2, PARTIALS)
    assert progress.to_json() == GUIDED
    assert GuidedProgress.from_json(GUIDED) == progress


def test_pipeline_checkpoint_keeps_its_file_format() -> None:
    checkpoint = PipelineCheckpoint("deep-research", "s2", "why", "ab" * 32, PARTIALS[:1])
    text = checkpoint.to_json()
    assert text.startswith('{\n  "agent_id": "deep-research",\n  "digest": "abab')
    assert '"partials": [\n    {\n      "name": "problem",' in text
    assert text.endswith('  "session_id": "s2",\n  "task": "why"\n}\n')
    assert PipelineCheckpoint.from_json(text) == checkpoint


def test_a_field_of_the_wrong_type_is_refused() -> None:
    # The hand-written reader took any value; the shared one checks the field types.
    with pytest.raises(TypeError):
        GuidedProgress.from_data(
            {"agent_id": "a", "session_id": "s", "task": "t", "position": "2", "partials": []}
        )


@pytest.mark.parametrize(
    ("kind", "cls"), [("guided", GuidedProgress), ("pipeline", PipelineCheckpoint)]
)
@pytest.mark.parametrize(
    "damage",
    [
        {"agent_id": "canvas"},  # keys missing: was a KeyError
        {
            "agent_id": "canvas",
            "session_id": "s",
            "task": "t",
            "position": 0,
            "digest": "d",
            "partials": 7,
        },  # a value of the wrong type: was a TypeError
    ],
)
def test_a_damaged_state_file_is_an_error_naming_it(
    tmp_path, kind: str, cls: type, damage: dict[str, object]
) -> None:
    """Issue 38, 10: a damaged guided or pipeline state file raised a plain KeyError or
    TypeError; both read through one function that names the file."""
    import json

    from mindrian.agents._state import load_state
    from mindrian.agents.errors import AgentRunError

    path = tmp_path / "s.json"
    path.write_text(json.dumps(damage), encoding="utf-8")
    with pytest.raises(AgentRunError, match=f"^{path}: a damaged {cls.__name__} state file"):
        load_state(path, "canvas", cls)
