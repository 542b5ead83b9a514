"""Control characters from a skill are escaped in human-readable output."""

from __future__ import annotations

from builder.pipeline.report import explain_text, terminal_safe

HOSTILE = "anthropic:m\rFAKE LINE\n[7] registration: passed\u2028\x1b[2J"


def test_terminal_safe_escapes_every_control_character_and_keeps_text() -> None:
    shown = terminal_safe(HOSTILE + " café")
    assert shown == "anthropic:m\\rFAKE LINE\\n[7] registration: passed\\u2028\\x1b[2J café"
    assert all(ch.isprintable() for ch in shown)


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
