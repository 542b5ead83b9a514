"""Phase 1 (skill_analysis): parsing, normalisation, sections, golden outputs, determinism."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from golden_files import Golden

from builder.phases.outputs import Outputs
from builder.phases.skill_analysis import PHASE, analyse
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import Phase, PhaseInput, SkillSource
from builder.pipeline.errors import SkillError
from builder.pipeline.serial import dump_yaml, from_plain, to_plain
from builder.skill.model import (
    ChainTarget,
    FieldSpec,
    ScoreBand,
    SkillDefinition,
    StepSpec,
    SubAgentSpec,
    python_identifier,
    skill_id,
)
from builder.skill.source import load_source, source_digest

REPO = Path(__file__).resolve().parents[3]
GOLDEN = Path(__file__).resolve().parent.parent / "fixtures" / "phase1"
# A name the Agent Skills specification accepts for skills/sample/: no W106/W107 in the way.
HEAD = "name: sample\ndescription: Does one thing well.\n"


def source(
    text: str | bytes,
    files: tuple[tuple[str, bytes], ...] = (),
    path: str = "skills/sample/SKILL.md",
) -> SkillSource:
    """A SkillSource for SKILL.md text (and folder files), digest computed as load_source does."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return SkillSource(path=path, data=data, files=files, digest=source_digest(data, files))


def skill(front: str = "", body: str = "\nBody.\n", head: str = HEAD) -> str:
    """SKILL.md text with the sample name/description plus extra front-matter lines."""
    return f"---\n{head}{front}---\n{body}"


def definition(front: str = "", body: str = "\nBody.\n", head: str = HEAD) -> SkillDefinition:
    return analyse(source(skill(front, body, head))).output


# --- the phase object ------------------------------------------------------------------------


def test_phase_satisfies_the_runner_contract() -> None:
    phase: Phase[Outputs, SkillDefinition] = PHASE
    assert (phase.name, phase.number, phase.checks, phase.output_type) == (
        "skill_analysis",
        1,
        ("within_limits", "valid_yaml", "required_fields"),
        SkillDefinition,
    )
    inputs = PhaseInput(source=source(skill()), config=BuildConfig(), previous=Outputs())
    result = phase.run(inputs)
    assert result.output == analyse(inputs.source).output
    assert [c.name for c in result.checks] == ["within_limits", "valid_yaml", "required_fields"]
    assert all(c.passed for c in result.checks)
    assert result.checks[0].reason.startswith("SKILL.md ")
    assert result.checks[1].reason.startswith("front matter parsed: 2 keys")
    assert result.checks[2].reason.startswith("name and description present; schema satisfied")


def test_run_reads_only_the_source_not_previous_outputs_or_disk() -> None:
    inputs = PhaseInput(
        source=source(skill(), path="does/not/exist/SKILL.md"),
        config=BuildConfig(root="/nonexistent"),
        previous=Outputs(skill=lambda: pytest.fail("phase 1 read an earlier output")),
    )
    assert PHASE.run(inputs).output.source_path == "does/not/exist/SKILL.md"


# --- parser table ----------------------------------------------------------------------------

