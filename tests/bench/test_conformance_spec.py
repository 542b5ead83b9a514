"""``make conformance`` reports the Agent Skills reference validator's findings beside mindrian's
verdict, as warnings where mindrian is more lenient (issue 27)."""

from __future__ import annotations

from pathlib import Path

from bench.conformance import Outcome, format_table, outcomes, spec_findings


def _skill(folder: Path, front: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{front}---\nBody.\n", encoding="utf-8")
    return folder


def test_a_valid_skill_has_no_finding(tmp_path: Path) -> None:
    assert spec_findings(_skill(tmp_path / "good", "name: good\ndescription: d\n")) == ()


def test_each_finding_is_one_line(tmp_path: Path) -> None:
    folder = _skill(tmp_path / "other", "name: Bad Name\ndescription: d\ntype: operator\n")
    findings = spec_findings(folder)
    assert findings and all("\n" not in f for f in findings)
    assert any("type" in f for f in findings)
    assert any("Bad Name" in f or "name" in f.lower() for f in findings)


def test_the_table_lists_findings_as_warnings_beside_the_verdict() -> None:
    rows = [
        Outcome("a/SKILL.md", None, 7, 1.0),
        Outcome("b/SKILL.md", None, 7, 1.0, spec=("Unexpected fields in frontmatter: type",)),
        Outcome("c/SKILL.md", "S102", 1, 0.1, "c/SKILL.md:3:1: error[S102]: …", spec=("YAML",)),
    ]
    table = format_table(rows, 3.0)
    assert "b/SKILL.md  built" in table and "1 finding(s)" in table
    assert "2 of 3 built through phase 7, 0 refused as expected, 1 failed" in table
    # Only skills mindrian accepted are "more lenient"; a failure is reported as a failure.
    assert table.endswith(
        "1 of 3 pass agentskills validate; 1 the specification refuses and mindrian accepts:\n"
        "  warning: b/SKILL.md: Unexpected fields in frontmatter: type"
    )


def test_outcomes_carry_the_findings_by_skill(tmp_path: Path) -> None:
    report = {"builds": [{"path": str(tmp_path / "x" / "SKILL.md"), "error": None, "phases": []}]}
    rows = outcomes(report, tmp_path, {"x/SKILL.md": ("finding",)})
    assert rows[0].spec == ("finding",)
