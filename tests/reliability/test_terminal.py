"""Control characters from a skill are escaped in every human-readable output.

Repro of the review: CR, LF and U+2028 in a model id were printed raw by ``explain``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reliability_cli import Mindrian

from builder.pipeline.report import explain_text, terminal_safe
from builder.pipeline.terminal import terminal_line, terminal_text

HOSTILE = "anthropic:m\rFAKE LINE\n[7] registration: passed\u2028\x1b[2J"


def test_terminal_safe_escapes_every_control_character_and_keeps_text() -> None:
    shown = terminal_safe(HOSTILE + " café")
    assert shown == "anthropic:m\\rFAKE LINE\\n[7] registration: passed\\u2028\\x1b[2J café"
    assert all(ch.isprintable() for ch in shown)


def test_a_message_quoting_a_skill_never_starts_a_line_of_its_own() -> None:
    message = "error[P003]: tests failed; output:\n[7/7] registration … ok\x1b[2J"
    assert terminal_line(message) == (
        "error[P003]: tests failed; output:\n    [7/7] registration … ok\\x1b[2J"
    )
    assert terminal_text("a\tb\r\n\u2028c\n") == "a\tb\\r\n\\u2028c\n"


def test_explain_prints_one_line_per_item_whatever_the_skill_says() -> None:
    checkpoint = {
        "number": 2,
        "phase": "architecture",
        "passed": True,
        "checks": [{"name": "model_selected", "passed": True, "reason": f"model {HOSTILE}"}],
        "warnings": [f"tone {HOSTILE}"],
        "output": {"model": HOSTILE},
    }
    text = explain_text("x", [checkpoint])
    assert "\r" not in text and "\u2028" not in text and "\x1b" not in text
    lines = text.splitlines()
    assert lines[3] == f"  check model_selected: ok - model {terminal_safe(HOSTILE)}"
    assert lines[4] == f"  warning: tone {terminal_safe(HOSTILE)}"
    assert not any(line.startswith("[7]") for line in lines)


#: Planted in skill fields: rewrite the line, fake a progress line, clear the screen.
PLANTED = "\rFAKE\n[7/7] registration … ok\u2028FAKE\x1b[2J\x85\x9b31m\x7f"


def _hostile_project(root: Path) -> Path:
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.mindrian]\n')
    q = json.dumps  # a JSON string is a YAML double-quoted scalar, escapes and all
    skills = {
        # Builds and registers (its own generated tests pass): model id, trigger, tone and
        # prose carry the planted text.
        "hostile": f"""---
name: hostile
description: {q("Checks plans." + PLANTED)}
metadata:
  mindrian:
    type: operator
    model: {q("anthropic:claude" + PLANTED)}
    triggers: [hostile, {q("probe" + PLANTED)}]
    tone: {q("calm" + PLANTED)}
    behavioral_rules: [{q("Be brief." + PLANTED)}]
---
# Methodology

Ask what is missing.
""",
        # Fails in phase 4 after a phase-1 warning, both quoting the planted text.
        "broken": f"""---
name: broken
description: Broken on purpose.
metadata:
  mindrian:
    type: {q("fuzzer" + PLANTED)}
    model: anthropic:claude-sonnet-4-5
    triggers: [broken]
    tools:
      mcp_servers:
        - server: {q("nowhere" + PLANTED)}
---
# Methodology

Nothing.
""",
    }
    for name, text in skills.items():
        (root / "skills" / name).mkdir(parents=True)
        (root / "skills" / name / "SKILL.md").write_text(text, encoding="utf-8")
    return root


def _assert_terminal_safe(what: str, text: str, *, document: bool = False) -> None:
    raw = sorted({repr(ch) for ch in text if ch != "\n" and not ch.isprintable()})
    assert not raw, f"{what} printed raw {', '.join(raw)}"
    if document:  # the system prompt is the skill's own text, its line breaks included
        return
    faked = [line for line in text.split("\n") if line.startswith("FAKE")]
    assert not faked, f"{what} let the skill start a line: {faked[:2]}"


@pytest.mark.slow
def test_every_human_output_escapes_what_the_skill_planted(
    tmp_path: Path, mindrian: Mindrian
) -> None:
    project = _hostile_project(tmp_path)
    runs = {
        "build": mindrian(project, ["build", "--all", "--jobs", "1"]),
        "build --frames": mindrian(project, ["build", "--all", "--jobs", "1", "--frames"]),
        "validate": mindrian(project, ["validate", "skills/hostile", "skills/broken"]),
        "explain": mindrian(project, ["explain", "hostile"]),
        "explain broken": mindrian(project, ["explain", "broken"]),
        "explain --prompt": mindrian(project, ["explain", "hostile", "--prompt"]),
        "select": mindrian(project, ["select", "--trigger", "hostile"]),
        "check": mindrian(project, ["check", "--jobs", "1"]),
    }
    # The planted text did reach every output below, escaped.
    assert runs["build"].code == 1 and "warning[W101]" in runs["build"].err
    assert "error[T002]" in runs["build"].err and "built hostile" in runs["build"].err
    assert runs["explain"].code == 0 and "\\rFAKE\\n[7/7]" in runs["explain"].out
    assert "\\x1b[2J" in runs["explain --prompt"].out
    assert runs["select"].code == 0 and "hostile" in runs["select"].out
    assert "<<<MINDRIAN:ERROR:" in runs["build --frames"].out
    for command, run in runs.items():
        _assert_terminal_safe(f"{command} (stdout)", run.out, document=command.endswith("prompt"))
        _assert_terminal_safe(f"{command} (stderr)", run.err)
