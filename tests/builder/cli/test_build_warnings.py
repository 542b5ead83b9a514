"""``mindrian build`` prints every phase's warnings, located, once, as ``--json`` reports them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from build_factories import FakePipeline, make_pipeline, make_project, skill_text

from builder.orchestration.runner import Phases

# Slow: builds through the command line.
pytestmark = pytest.mark.slow

_OPTIONAL_SERVER = (
    "skills/demo/SKILL.md:9: warning[W401]: optional MCP server 'localsrv' is unavailable on "
    "this machine: command 'local-mcp-server' is not on PATH"
)
_UNLOCATED = "the skill defines scores but handoff.returns omits 'scores'"


def _fake(monkeypatch: pytest.MonkeyPatch) -> FakePipeline:
    """Fake phases whose warnings come after phase 1; tool_assembly's reappears in phase 5."""
    pipeline = make_pipeline()
    pipeline["handoff_protocol"].warnings = (_UNLOCATED,)
    pipeline["tool_assembly"].warnings = (_OPTIONAL_SERVER,)
    pipeline["neo4j_schema"].warnings = (_OPTIONAL_SERVER,)
    monkeypatch.setattr("builder.orchestration.runner.DEFAULT", Phases.local(pipeline.load))
    return pipeline


def _json_warnings(out: str) -> list[str]:
    (build,) = json.loads(out)["builds"]
    return [w for phase in build["phases"] for w in phase["warnings"]]


def test_warnings_after_phase_1_are_printed_located_and_once(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake(monkeypatch)
    project = make_project(tmp_path, {"demo": skill_text("demo")})
    args = ["build", "skills/demo", "--until", "neo4j_schema"]
    expected = [_OPTIONAL_SERVER, f"skills/demo/SKILL.md: warning: {_UNLOCATED}"]

    fresh = cli(args, project)
    assert fresh.code == 0, fresh.err
    assert [line for line in fresh.err.splitlines() if "warning" in line] == [
        expected[1],
        expected[0],
    ]

    # Cached: --json still reports them, so the human lines say them again, still once each.
    cached = cli([*args, "--json"], project)
    assert cached.code == 0, cached.err
    assert "ok (cached)" in cached.err
    reported = _json_warnings(cached.out)
    assert sorted(set(reported)) == sorted({_OPTIONAL_SERVER, _UNLOCATED})
    shown = [line for line in cached.err.splitlines() if "warning" in line]
    assert sorted(shown) == sorted(expected)


def test_quiet_prints_no_warning(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch)
    project = make_project(tmp_path, {"demo": skill_text("demo")})
    quiet = cli(["build", "skills/demo", "--until", "neo4j_schema", "--quiet"], project)
    assert (quiet.code, quiet.err) == (0, "")


def test_a_model_setting_warning_of_phase_2_names_its_code_and_line(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A model id no other test asks about: the model-check cache cannot answer for it.
    monkeypatch.setattr(
        "mindrian.providers.unsupported_settings", lambda provider, s: ("max_tokens",)
    )
    text = skill_text("demo", model="groq:m-polish-warning-probe")
    project = make_project(tmp_path, {"demo": text})
    args = ["build", "skills/demo", "--until", "architecture"]
    line = (
        "skills/demo/SKILL.md:5: warning[W201]: max_tokens=4096 will not be applied: Agno's groq "
        "model lacks the field, so a run drops it"
    )
    for run in (cli(args, project), cli([*args, "--json"], project)):
        assert run.code == 0, run.err
        assert [w for w in run.err.splitlines() if "warning" in w] == [line]
    assert _json_warnings(run.out) == [line]
