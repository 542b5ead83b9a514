"""Phase 2: type inference, model choice, instructions, serialisation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from agno.models.utils import MODEL_PROVIDER_CLASSES
from phase_factories import body_with_sections, phase_input, skill

from builder.phases import architecture
from builder.phases.architecture import (
    PHASE,
    decide_type,
    resolve_model,
    split_body,
    supported_providers,
)
from builder.pipeline.errors import ArchitectureError
from builder.pipeline.serial import dump_yaml, from_plain, load_yaml, to_plain
from builder.skill.model import Section, StepSpec, SubAgentSpec
from builder.skill.spec import AgentSpec

RULES = [
    # (case, changes, expected type, expected rule)
    (
        "explicit wins over evidence",
        dict(
            type="guided",
            steps=(StepSpec("ask"),),
            sub_agents=(SubAgentSpec("A", "a"), SubAgentSpec("B", "b")),
        ),
        "guided",
        "explicit",
    ),
    (
        "sub-agents",
        dict(sub_agents=(SubAgentSpec("White", "facts"), SubAgentSpec("Red", "feelings"))),
        "collaborative",
        "sub_agents",
    ),
    (
        # A team of nobody cannot run: the section stays instruction text.
        "perspectives section without parsed members",
        dict(sections=(Section("perspectives", "Perspectives", 2, 6, "x"),)),
        "operator",
        "default",
    ),
    (
        "one sub-agent is no team",
        dict(sub_agents=(SubAgentSpec("Solo", "alone"),)),
        "operator",
        "default",
    ),
    (
        "steps waiting for user",
        dict(steps=(StepSpec("one"), StepSpec("two", waits_for_user=True))),
        "guided",
        "waits_for_user",
    ),
    (
        # Numbered steps in the body are one agent's procedure, never a pipeline by inference.
        "ordered steps from the body",
        dict(steps=(StepSpec("clarify"), StepSpec("analyze"))),
        "operator",
        "default",
    ),
    (
        "phases declared in the front matter",
        dict(steps=(StepSpec("clarify"), StepSpec("analyze")), field_lines={"phases": 4}),
        "pipeline",
        "declared_phases",
    ),
    (
        "a gate on the user between steps",
        dict(body="1. Draft the plan.\n2. Wait for the user's approval.\n3. Build it.\n"),
        "guided",
        "user_gate",
    ),
    (
        "a gate only in an exception",
        dict(body="1. Draft the plan.\n2. If anything is unclear, wait for the user's answer.\n"),
        "operator",
        "default",
    ),
    (
        # A workflow of no steps cannot run (it crashed phase 6 once): not inferred.
        "phases section without parsed steps",
        dict(sections=(Section("phases", "Phases", 2, 6, "x"),)),
        "operator",
        "default",
    ),
    (
        # A rules section is how many task skills are written; it makes no persona.
        "rules, no template",
        dict(behavioral_rules=("Ask, do not tell.",)),
        "operator",
        "default",
    ),
    (
        "persona heading",
        dict(body="# Coach\n\n## Persona\n\nWarm, direct, brief.\n"),
        "role",
        "persona",
    ),
    ("persona in the name", dict(name="coach-personality"), "role", "persona"),
    (
        "rules plus template is an operator",
        dict(
            behavioral_rules=("Be brief.",),
            sections=(Section("output_template", "Output", 2, 6, "x"),),
        ),
        "operator",
        "default",
    ),
    ("nothing special", {}, "operator", "default"),
    (
        "sub-agents beat steps",
        dict(sub_agents=(SubAgentSpec("A", "a"), SubAgentSpec("B", "b")), steps=(StepSpec("s"),)),
        "collaborative",
        "sub_agents",
    ),
]


@pytest.mark.parametrize("case,changes,expected,rule", RULES, ids=[r[0] for r in RULES])
def test_type_inference_rules(case: str, changes: dict, expected: str, rule: str) -> None:
    decision = decide_type(skill(**changes))
    assert (decision.type, decision.rule) == (expected, rule)
    assert decision.reason


def test_an_explicit_guided_skill_without_phases_takes_its_steps_from_its_gates() -> None:
    body = "Draft the plan.\nWait for the user's approval.\nBuild it.\n"
    decision = decide_type(skill(type="guided", body=body, body_line=5, field_lines={"type": 2}))
    assert (decision.type, decision.rule) == ("guided", "explicit")
    assert decision.steps is not None
    assert [(s.waits_for_user, s.question) for s in decision.steps] == [
        (True, "Wait for the user's approval."),
        (False, ""),
    ]
    assert "line 6" in decision.reason


def test_unknown_explicit_type_lists_the_five() -> None:
    d = skill(type="wizard", field_lines={"type": 3})
    with pytest.raises(ArchitectureError) as err:
        decide_type(d)
    assert "operator, role, collaborative, pipeline, guided" in err.value.message
    assert err.value.location.line == 3


@pytest.mark.parametrize(
    "agent_type, changes, fragment",
    [
        ("pipeline", {}, "needs at least one step"),
        ("guided", {}, "needs at least one step"),
        ("collaborative", {}, "needs at least two sub-agents, found 0"),
        ("collaborative", dict(sub_agents=(SubAgentSpec("A", "a"),)), "found 1"),
    ],
)
def test_explicit_type_without_its_structure_is_a_located_error(
    agent_type: str, changes: dict, fragment: str
) -> None:
    d = skill(type=agent_type, field_lines={"metadata.mindrian.type": 9}, **changes)
    with pytest.raises(ArchitectureError) as err:
        PHASE.run(phase_input({"skill_analysis": d}))
    assert err.value.code == "A007"
    assert fragment in err.value.message
    assert err.value.location.line == 9


def test_providers_come_from_agno_resolver() -> None:
    assert set(supported_providers()) == set(MODEL_PROVIDER_CLASSES)
    assert resolve_model("anthropic:claude-sonnet-4-5", location=None) == (
        "anthropic",
        "claude-sonnet-4-5",
    )
    # Agno's alias for Azure OpenAI resolves to its provider key.
    assert resolve_model("Azure:gpt-4o", location=None) == ("azure-openai", "gpt-4o")


@pytest.mark.parametrize(
    "model,code,fragment",
    [
        ("acme:brain-9000", "A004", "unknown model provider 'acme'"),
        ("claude-sonnet", "A003", "provider:model_id"),
        ("openai:", "A003", "provider:model_id"),
    ],
)
def test_bad_model_string_points_at_model_line(model: str, code: str, fragment: str) -> None:
    d = skill(model=model, field_lines={"model": 7})
    with pytest.raises(ArchitectureError) as err:
        PHASE.run(phase_input({"skill_analysis": d}))
    assert err.value.code == code
    assert fragment in err.value.message
    assert (err.value.location.path, err.value.location.line) == (
        "skills/sample/SKILL.md",
        7,
    )
    assert "skills/sample/SKILL.md:7: error[" in err.value.render()


def test_model_from_skill_and_from_config() -> None:
    explicit = PHASE.run(phase_input({"skill_analysis": skill(model="openai:gpt-4o")})).output.model
    assert (explicit.provider, explicit.model_id, explicit.string, explicit.source) == (
        "openai",
        "gpt-4o",
        "openai:gpt-4o",
        "skill",
    )
    models = {"operator": "groq:llama-3.3-70b", "role": "x:y"}
    configured = PHASE.run(phase_input({"skill_analysis": skill()}, models=models)).output.model
    assert (configured.string, configured.source) == ("groq:llama-3.3-70b", "config")


def test_bad_config_default_points_at_pyproject() -> None:
    d = skill(type="role", behavioral_rules=("Ask questions.",))
    with pytest.raises(ArchitectureError) as err:
        PHASE.run(phase_input({"skill_analysis": d}, models={"role": "nowhere:model"}))
    assert err.value.location.path == "pyproject.toml"


@pytest.mark.parametrize(
    "changes,temperature,thinking",
    [
        ({}, 0.3, None),
        (dict(type="role", behavioral_rules=("Ask.",)), 0.7, None),
        (dict(sub_agents=(SubAgentSpec("A", "a"), SubAgentSpec("B", "b"))), None, 8000),
        (dict(type="pipeline", steps=(StepSpec("a"),)), None, 4000),
    ],
)
def test_generation_settings_by_type(
    changes: dict, temperature: float | None, thinking: int | None
) -> None:
    model = PHASE.run(phase_input({"skill_analysis": skill(**changes)})).output.model
    assert (model.temperature, model.thinking_budget) == (temperature, thinking)
    if thinking:
        assert model.max_tokens > thinking  # Anthropic requires room beyond the thinking budget


BODY = """Intro line before any heading.

