"""Phase keys: a stamp is checked with what a build of the default phases would digest."""

from __future__ import annotations

from pathlib import Path

import pytest
from phase_factories import outputs_of, skill

from builder.orchestration.runner import input_digest
from builder.phases import PHASE_NAMES, load_phase
from builder.phases.keys import load_key
from builder.pipeline.code_digest import ROOT, code_files, phase_code_digest
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import PhaseInput, SkillSource
from builder.skill.model import CustomToolRequest


def _inputs(tmp_path: Path, data: bytes, **config: object) -> PhaseInput:
    definition = skill(
        custom_tools=(CustomToolRequest("insight", "json.dumps", line=9),),
    )
    source = SkillSource(path="skills/sample/SKILL.md", data=data, digest="0" * 64)
    return PhaseInput(
        source=source,
        config=BuildConfig(root=str(tmp_path), **config),
        previous=outputs_of({"skill_analysis": definition}),
    )


@pytest.mark.parametrize("name", PHASE_NAMES)
@pytest.mark.parametrize("data", [b"plain skill\n", b"custom_tools:\n  - json.dumps\n"])
def test_each_key_digests_as_its_phase(name: str, data: bytes, tmp_path: Path) -> None:
    key, phase = load_key(name), load_phase(name)
    inputs = _inputs(tmp_path, data)
    assert (key.name, key.number, key.traits) == (phase.name, phase.number, phase.traits)
    assert key.code_packages == tuple(getattr(phase, "code_packages", ()))
    assert key.code_module == type(phase).__module__
    assert phase_code_digest(key) == phase_code_digest(phase)
    assert key.extra_digest(inputs) == phase.extra_digest(inputs)
    assert input_digest(key, inputs, "sha256:before") == input_digest(
        phase, inputs, "sha256:before"
    )


def test_the_registry_a_key_digests_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs = _inputs(tmp_path, b"x")
    embedded = load_key("registration").extra_digest(inputs)
    monkeypatch.setenv("NEO4J_URI", "bolt://graph.example:7687")
    remote = load_key("registration").extra_digest(inputs)
    assert remote != embedded
    assert remote == load_phase("registration").extra_digest(inputs)


def test_a_keys_code_digest_covers_its_phase_module_and_templates_count(tmp_path: Path) -> None:
    for name in PHASE_NAMES:
        key = load_key(name)
        files = code_files(ROOT, [key.code_module], key.code_packages)
        assert ROOT / "builder" / "phases" / f"{name}.py" in files
    codegen = load_key("code_generation").extra_digest(_inputs(tmp_path, b"x"))
    out = load_key("code_generation").extra_digest(_inputs(tmp_path, b"x", out_dir="elsewhere"))
    assert codegen != out