PARSER_TABLE: list[tuple[str, str, dict[str, Any]]] = [
    (
        "defaults",
        "",
        {
            "type": None,
            "version": "0.1.0",
            # Inferred from name and description ("Does one thing well."): no stop-words.
            "triggers": ("sample", "well"),
            "handoff": None,
            "body_line": 5,
        },
    ),
    ("type any case", "type: PiPeLiNe\n", {"type": "pipeline"}),
    ("version float kept as written", "version: 1.10\n", {"version": "1.10"}),
    ("version int", "version: 2\n", {"version": "2"}),
    ("version string", "version: '1.0.0'\n", {"version": "1.0.0"}),
    ("triggers list", "triggers: [scqa, 'pyramid']\n", {"triggers": ("scqa", "pyramid")}),
    ("triggers comma string", "triggers: scqa, pyramid ,\n", {"triggers": ("scqa", "pyramid")}),
    ("allowed-tools list", "allowed-tools: [Read, Write]\n", {"allowed_tools": ("Read", "Write")}),
    (
        "allowed-tools spaces",
        "allowed-tools: Read Bash(git add:*) Grep\n",
        {"allowed_tools": ("Read", "Bash(git add:*)", "Grep")},
    ),
    (
        "allowed-tools commas",
        "allowed-tools: Read, Bash(git log:*)\n",
        {"allowed_tools": ("Read", "Bash(git log:*)")},
    ),
    (
        "inputs mixed forms",
        "inputs:\n  - idea\n  - {name: team, description: who, required: true}\n",
        {"inputs": (FieldSpec("idea"), FieldSpec("team", "who", True))},
    ),
    (
        "chains_to normalised with lines",
        "chains_to:\n  - Devil Advocate\n  - {target: JTBD, weight: 0.5}\n",
        {"chains_to": (ChainTarget("devil-advocate", None, 5), ChainTarget("jtbd", 0.5, 6))},
    ),
    ("chaining alias", "chaining: [jtbd]\n", {"chains_to": (ChainTarget("jtbd", None, 4),)}),
    (
        "steps from strings",
        "phases: [clarify, analyse]\n",
        {"steps": (StepSpec("clarify", line=4), StepSpec("analyse", line=4))},
    ),
    (
        "guided steps wait by default",
        "type: guided\nphases:\n  - ask\n  - {name: check, waits_for_user: false}\n",
        {"steps": (StepSpec("ask", "", True, 6), StepSpec("check", "", False, 7))},
    ),
    (
        "sub_agents",
        "sub_agents:\n  - {name: White Hat, instructions: Facts only.}\n",
        {"sub_agents": (SubAgentSpec("White Hat", "Facts only.", 5),)},
    ),
    (
        "bands sorted highest first",
        "scores:\n  bands:\n    - {label: LOW, min: 0, max: 4}\n    - {label: HIGH, min: 5, max: "
        "10}\n",
        {"score_bands": (ScoreBand("HIGH", 5.0, 10.0), ScoreBand("LOW", 0.0, 4.0))},
    ),
    (
        "model and tone",
        "model: anthropic:claude-sonnet-4-5\ntone: direct, warm\n",
        {"model": "anthropic:claude-sonnet-4-5", "tone": "direct, warm"},
    ),
    (
        "license and compatibility",
        "license: MIT\ncompatibility: Python 3.11\n",
        {"license": "MIT", "compatibility": "Python 3.11"},
    ),
    ("date stays text", "reviewed: 2024-01-31\n", {"metadata": {"reviewed": "2024-01-31"}}),
    ("yes stays text (YAML 1.2)", "answer: yes\n", {"metadata": {"answer": "yes"}}),
    (
        "merge key",
        "base: &base {a: 1, b: 2}\nderived:\n  <<: *base\n  b: 3\n",
        {"metadata": {"base": {"a": 1, "b": 2}, "derived": {"b": 3, "a": 1}}},
    ),
    ("empty body", "", {"body": "", "body_line": 5}),
]


@pytest.mark.parametrize(
    "front, expected", [(f, e) for _, f, e in PARSER_TABLE], ids=[n for n, _, _ in PARSER_TABLE]
)
def test_parser_table(front: str, expected: dict[str, Any]) -> None:
    body = "" if expected.get("body") == "" else "\nBody.\n"
    result = definition(front, body)
    for field, value in expected.items():
        assert getattr(result, field) == value, field


def test_top_level_wins_over_metadata_mindrian_with_a_warning() -> None:
    text = skill("type: role\nmetadata:\n  mindrian:\n    type: guided\n    tone: calm\n")
    result = analyse(source(text))
    assert result.output.type == "role"
    assert result.output.tone == "calm"  # only nested: still used
    assert result.warnings == (
        "skills/sample/SKILL.md:7:5: warning[W124]: metadata.mindrian.type is ignored: "
        "type (line 4) is set at the top level and wins",
    )
    assert result.output.field_lines["metadata.mindrian.type"] == 7


def test_unknown_keys_are_kept_as_metadata_with_a_hint() -> None:
    text = skill("trigers: [a]\nmetadata:\n  author: me\n  mindrian:\n    extra: 1\n")
    result = analyse(source(text))
    assert result.output.metadata == {"author": "me", "mindrian": {"extra": 1}, "trigers": ["a"]}
    assert result.output.triggers == ("sample", "well")  # inferred: a typo sets none
    assert result.warnings == (
        "skills/sample/SKILL.md:4:1: warning[W123]: unknown front-matter key 'trigers' is kept "
        "as metadata (did you mean 'triggers'?)",
    )