## Methodology
Step one: listen.
### Detail
Nested detail stays with methodology.

## Something Else
Free text the phase does not know.

## Output Template
| field | value |

## Behavioral Rules
- Never lecture.
"""


def _sectioned() -> object:
    sections = body_with_sections(
        BODY,
        4,
        {
            "Methodology": "methodology",
            "Output Template": "output_template",
            "Behavioral Rules": "behavioral_rules",
        },
    )
    return skill(body=BODY, body_line=4, sections=sections, behavioral_rules=("Never lecture.",))


def test_split_body_keeps_every_character_in_order() -> None:
    blocks = split_body(_sectioned())
    assert [b.key for b in blocks] == [
        "body",
        "methodology",
        "body",
        "output_template",
        "behavioral_rules",
    ]
    assert "\n".join(b.text for b in blocks).split() == BODY.split()
    assert blocks[1].text.startswith("## Methodology\n") and "Nested detail" in blocks[1].text
    assert blocks[1].line == 6
    assert blocks[2].text.strip().startswith("## Something Else")


def test_instructions_render_every_line_and_elements() -> None:
    from builder.skill.model import Reference

    ref = Reference(
        name="glossary",
        path="references/glossary.md",
        title="Glossary",
        text="# Glossary\nterm",
        digest="d",
    )
    spec = PHASE.run(phase_input({"skill_analysis": replace_refs(_sectioned(), (ref,))})).output
    text = spec.instructions.render_markdown()
    for line in BODY.splitlines():
        if line.strip():
            assert line.strip() in text
    assert spec.instructions.section("methodology").startswith("## Methodology")
    assert spec.instructions.elements[0].name == "glossary"
    assert "`glossary`: Glossary" in text
    assert text.startswith("You are Sample Skill, a Mindrian operator agent.")


def replace_refs(d, refs):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    return replace(d, references=refs)


def test_body_without_sections_is_one_block() -> None:
    spec = PHASE.run(phase_input({"skill_analysis": skill(body="# Title\n\nAll of it.\n")})).output
    assert [(b.key, b.text) for b in spec.instructions.blocks] == [
        ("body", "# Title\n\nAll of it.\n")
    ]


def test_spec_round_trips_and_is_deterministic() -> None:
    d = _sectioned()
    first = PHASE.run(phase_input({"skill_analysis": d}))
    second = PHASE.run(phase_input({"skill_analysis": d}))
    text = dump_yaml(to_plain(first.output))
    assert text == dump_yaml(to_plain(second.output))
    rebuilt = from_plain(AgentSpec, load_yaml(text))
    assert rebuilt == first.output
    assert [c.name for c in first.checks] == list(PHASE.checks)
    assert all(c.passed for c in first.checks)
    # Its rules section makes no persona: one agent, by the default rule.
    assert first.checks[0].reason.startswith("type operator (default): ")


def test_bad_provider_in_a_real_skill_file_points_at_its_line(tmp_path: Path) -> None:
    from phase_factories import analyse

    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "SKILL.md").write_text(
        "---\nname: odd\ndescription: Uses a model nobody sells.\nmodel: acme:brain-9000\n---\n\n"
        "Body.\n",
        encoding="utf-8",
    )
    definition = analyse("odd/SKILL.md", root=str(tmp_path))
    with pytest.raises(ArchitectureError) as err:
        PHASE.run(phase_input({"skill_analysis": definition}))
    assert err.value.render().startswith(
        "odd/SKILL.md:4: error[A004]: unknown model provider 'acme'"
    )


def _refuse_to_ask(text: str, wanted: object) -> None:
    raise AssertionError(f"Agno was asked about {text!r} although the answer was cached")


def test_a_cached_model_answer_gives_the_same_spec_without_asking_agno(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path))
    d = skill(model="anthropic:claude-sonnet-4-5")
    cold = dump_yaml(to_plain(PHASE.run(phase_input({"skill_analysis": d})).output))
    assert len(list((tmp_path / "model-check").iterdir())) == 1
    monkeypatch.setattr(architecture, "_ask_agno", _refuse_to_ask)
    warm = dump_yaml(to_plain(PHASE.run(phase_input({"skill_analysis": d})).output))
    assert warm == cold


def test_a_cached_refusal_is_the_same_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path))
    d = skill(model="anthropic:claude-3-haiku-20240307", field_lines={"model": 7})
    d = replace(
        d, type="collaborative", sub_agents=(SubAgentSpec("A", "a"), SubAgentSpec("B", "b"))
    )
    with pytest.raises(ArchitectureError) as cold:
        PHASE.run(phase_input({"skill_analysis": d}))
    monkeypatch.setattr(architecture, "_ask_agno", _refuse_to_ask)
    with pytest.raises(ArchitectureError) as warm:
        PHASE.run(phase_input({"skill_analysis": d}))
    assert cold.value.code == "A006"
    assert warm.value.render() == cold.value.render()


def test_an_answer_that_could_not_inspect_the_provider_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path))
    spec = PHASE.run(phase_input({"skill_analysis": skill(model="mistral:mistral-large")}))
    assert any("not checked" in w for w in spec.warnings)
    assert not (tmp_path / "model-check").exists()


def test_another_agno_version_asks_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path))
    d = skill(model="anthropic:claude-sonnet-4-5")
    PHASE.run(phase_input({"skill_analysis": d}))
    monkeypatch.setattr(architecture, "installed_version", lambda name: "999.0")
    PHASE.run(phase_input({"skill_analysis": d}))
    assert len(list((tmp_path / "model-check").iterdir())) == 2


def test_each_inferred_decision_cites_the_line_it_came_from() -> None:
    steps = (StepSpec("clarify", line=9), StepSpec("analyze", line=11))
    assert "(from line 9)" in decide_type(skill(steps=steps)).reason
    team = (SubAgentSpec("White", "facts", 7), SubAgentSpec("Red", "feelings", 8))
    assert "(from line 7)" in decide_type(skill(sub_agents=team)).reason
    waiting = (StepSpec("ask", waits_for_user=True, line=12),)
    assert "(from line 12)" in decide_type(skill(steps=waiting)).reason
