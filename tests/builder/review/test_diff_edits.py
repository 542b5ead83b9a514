"""Each kind of skill edit, rebuilt in a clone of the project: the generated/ diff stays as small
as the behaviour it carries, and ``mindrian diff`` names exactly that change (issue 22)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
MINDRIAN = str(Path(sys.executable).parent / "mindrian")
SKILL = "skills/pws/SKILL.md"

pytestmark = pytest.mark.slow  # builds in a clone of the project


@dataclass(frozen=True)
class Edit:
    """One edit of skills/pws/SKILL.md and what it must change."""

    old: str
    """Text of the skill replaced (must occur once)."""
    new: str
    """Its replacement."""
    changes: frozenset[tuple[Any, ...]]
    """Exactly what ``mindrian diff --format json`` must report: (aspect, kind, field, name,
    old, new, line)."""
    files: int
    """Most files under generated/ the rebuild may change (the package's copy of SKILL.md,
    ``skill/SKILL.md``, is one)."""
    lines: int
    """Most lines (added + removed) under generated/ the rebuild may change."""


def _run(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        args, cwd=clone, capture_output=True, text=True, check=False, env=env, timeout=600
    )


def _ok(clone: Path, *args: str) -> str:
    done = _run(clone, *args)
    assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
    return done.stdout


def _git(clone: Path, *args: str) -> str:
    return _ok(clone, "git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A clone of the project at HEAD whose generated/ is what this builder writes, committed."""
    path = tmp_path_factory.mktemp("clone") / "project"
    _ok(ROOT, "git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(path))
    _ok(path, MINDRIAN, "build", "--all", "--quiet")
    _git(path, "add", "-A")
    _git(path, "commit", "--quiet", "--allow-empty", "-m", "baseline")
    yield path


def _numstat(clone: Path) -> tuple[int, int]:
    """Files and lines (added + removed) changed under generated/ since HEAD."""
    _git(clone, "add", "-A", "--intent-to-add", "generated")
    rows = [r.split("\t") for r in _git(clone, "diff", "--numstat", "--", "generated").splitlines()]
    return len(rows), sum(int(a) + int(d) for a, d, _ in rows)


def _reported(clone: Path) -> set[tuple[Any, ...]]:
    report = json.loads(_ok(clone, MINDRIAN, "diff", "HEAD", "--format", "json"))
    (agent,) = report["agents"]
    assert (agent["agent"], agent["status"]) == ("pws-validation", "changed")
    keys = ("aspect", "kind", "field", "name", "old", "new", "line")
    return {tuple(c[k] for k in keys) for c in agent["changes"]}


def _line_of(text: str, wanted: str) -> int:
    return text.splitlines().index(wanted) + 1


def _resolved(change: tuple[Any, ...], clone: Path, skill: str) -> tuple[Any, ...]:
    """``change`` with its placeholders filled in: the SKILL.md line of the added sentence,
    the opening prompt line before (operator) and after (role) a change of type."""
    aspect, kind, field, name, old, new, line = change
    if old == INTRO:
        committed = _git(clone, "show", "HEAD:generated/pws_validation/instructions.md")
        old = next(x for x in committed.splitlines() if "Mindrian operator agent" in x)
        new = old.replace("operator agent", "role agent")
    if line == "line":
        line = _line_of(skill, SENTENCE)
    return aspect, kind, field, name, old, new, line


SENTENCE = "Always answer in the founder's language."
#: Stands for the prompt's opening line, which names the agent and its type.
INTRO = "<intro>"
EDITS: dict[str, Edit] = {
    "trigger": Edit(
        "      - validate\n",
        "      - sanity check\n      - validate\n",
        frozenset({("routing", "added", "trigger", "sanity check", None, "", None)}),
        files=4,
        lines=7,
    ),
    "body sentence": Edit(
        "# PWS Validation\n",
        f"# PWS Validation\n\n{SENTENCE}\n",
        frozenset({("prompt", "added", "prompt line", "", None, SENTENCE, "line")}),
        files=4,
        lines=10,
    ),
    "score bound": Edit(
        "          min: 60\n          max: 79\n",
        "          min: 65\n          max: 79\n",
        frozenset(
            {("schema", "changed", "score band", "PIVOT", "60.0 to 79.0", "65.0 to 79.0", None)}
        ),
        files=2,
        lines=4,
    ),
    "model setting": Edit(
        "    model: anthropic:claude-sonnet-4-5\n",
        "    model: anthropic:claude-opus-4-1\n",
        frozenset(
            {("model", "changed", "model_id", "", "claude-sonnet-4-5", "claude-opus-4-1", None)}
        ),
        files=3,
        lines=10,
    ),
    "tool": Edit(
        "    handoff:\n",
        "    tools:\n      mcp_servers:\n        - server: mindrian\n          tools:\n"
        "            - get_framework\n          required: false\n    handoff:\n",
        frozenset(
            {
                (
                    "tools",
                    "added",
                    "MCP server",
                    "mindrian",
                    None,
                    "optional; tools get_framework",
                    None,
                )
            }
        ),
        files=4,
        lines=41,
    ),
    "chain weight": Edit(
        "        weight: 0.8\n",
        "        weight: 0.6\n",
        frozenset(
            {("routing", "changed", "chain to", "devil-advocate", "weight 0.8", "weight 0.6", None)}
        ),
        files=4,
        lines=8,
    ),
    # A type brings its own defaults (model settings, output format, accepted handoffs) and
    # names itself in the first prompt line: all of that is behaviour, and all is reported.
    "type": Edit(
        "    type: operator\n",
        "    type: role\n",
        frozenset(
            {
                ("type", "changed", "type", "", "operator", "role", None),
                ("model", "changed", "max_tokens", "", "4096", "1024", None),
                ("model", "changed", "temperature", "", "0.3", "0.7", None),
                ("prompt", "changed", "prompt line", "", INTRO, INTRO, None),
                ("schema", "changed", "output format", "", "structured", "markdown", None),
                (
                    "handoff",
                    "changed",
                    "supports",
                    "",
                    "delegate, return, escalate",
                    "delegate, transfer, return, escalate",
                    None,
                ),
            }
        ),
        # The tests' wiring names the type's contract; their data (contract.json) loses the
        # score ranges and JSON examples a role has no use for.
        files=10,
        lines=106,
    ),
}


@pytest.mark.parametrize("kind", sorted(EDITS))
def test_an_edit_changes_only_what_it_carries_and_diff_names_it(clone: Path, kind: str) -> None:
    edit = EDITS[kind]
    _git(clone, "reset", "--quiet", "--hard", "HEAD")
    skill = clone / SKILL
    text = skill.read_text(encoding="utf-8")
    assert text.count(edit.old) == 1
    edited = text.replace(edit.old, edit.new)
    skill.write_text(edited, encoding="utf-8")
    _ok(clone, MINDRIAN, "build", SKILL, "--quiet")
    files, lines = _numstat(clone)
    assert files <= edit.files and lines <= edit.lines, (files, lines)
    expected = {_resolved(c, clone, edited) for c in edit.changes}
    assert _reported(clone) == expected


def test_a_rebuild_without_change_changes_nothing(clone: Path) -> None:
    _git(clone, "reset", "--quiet", "--hard", "HEAD")
    _ok(clone, MINDRIAN, "build", "--all", "--quiet")
    assert _git(clone, "status", "--porcelain", "--", "generated") == ""
    assert _ok(clone, MINDRIAN, "diff", "HEAD").startswith("**No agent changed.**")


def test_check_catches_a_hand_edit_of_every_generated_file(clone: Path) -> None:
    """With no digest in the headers, ``mindrian check`` still sees any edit: it compares every
    byte with a fresh build."""
    _git(clone, "reset", "--quiet", "--hard", "HEAD")
    generated = _git(clone, "ls-files", "generated").splitlines()
    for name in generated:
        path = clone / name
        path.write_bytes(path.read_bytes() + b"\n")
    done = _run(clone, MINDRIAN, "check", "--quiet")
    assert done.returncode == 1, done.stderr
    drifted = {
        line[len("--- a/") :] for line in done.stdout.splitlines() if line.startswith("--- a/")
    }
    assert drifted == set(generated)
    _git(clone, "reset", "--quiet", "--hard", "HEAD")