def test_handoff_block_is_parsed_with_normalised_agent_ids() -> None:
    front = (
        "handoff:\n  receives: [problem_clarity]\n  returns: [output, scores]\n  min_clarity: 0.6\n"
        "  can_delegate_to: [Minto Pyramid]\n  default_return_to: Larry\n  return_behavior: "
        "synthesize\n"
    )
    handoff = definition(front).handoff
    assert handoff is not None
    assert (handoff.receives, handoff.returns, handoff.min_clarity) == (
        ("problem_clarity",),
        ("output", "scores"),
        0.6,
    )
    assert (handoff.can_delegate_to, handoff.default_return_to, handoff.return_behavior) == (
        ("minto-pyramid",),
        "larry",
        "synthesize",
    )
    assert handoff.line == 4


def test_tools_in_both_spellings() -> None:
    via_mcp_tools = definition("mcp_tools:\n  - {server: neo4j, tools: [read_neo4j_cypher]}\n")
    via_tools = definition(
        "tools:\n  mcp_servers:\n    - {server: neo4j, tools: [read_neo4j_cypher], required: "
        "false}\n"
    )
    assert [(s.server, s.tools, s.required, s.line) for s in via_mcp_tools.mcp_servers] == [
        ("neo4j", ("read_neo4j_cypher",), True, 5)
    ]
    assert [(s.server, s.required, s.line) for s in via_tools.mcp_servers] == [("neo4j", False, 6)]


WARNINGS = [
    (
        "long description",
        "",
        "x" * 1025,
        "skills/sample/SKILL.md:3:1: warning[W105]: description is 1025 characters; the Agent "
        "Skills format allows 1024, so other hosts may refuse the skill",
    ),
    (
        "bands miss part of the total",
        "scores:\n  dimensions: [{name: a, max: 10}, {name: b, max: 10}]\n  bands: [{label: OK, "
        "min: 5, max: 20}]\n",
        "d",
        "skills/sample/SKILL.md:6:3: warning[W125]: score bands cover 5–20 but the dimensions "
        "add up to 0–20; some totals get no verdict",
    ),
]


@pytest.mark.parametrize(
    "front, description, warning", [w[1:] for w in WARNINGS], ids=[w[0] for w in WARNINGS]
)
def test_warnings(front: str, description: str, warning: str) -> None:
    result = analyse(source(skill(front, head=f"name: sample\ndescription: {description}\n")))
    assert result.warnings == (warning,)


def test_schema_is_valid_draft_2020_12() -> None:
    from jsonschema import Draft202012Validator

    from builder.phases.skill_analysis import MINDRIAN_KEYS, skill_schema

    schema = skill_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schema["$defs"]["mindrian"]["properties"]) == set(MINDRIAN_KEYS)


# --- names -----------------------------------------------------------------------------------

NAMES = [
    ("PWS Validation", "pws-validation", "pws_validation"),
    ("  Larry (The Clarifier)!  ", "larry-the-clarifier", "larry_the_clarifier"),
    ("Café Crème", "cafe-creme", "cafe_creme"),
    ("3D Render", "3d-render", "skill_3d_render"),
    ("class", "class", "class_"),
    ("match", "match", "match_"),
    ("type", "type", "type_"),
    ("list", "list", "list_"),
    ("json", "json", "json_"),
    ("mindrian", "mindrian", "mindrian_"),
    ("de_bono__hats", "de-bono-hats", "de_bono_hats"),
]


@pytest.mark.parametrize("name, expected_id, expected_identifier", NAMES)
def test_name_normalisation(name: str, expected_id: str, expected_identifier: str) -> None:
    assert skill_id(name) == expected_id
    assert python_identifier(expected_id) == expected_identifier
    assert python_identifier(expected_id).isidentifier()
    result = definition(head=f"name: '{name}'\ndescription: d\n")
    assert (result.id, result.identifier, result.name) == (expected_id, expected_identifier, name)


def test_frozen_reserved_names_cover_this_python() -> None:
    import builtins
    import keyword
    import re

    from builder.skill.model import RESERVED_IDENTIFIERS

    current = [*keyword.kwlist, *keyword.softkwlist, *dir(builtins), *sys.stdlib_module_names]
    missing = sorted(
        n for n in current if re.fullmatch(r"[a-z][a-z0-9_]*", n) and n not in RESERVED_IDENTIFIERS
    )
    assert missing == []


