"""``mindrian fmt``: Mindrian fields move under metadata.mindrian; the skill stays the same skill.

Also: every skill of the project, and every fresh ``mindrian new`` folder, passes the
Agent Skills reference validator (``agentskills validate``, package skills-ref).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from build_factories import make_project

from builder.phases.skill_analysis import analyse
from builder.pipeline.contract import SkillSource
from builder.pipeline.serial import to_plain
from builder.skill.fmt import FormatError, format_skill
from builder.skill.model import AGENT_TYPES
from builder.skill.source import load_source

REPO = Path(__file__).resolve().parents[3]

TOP_LEVEL = """\
---
# The skill of a team that wrote Mindrian fields at the top level.
name: pricing-check
description: "Checks a price list: margins, rounding, outliers."
type: operator  # chosen by hand
version: 1.10
triggers: [pricing, 'price list', margins]
license: MIT
inputs:
  - name: prices
    description: The list, one item per line
chains_to: [{target: devil-advocate, weight: 0.5}]
metadata:
  author: finance
  mindrian:
    tone: terse
---

# Pricing check

Body stays verbatim: type: not-a-field
"""

FORMATTED = """\
---
# The skill of a team that wrote Mindrian fields at the top level.
name: pricing-check
description: "Checks a price list: margins, rounding, outliers."
license: MIT
metadata:
  author: finance
  mindrian:
    tone: terse
    type: operator  # chosen by hand
    version: 1.10
    triggers:
      - pricing
      - 'price list'
      - margins
    inputs:
      - name: prices
        description: The list, one item per line
    chains_to:
      - target: devil-advocate
        weight: 0.5
---

# Pricing check

