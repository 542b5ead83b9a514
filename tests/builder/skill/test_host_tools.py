"""Phase 4's host-tool rule: allowed-tools, Mindrian tools.host, and what the body shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from phase_factories import analyse, outputs_of, run_phases, skill

from builder.mcp.probe import check_configuration
from builder.phases.tool_assembly import ToolAssemblyPhase
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import PhaseInput
from builder.pipeline.errors import ToolAssemblyError
from builder.skill.host_tools import decide_host_tools
from builder.skill.model import HostToolRequest
from builder.skill.source import load_source

FRONT = "---\nname: sample\ndescription: d\nallowed-tools: {tools}\n---\n"


def _decide(body: str = "Do it.\n", files: tuple[str, ...] = (), **changes):  # type: ignore[no-untyped-def]
    tools = changes.pop("allowed_tools", ())
    text = FRONT.format(tools=" ".join(tools)) + body
    d = skill(
        body=body,
        body_line=6,
        allowed_tools=tools,
        field_lines={"allowed-tools": 4} if tools else {},
        **changes,
    )
    return decide_host_tools(d, text, files)


def test_nothing_shown_grants_nothing() -> None:
    host, warnings = _decide()
    assert (host.grant, host.allow, host.reasons, warnings) == ((), (), (), ())


def test_allowed_tools_grant_and_pre_approve_in_canonical_order() -> None:
    host, warnings = _decide(allowed_tools=("Read", "Bash(git status:*)", "Bash(git log:*)"))
    assert host.grant == ("Bash", "Read")
    assert host.allow == ("Read", "Bash(git status:*)", "Bash(git log:*)")
    assert [(r.tool, r.line) for r in host.reasons] == [("Bash", 4), ("Read", 4)]
    assert host.reasons[0].reason == "allowed-tools names Bash(git status:*) (line 4)"
    assert warnings == ()


def test_arbitrary_code_and_unknown_tools_are_located_warnings() -> None:
    host, warnings = _decide(allowed_tools=("Bash(python3:*)", "Task"))
    assert host.grant == ("Bash",) and host.allow == ("Bash(python3:*)",)
    assert warnings == (
        "skills/sample/SKILL.md:4:16: warning[W403]: allowed-tools pre-approves "
        "Bash(python3:*), which runs arbitrary code without asking",
        "skills/sample/SKILL.md:4:32: warning[W402]: allowed-tools names 'Task', which is not "
        "a host tool this runtime provides (Bash, Read, Write, Edit, Glob, Grep, WebFetch); it "
        "is left out",
    )


def test_a_malformed_entry_is_t012_at_its_column() -> None:
    with pytest.raises(ToolAssemblyError) as caught:
        _decide(allowed_tools=("Read", "Bash(git:*x)"))
    assert caught.value.code == "T012"
    assert str(caught.value.location) == "skills/sample/SKILL.md:4:29"


def test_a_list_entry_is_located_on_its_own_line() -> None:
    text = "---\nname: s\ndescription: d\nallowed-tools:\n  - Read\n  - Bash(\n---\nx\n"
    d = skill(
        allowed_tools=("Read", "Bash("),
        field_lines={"allowed-tools": 4, "allowed-tools.0": 5, "allowed-tools.1": 6},
    )
    with pytest.raises(ToolAssemblyError) as caught:
        decide_host_tools(d, text, ())
    assert str(caught.value.location) == "skills/sample/SKILL.md:6:9"


SHELL = "Intro.\n\n```bash\ngit status\n```\n"


@pytest.mark.parametrize(
    ("body", "files", "grant", "line"),
    [
        (SHELL, (), ("Bash",), 8),
        ("```console\n$ ls\n```\n", (), ("Bash",), 6),
        ("```python\nprint(1)\n```\n", (), (), 0),
        ("Plain `git status` in prose.\n", (), (), 0),
        ("\nRun `python scripts/check.py`.\n", ("scripts/check.py",), ("Bash", "Read"), 7),
        ("See `assets/logo.svg`.\n", ("assets/logo.svg",), ("Read",), 6),
        ("See `references/guide.md`.\n", ("references/guide.md",), (), 0),
        ("Save the plan to `docs/plan.md`.\n", (), ("Write",), 6),
        ("1. **Write the report** to `out/report.md`\n", (), ("Write",), 6),
        ("Update `README.md` with the result.\n", (), ("Edit",), 6),
        ("The writer may save time.\n", (), (), 0),
        ("Agents write code; see `docs/plan.md`.\n", (), (), 0),
        ("- `scripts/report.py`: Create and diff `out.json` reports.\n", (), (), 0),
    ],
)
def test_what_the_body_shows(
    body: str, files: tuple[str, ...], grant: tuple[str, ...], line: int
) -> None:
    host, _ = _decide(body, files)
    assert host.grant == grant
    assert host.allow == ()
    if grant:
        assert host.reasons[0].line == line


def test_tools_host_replaces_the_body_and_pre_approves_nothing() -> None:
    host, _ = _decide(SHELL, host_tools=(HostToolRequest("Read", 3), HostToolRequest("Grep", 3)))
    assert host.grant == ("Read", "Grep") and host.allow == ()
    assert host.reasons[1].reason == "tools.host names it (line 3)"
    empty, _ = _decide(SHELL, host_tools=())
    assert empty.grant == ()


def test_phase_4_writes_the_grant_into_the_spec(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "check.py").write_text("print('ok')\n")
    (folder / "SKILL.md").write_text(
        "---\nname: demo\ndescription: Checks a repository.\n"
        "allowed-tools: Bash(git status:*) Read\n---\n\n# Demo\n\nRun `scripts/check.py`.\n"
    )
    source = load_source(folder / "SKILL.md", "demo/SKILL.md")
    d = analyse("demo/SKILL.md", root=str(tmp_path))
    previous = {"skill_analysis": d}
    for name, result in run_phases(d, until=3, root=str(tmp_path)).items():
        previous[name] = result.output
    phase_input = PhaseInput(source, BuildConfig(root=str(tmp_path)), outputs_of(previous))
    host = ToolAssemblyPhase(check_configuration).run(phase_input).output.tools.host
    assert host.grant == ("Bash", "Read")
    assert host.allow == ("Bash(git status:*)", "Read")
    assert host.reasons[0].reason == "allowed-tools names Bash(git status:*) (line 4)"