# --- body ------------------------------------------------------------------------------------


def test_sections_found_by_synonym_outside_code_with_subsections_verbatim() -> None:
    body = (
        "\n## 1. The Process: overview\n\nDo it.\n\n### Detail\nKept.\n\n"
        "```\n## Examples\n```\n\n~~~~\n# Steps\n~~~~\n\n## Output Format (markdown)\n\nA table.\n"
        "## **Success Criteria**\n- ok\n    ## Examples\n"
    )
    result = definition(body=body)
    assert [(s.key, s.heading, s.level, s.line) for s in result.sections] == [
        ("methodology", "1. The Process: overview", 2, 6),
        ("output_template", "Output Format (markdown)", 2, 21),
        ("quality_criteria", "**Success Criteria**", 2, 24),
    ]
    methodology = result.section("methodology")
    assert methodology is not None
    assert (
        methodology.text
        == "Do it.\n\n### Detail\nKept.\n\n```\n## Examples\n```\n\n~~~~\n# Steps\n~~~~"
    )
    assert result.section("quality_criteria").text == "- ok\n    ## Examples"


def test_every_synonym_is_recognised() -> None:
    from builder.skill.body import SECTION_SYNONYMS

    headings = [
        (key, synonym) for key, synonyms in SECTION_SYNONYMS.items() for synonym in synonyms
    ]
    body = "".join(
        f"\n## {synonym.title()}\n\ntext {i}\n" for i, (_, synonym) in enumerate(headings)
    )
    assert [s.key for s in definition(body=body).sections] == [key for key, _ in headings]


def test_steps_and_sub_agents_from_the_body_when_front_matter_has_none() -> None:
    body = (
        "\n## Workflow\n\n1. **Gather**: collect notes\n2. Rank - order by impact\n   then cut.\n"
        "3. Report\n\n"
        "## Hats\n\n- **White**: facts\n- Red: feelings\n"
    )
    result = definition(body=body)
    assert result.steps == (
        StepSpec("Gather", "collect notes", False, 8),
        StepSpec("Rank", "order by impact\nthen cut.", False, 9),
        StepSpec("Report", "", False, 11),
    )
    assert result.sub_agents == (
        SubAgentSpec("White", "facts", 15),
        SubAgentSpec("Red", "feelings", 16),
    )


def test_front_matter_steps_win_over_the_body() -> None:
    result = definition("phases: [one]\n", body="\n## Steps\n\n1. two\n")
    assert [s.name for s in result.steps] == ["one"]


def test_rules_from_front_matter_then_section() -> None:
    body = (
        "\n## Guidelines\n\n- Be brief.\n  Really brief.\n\n  Still this rule.\n- Ask first.\n\n"
        "Closing paragraph.\n"
    )
    result = definition("behavioral_rules: [Never lie.]\n", body=body)
    assert result.behavioral_rules == (
        "Never lie.",
        "Be brief.\nReally brief.\nStill this rule.",
        "Ask first.",
    )


def test_crlf_and_bom_input_keep_the_body_verbatim() -> None:
    text = (
        "\ufeff---\r\nname: Windows\r\ndescription: CRLF\r\n---\r\n\r\n## Steps\r\n\r\n1. One: "
        "first\r\n"
    )
    result = analyse(source(text)).output
    assert result.name == "Windows"
    assert result.body == "\r\n## Steps\r\n\r\n1. One: first\r\n"
    assert result.body_line == 5
    assert result.steps == (StepSpec("One", "first", False, 8),)


# --- adversarial text stays data ---------------------------------------------------------------

ADVERSARIAL = [
    "{{ config.__class__ }}",
    "{% for x in y %}{% endfor %}",
    "C:\\Users\\name\\file.txt",
    "\\\\server\\share",
    "say \"hi\" and 'bye'",
    "{braces} [brackets]",
    "ünïcödé 日本語 🚀 \u200b",
    "'); DROP TABLE x; --",
    "MATCH (n) DETACH DELETE n",
    "line one\nline two",
]


