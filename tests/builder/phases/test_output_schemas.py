"""Output templates that show the JSON an agent answers with (issue 27, item 2), through phase 7.

Shapes of public skills that phase 6 refused with C026, each a synthetic fixture under
``tests/builder/fixtures/skills/outputs/``:

* ``script-result``: an "Output Format" section with two fenced JSON blocks, a success object
  written with ``... // comment`` and an error object (``{"success": false, "error": …}``).
* ``command-status``: one fenced block holding two objects under ``// Success`` and
  ``// Error`` comments (``{"status": "created", "address": "0x..."}``) and a ``{command}``
  placeholder in the prose.

* ``team-verdict``: a collaborative skill (two perspectives) whose output template is one
  object, so the team's synthesis answers with it.

None declares scores, so the examples become the schema of the answer's ``data``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from build_factories import make_project

# Slow: phase 6 runs each generated package's tests in a pytest subprocess.
pytestmark = pytest.mark.slow

OUTPUTS = Path(__file__).resolve().parents[1] / "fixtures" / "skills" / "outputs"

#: The data schema each shape infers (spec.yaml's handoff.returns.data_schema).
SCHEMAS = {
    "script-result": {
        "type": "object",
        "properties": {
            "success": {"type": "boolean"},
            "target": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "detail": {
                "type": "object",
                "properties": {"unit": {"type": "string"}, "note": {}},
                "required": ["unit", "note"],
            },
            "error": {"type": "string"},
        },
        "required": ["success"],
    },
    "team-verdict": {
        "type": "object",
        "properties": {
            "verdict": {"type": "string"},
            "votes": {"type": "array", "items": {"type": "integer"}},
            "unanimous": {"type": "boolean"},
        },
        "required": ["verdict", "votes", "unanimous"],
    },
    "command-status": {
        "type": "object",
        "properties": {
            "status": {"type": "string"},
            "entry": {"type": "string"},
            "amount": {"type": "integer"},
            "error": {"type": "string"},
        },
        "required": [],
    },
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_shape_builds_through_phase_7_with_its_example_as_schema(
    cli, tmp_path: Path, name: str
) -> None:
    project = make_project(tmp_path, {})
    shutil.copytree(OUTPUTS / name, project / "skills" / name)
    result = cli(["build", f"skills/{name}/SKILL.md", "--jobs", "1"], project)
    assert result.code == 0, result.err
    identifier = name.replace("-", "_")
    spec = yaml.safe_load((project / "generated" / identifier / "spec.yaml").read_text())
    assert spec["type"] == ("collaborative" if name == "team-verdict" else "operator")
    returns = spec["handoff"]["returns"]
    assert returns["data_schema"] == SCHEMAS[name]
    assert "data" in returns["fields"]
    assert any(d.startswith("data: the output template's ") for d in spec["handoff"]["decisions"])
    expected = json.loads(
        (project / "generated" / identifier / "tests" / "contract.json").read_text()
    )
    assert expected["output_examples"], "the package's tests answer with no example of the skill"
    assert "warning[W301]" not in result.out + result.err