Body stays verbatim: type: not-a-field
"""


def agentskills_validate(folder: Path) -> subprocess.CompletedProcess[str]:
    """The reference validator's command line, from this interpreter's environment."""
    script = Path(sys.executable).parent / "agentskills"
    return subprocess.run(
        [str(script), "validate", str(folder)], capture_output=True, text=True, check=False
    )


def without_positions(value: Any) -> Any:
    """A definition as plain data minus what moving a field changes: lines and the digest."""
    if isinstance(value, dict):
        return {
            k: without_positions(v)
            for k, v in value.items()
            if k not in ("line", "body_line", "field_lines", "source_digest")
        }
    if isinstance(value, list):
        return [without_positions(v) for v in value]
    return re.sub(r"\(line \d+\)", "(line _)", value) if isinstance(value, str) else value


def plain_definition(text: str) -> Any:
    return without_positions(to_plain(analyse(SkillSource("x/SKILL.md", text.encode())).output))


def test_fields_move_under_metadata_mindrian_with_comments_order_and_quotes() -> None:
    formatted, moved = format_skill(TOP_LEVEL)
    assert formatted == FORMATTED
    assert moved == ("type", "version", "triggers", "inputs", "chains_to")


def test_formatting_is_idempotent() -> None:
    assert format_skill(FORMATTED) == (FORMATTED, ())


def test_the_formatted_skill_is_the_same_skill() -> None:
    before, after = plain_definition(TOP_LEVEL), plain_definition(FORMATTED)
    assert after == before
    assert after["version"] == "1.10" and after["triggers"] == ["pricing", "price list", "margins"]


def test_crlf_line_endings_are_kept() -> None:
    formatted, _ = format_skill(TOP_LEVEL.replace("\n", "\r\n"))
    assert formatted == FORMATTED.replace("\n", "\r\n")


def test_a_field_set_twice_is_not_guessed_at() -> None:
    text = (
        "---\nname: a\ndescription: b\ntype: role\nmetadata:\n  mindrian:\n    type: guided\n---\n"
    )
    with pytest.raises(FormatError) as err:
        format_skill(text, "skills/a/SKILL.md")
    assert err.value.render() == (
        "skills/a/SKILL.md:4: error[M001]: type is set here and as metadata.mindrian.type "
        "(line 7); keep one, then run mindrian fmt again"
    )


def test_broken_yaml_is_a_located_error() -> None:
    with pytest.raises(FormatError) as err:
        format_skill("---\nname: a\ndescription: [b\n---\n", "s/SKILL.md")
    assert err.value.code == "M001" and err.value.location.line >= 3


def test_fmt_command_checks_then_writes(cli, tmp_path: Path) -> None:
    project = make_project(tmp_path, {})
    skill = project / "skills" / "pricing-check" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(TOP_LEVEL, encoding="utf-8")
    checked = cli(["fmt", "--check", "skills"], project)
    assert (checked.code, checked.err) == (1, "would reformat skills/pricing-check/SKILL.md\n")
    assert skill.read_text(encoding="utf-8") == TOP_LEVEL
    written = cli(["fmt", "skills"], project)
    assert (written.code, written.err) == (0, "formatted skills/pricing-check/SKILL.md\n")
    assert skill.read_text(encoding="utf-8") == FORMATTED
    assert cli(["fmt", "--check", "skills"], project).code == 0
    assert agentskills_validate(skill.parent).returncode == 0


def test_the_projects_skills_are_formatted(cli) -> None:
    result = cli(["fmt", "--check", "skills"], REPO)
    assert (result.code, result.err) == (0, "")


@pytest.mark.parametrize("folder", sorted((REPO / "skills").iterdir()), ids=lambda p: p.name)
def test_every_project_skill_is_a_valid_agent_skill(folder: Path) -> None:
    result = agentskills_validate(folder)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("agent_type", AGENT_TYPES)
def test_a_new_skill_is_a_valid_agent_skill(cli, tmp_path: Path, agent_type: str) -> None:
    project = make_project(tmp_path, {})
    created = cli(["new", f"fresh-{agent_type}", "--type", agent_type, "--dest", "drafts"], project)
    assert created.code == 0
    folder = project / "drafts" / f"fresh-{agent_type}"
    result = agentskills_validate(folder)
    assert result.returncode == 0, result.stdout + result.stderr
    assert cli(["fmt", "--check", str(folder)], project).code == 0


def test_a_hosts_extra_keys_move_into_metadata_and_mean_the_same() -> None:
    text = (
        "---\nname: a\ndescription: b\nwhen_to_use: ask me  # Claude Code\n"
        "metadata:\n  author: x\n  mindrian:\n    type: role\n---\n"
    )
    formatted, moved = format_skill(text)
    assert moved == ("when_to_use",)
    assert formatted == (
        "---\nname: a\ndescription: b\nmetadata:\n  author: x\n"
        "  when_to_use: ask me  # Claude Code\n  mindrian:\n    type: role\n---\n"
    )
    assert plain_definition(formatted) == plain_definition(text)


# -- chains: CHAIN.md and its stage files ------------------------------------------------

RELAY = REPO / "tests" / "builder" / "fixtures" / "skills" / "chains" / "relay"


def test_fmt_visits_a_chain_and_its_stage_files_in_order(cli, tmp_path: Path) -> None:
    project = make_project(tmp_path, {})
    chain = project / "pipelines" / "relay"
    shutil.copytree(RELAY, chain)
    weigh = chain / "02-weigh.md"
    weigh.write_text(
        weigh.read_text(encoding="utf-8").replace(
            "methodology: score", "methodology: score: 0 to 5"
        ),
        encoding="utf-8",
    )
    before = analyse(load_source(chain, "pipelines/relay")).output
    result = cli(["fmt", "pipelines"], project)
    assert result.code == 0, result.err
    # CHAIN.md first, then its stage files by number (01 and 03 for their `null`s).
    assert result.err.splitlines() == [
        f"formatted pipelines/relay/{name}"
        for name in ("CHAIN.md", "01-gather.md", "02-weigh.md", "03-report.md")
    ]
    text = (chain / "CHAIN.md").read_text(encoding="utf-8")
    # The chain's own keys stay where phase 1 reads them; a host's extras go to metadata.
    assert "\nstages: 3\nmetadata:\n  estimated_time: 20-40min\n" in text
    # A stage file keeps its keys; only the unquoted ': ' is quoted.
    assert '\nmethodology: "score: 0 to 5"\nchain: relay\n' in weigh.read_text(encoding="utf-8")
    after = analyse(load_source(chain, "pipelines/relay")).output
    assert (after.steps, after.display_name, after.metadata) == (
        before.steps,
        before.display_name,
        before.metadata,
    )
    assert cli(["fmt", "--check", "pipelines"], project).code == 0