@pytest.mark.parametrize("text", ADVERSARIAL)
def test_adversarial_text_is_kept_verbatim(text: str) -> None:
    import json

    quoted = json.dumps(text, ensure_ascii=False)  # a valid YAML double-quoted scalar
    front = f"tone: {quoted}\nbehavioral_rules: [{quoted}]\ntriggers: [{quoted}]\nextra: {quoted}\n"
    body = f"\n{text}\n"
    result = definition(front, body, head=f"name: Sample\ndescription: {quoted}\n")
    assert result.description == text
    assert result.tone == text
    assert result.behavioral_rules == (text,)
    assert result.triggers == (text,)
    assert result.metadata["extra"] == text
    assert result.body == body
    assert from_plain(SkillDefinition, to_plain(result)) == result


def test_adversarial_golden_fixture_round_trips_through_yaml() -> None:
    path = GOLDEN / "adversarial" / "SKILL.md"
    result = analyse(load_source(path)).output
    assert (
        "{{ self.__init__ }}" in result.description
        and "C:\\Users\\name\\file.txt" in result.description
    )
    assert result.metadata["path"] == "\\\\server\\share"
    from builder.pipeline.serial import load_yaml

    assert from_plain(SkillDefinition, load_yaml(dump_yaml(to_plain(result)))) == result


# --- folder files -------------------------------------------------------------------------------


def test_references_and_scripts_from_the_folder() -> None:
    files = (
        ("references/Pricing Guide.md", b"intro\n```\n# not a title\n```\n## Real Title\n"),
        ("references/data.json", b"{}"),
        ("scripts/run.py", b"print(1)\n"),
        ("scripts/tool.ts", b"x"),
    )
    result = analyse(source(skill(), files)).output
    assert [(r.name, r.path, r.title) for r in result.references] == [
        ("pricing-guide", "references/Pricing Guide.md", "Real Title")
    ]
    assert result.references[0].text == files[0][1].decode()
    assert [(s.path, s.language) for s in result.scripts] == [
        ("scripts/run.py", "python"),
        ("scripts/tool.ts", "other"),
    ]


def test_load_source_accepts_file_or_folder_and_skips_hidden_files(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    (folder / "references").mkdir(parents=True)
    (folder / "scripts" / "__pycache__").mkdir(parents=True)
    (folder / "assets").mkdir()
    (folder / "SKILL.md").write_text(skill())
    (folder / "references" / "b.md").write_text("# B\n")
    (folder / "references" / "a.md").write_text("# A\n")
    (folder / "references" / ".DS_Store").write_bytes(b"\x00junk")
    (folder / "scripts" / "__pycache__" / "x.pyc").write_bytes(b"\x00")
    (folder / "assets" / "logo.txt").write_text("travels with the skill")
    (folder / "assets" / ".hidden").write_text("ignored")
    by_folder = load_source(folder, display="skills/demo")
    by_file = load_source(folder / "SKILL.md", display="skills/demo/SKILL.md")
    assert by_folder == by_file
    assert by_folder.path == "skills/demo/SKILL.md"
    assert [name for name, _ in by_folder.files] == [
        "assets/logo.txt",
        "references/a.md",
        "references/b.md",
    ]
    assert load_source(folder).path == f"{folder.as_posix()}/SKILL.md"
    (folder / "references" / "a.md").write_text("# A changed\n")
    assert load_source(folder).digest != by_folder.digest


def test_digest_separates_names_from_contents() -> None:
    assert source_digest(b"x", (("a", b"bc"),)) != source_digest(b"x", (("ab", b"c"),))
    assert source_digest(b"x", ()) != source_digest(b"x", (("a", b""),))


# --- PWS skill -------------------------------------------------------------------------------


def test_pws_skill_is_a_complete_operator() -> None:
    result = analyse(load_source(REPO / "skills" / "pws" / "SKILL.md", "skills/pws/SKILL.md"))
    d = result.output
    assert result.warnings == ()
    assert (d.id, d.identifier, d.type) == ("pws-validation", "pws_validation", "operator")
    assert [(s.name, s.minimum, s.maximum) for s in d.scores] == [
        (n, 0.0, 25.0) for n in ("problem", "solution", "business", "people")
    ]
    assert [c.target for c in d.chains_to] == ["devil-advocate", "jtbd"]
    assert all(c.weight is not None for c in d.chains_to)
    assert d.handoff is not None
    assert {
        "key_findings",
        "recommendations",
        "scores",
        "confidence",
        "suggested_next_agents",
    } <= set(d.handoff.returns)
    assert [s.key for s in d.sections] == ["methodology", "output_template", "quality_criteria"]
    methodology = d.section("methodology").text
    assert all(
        f"### {pillar} (0-25)" in methodology
        for pillar in ("Problem", "Solution", "Business", "People")
    )


def verdict(d: SkillDefinition, total: float) -> str:
    return next(b.label for b in d.score_bands if b.minimum <= total <= b.maximum)


def test_pws_bands_agree_with_the_seed_examples() -> None:
    d = analyse(load_source(REPO / "skills" / "pws" / "SKILL.md")).output
    # Seed 001: a 76/100 is a PIVOT, and 22 + 18 + 20 + 12 = 72 is reported as a PIVOT.
    assert verdict(d, 76) == "PIVOT"
    assert verdict(d, 22 + 18 + 20 + 12) == "PIVOT"
    assert [verdict(d, t) for t in (0, 59, 60, 79, 80, 100)] == [
        "NO-GO",
        "NO-GO",
        "PIVOT",
        "PIVOT",
        "GO",
        "GO",
    ]
    assert sum(s.maximum for s in d.scores) == d.score_bands[0].maximum == 100


# --- golden fixtures -------------------------------------------------------------------------

CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "SKILL.md").is_file())


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, golden: Golden) -> None:
    skill_md = GOLDEN / case / "SKILL.md"
    display = skill_md.relative_to(REPO).as_posix()
    actual = dump_yaml(to_plain(analyse(load_source(skill_md, display)).output))
    golden.check(GOLDEN / case / "expected.yaml", actual)


def test_golden_cases_exist() -> None:
    assert {"minimal", "full_operator", "nested_mindrian", "body_sections", "adversarial"} <= set(
        CASES
    )


# --- determinism -----------------------------------------------------------------------------


def test_two_runs_are_byte_identical() -> None:
    path = GOLDEN / "full_operator"
    first = dump_yaml(to_plain(analyse(load_source(path)).output))
    second = dump_yaml(to_plain(analyse(load_source(path)).output))
    assert first == second


def test_output_does_not_depend_on_hash_seed() -> None:
    script = (
        "import sys; from pathlib import Path\n"
        "from builder.skill.source import load_source\nfrom builder.phases.skill_analysis import "
        "analyse\n"
        "from builder.pipeline.serial import dump_yaml, to_plain\n"
        "r = analyse(load_source(Path(sys.argv[1]), 'x/SKILL.md'))\n"
        "sys.stdout.write(dump_yaml(to_plain(r.output)) + repr(r.warnings))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script, str(GOLDEN / "nested_mindrian")],
            env={**os.environ, "PYTHONHASHSEED": seed},
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1


def test_definition_survives_a_checkpoint_round_trip() -> None:
    d = analyse(load_source(GOLDEN / "full_operator")).output
    assert from_plain(SkillDefinition, to_plain(d)) == d


def test_skill_error_is_raised_not_returned() -> None:
    with pytest.raises(SkillError):
        PHASE.run(
            PhaseInput(source=source("no front matter"), config=BuildConfig(), previous=Outputs())
        )


# --- standard skills: inferred triggers, foreign types -----------------------------------------


def test_triggers_are_inferred_with_field_and_line_when_none_are_set() -> None:
    head = (
        "name: pdf-tools\n"
        "description: Fills forms. Use when the user asks to merge 'PDF portfolios'.\n"
        "when_to_use: Splitting scanned invoices\n"
        "tags: [ocr]\n"
    )
    result = analyse(source(skill(head=head)))
    d = result.output
    # Name first, then tags, when_to_use, quoted phrases and the clause after the cue.
    assert d.triggers[:9] == (
        "pdf", "tool", "ocr", "splitting", "scanned", "invoice", "portfolio", "merge", "fill"
    )  # fmt: skip
    provenance = {t.value: (t.field, t.line) for t in d.inferred_triggers}
    assert provenance["tool"] == ("name", 2)
    assert provenance["ocr"] == ("tags", 5)
    assert provenance["invoice"] == ("when_to_use", 4)
    assert provenance["merge"] == ("description", 3)
    assert d.decisions[0].startswith("triggers inferred (the skill sets none): pdf (name, line 2)")
    # Words about invoking a skill select every skill alike: never triggers.
    assert not {"user", "ask", "skill"} & set(d.triggers)


def test_explicit_triggers_win_and_nothing_is_inferred() -> None:
    d = definition("metadata:\n  mindrian:\n    triggers: [scqa]\n")
    assert (d.triggers, d.inferred_triggers, d.decisions) == (("scqa",), (), ())


def test_inferred_triggers_are_capped_and_distinct() -> None:
    words = " ".join(f"topic{chr(97 + i)} topic{chr(97 + i)}s" for i in range(20))
    d = definition(head=f"name: wide\ndescription: Use when {words}.\n")
    assert len(d.triggers) == 12 and len(set(d.triggers)) == 12


@pytest.mark.parametrize(
    "spelling, foreign, where",
    [
        ("type: fuzzer\n", "fuzzer", "4:1"),
        ("metadata:\n  mindrian:\n    type: domain\n", "domain", "6:5"),
    ],
)
def test_foreign_type_is_kept_as_metadata_with_a_located_warning(
    spelling: str, foreign: str, where: str
) -> None:
    result = analyse(source(skill(spelling)))
    assert result.output.type is None
    assert result.output.metadata["type"] == foreign
    assert [w for w in result.warnings if "W101" in w] == [
        f"skills/sample/SKILL.md:{where}: warning[W101]: "
        f"type {foreign!r} is not a Mindrian agent type; it is kept as metadata.type and the type "
        "is inferred. To choose one, set metadata.mindrian.type to one of: "
        "operator, role, collaborative, pipeline, guided"
    ]


@pytest.mark.parametrize("typo, nearest", [("operater", "operator"), ("pipe-line", "pipeline")])
def test_a_near_miss_type_is_an_error_with_did_you_mean(typo: str, nearest: str) -> None:
    with pytest.raises(SkillError) as err:
        analyse(source(skill(f"type: {typo}\n")))
    assert err.value.code == "S204"
    assert f"(did you mean {nearest!r}?)" in err.value.message
    assert err.value.location.line == 4


def test_metadata_mindrian_id_overrides_the_id_from_the_name() -> None:
    d = definition("metadata:\n  mindrian:\n    id: Sample Checker\n")
    assert (d.name, d.id, d.identifier) == ("sample", "sample-checker", "sample_checker")
    with pytest.raises(SkillError) as err:
        definition("metadata:\n  mindrian:\n    id: ../escape\n")
    assert (err.value.code, err.value.location.line) == ("S203", 6)


# --- good_for: GOOD_FOR confidence per problem type ---------------------------------------


def test_good_for_rates_problem_types_at_either_spelling() -> None:
    top = definition("problem_types: [market, decision]\ngood_for:\n  market: 0.8\n")
    assert top.good_for == {"market": 0.8}
    nested = definition(
        "metadata:\n  mindrian:\n    problem_types: [market]\n    good_for: {market: 1}\n"
    )
    assert nested.good_for == {"market": 1.0}
    assert definition("problem_types: [market]\n").good_for == {}


def test_good_for_must_rate_a_listed_problem_type_within_zero_and_one() -> None:
    with pytest.raises(SkillError) as stray:
        analyse(source(skill("problem_types: [market]\ngood_for:\n  decision: 0.5\n")))
    assert stray.value.code == "S208"
    assert "good_for rates 'decision', which is not one of the problem_types (market)" in str(
        stray.value
    )
    assert stray.value.location.line == 6  # the "decision:" line
    with pytest.raises(SkillError, match="good_for"):
        analyse(source(skill("problem_types: [market]\ngood_for:\n  market: 1.5\n")))


@pytest.mark.parametrize("alias", ["sonnet", "inherit"])
def test_a_hosts_model_alias_is_kept_as_metadata_with_a_located_warning(alias: str) -> None:
    result = analyse(source(skill(f"model: {alias}\n")))
    assert result.output.model is None
    assert result.output.metadata["model"] == alias
    assert [w for w in result.warnings if "W102" in w] == [
        f"skills/sample/SKILL.md:4:1: warning[W102]: model {alias!r} is not of the form "
        "provider:model_id (another host's alias?); it is kept as metadata.model and the type's "
        "default model is used. To choose one, set metadata.mindrian.model, "
        "e.g. anthropic:claude-sonnet-4-5"
    ]
    assert definition("model: openai:gpt-4o\n").model == "openai:gpt-4o"
