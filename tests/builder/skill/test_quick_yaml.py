"""Front matter composed by builder.skill.quick_yaml reads exactly as composed by ruamel.yaml:
the same data, positions, raw numbers and errors, for every front matter it does not decline
(generated documents, the project's skills and fixtures, and the shared corpora when present);
and the project's own skills are read without ruamel.yaml."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder.pipeline.errors import SkillError
from builder.skill import frontmatter, quick_yaml
from builder.skill.frontmatter import FrontMatter, parse_front_matter

REPO = Path(__file__).resolve().parents[3]
#: The shared corpora, beside the repository or beside the folder of its worktrees.
_SHARED = [REPO.parent / "shared", REPO.parent.parent / "shared"]
_FILES = sorted(
    {
        *REPO.glob("skills/*/SKILL.md"),
        *(REPO / "tests").rglob("*.md"),
        *(REPO / "examples").rglob("*.md"),
        *(p for shared in _SHARED for p in (shared / "corpus").rglob("SKILL.md")),
        *(p for shared in _SHARED for p in (shared / "routing").rglob("SKILL.md")),
    }
)


def _read(text: str) -> FrontMatter | tuple[str | None, str, object]:
    try:
        return parse_front_matter(text, "SKILL.md")
    except SkillError as error:
        return (error.code, str(error), error.location)


def _same_either_way(text: str) -> bool:
    """Whether ``text`` reads the same both ways; True when the subset reader declined."""
    yaml_text = frontmatter.split_front_matter(text, "SKILL.md")[0]
    if quick_yaml.compose(yaml_text) is None:
        return True
    # Every front matter composed by ruamel.yaml: the subset reader declines all.
    with patch.object(frontmatter, "compose_subset", return_value=None):
        slow = _read(text)
    assert _read(text) == slow
    return False


# --- generated documents --------------------------------------------------------------------

_WORDS = (
    "alpha", "two words", "a#b", "x: y", "http://host/path", "ends:", "a :b", "a, b", "[a]",
    "{a}", "x{y}, [z]", "&x", "*x", "!x", "%x", "@x", "`x", "?x", "-x", "- x", "-", "=", "<<",
    "1", "0", "-1", "+1", "0.5", "+0.25", "1.10", "1.0.0", "10.2.3.4", "007", "0o17", "0x1F",
    "1_000", "1e3", "1.5e3", ".5", ".inf", "-.inf", ".nan", "inf", "NaN", "true", "True",
    "TRUE", "tRUE", "false", "yes", "No", "on", "OFF", "y", "n", "null", "Null", "NULL", "nUll",
    "~", "2024-01-02", "2024-01-02 10:20:30", "12:30", "1:20:30", "多语言技能", "café",
    "a'b", 'a"b', "a\\b", "trailing  ", "Use when: asked", "x:y", "a\u00a0b", "a\u200db",
    "0.1.2", "1.2.3e4", "01.2.3",
)  # fmt: skip
_KEYS = ("name", "description", "metadata", "a", "b-c", "d_e", "f.g", "true", "null", "1", "yes")


#: Words the subset reads (most drawn words are of these, so most documents are composed).
_PLAIN = ("alpha", "two words", "a#b", "http://host/path", "a, b", "x{y}, [z]", "1", "0.5",
          "true", "null", "~", "1.0.0", "多语言技能", "café", "a'b", "trailing  ")  # fmt: skip


def _scalar(draw: st.DrawFn, column: int) -> str:
    word = draw(st.sampled_from(_PLAIN if draw(st.integers(0, 4)) else _WORDS))
    style = draw(st.sampled_from(("plain", "plain", "plain", "single", "double", "escaped")))
    if style == "single":
        word = "'" + word.replace("'", "''") + "'"
    elif style == "double":
        word = '"' + word.replace('"', "") + '"'
    elif style == "escaped":
        word = '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '\\t"'
    return word + draw(st.sampled_from(("", "", " # note", "  #note", "#x", " ")))


def _block(draw: st.DrawFn, column: int) -> list[str]:
    header = draw(st.sampled_from(("|", ">", "|-", ">-", "|", ">", "|+", "|2", "> # c")))
    indent = column + draw(st.sampled_from((1, 2, 4)))
    lines = [header]
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(
            st.sampled_from(("text", "text", "text", "blank", "spaces", "deeper", "comment"))
        )
        text = draw(st.sampled_from(_PLAIN if draw(st.integers(0, 3)) else _WORDS))
        lines.append(
            {
                "text": " " * indent + text,
                "blank": "",
                "spaces": " " * draw(st.integers(1, indent + 2)),
                "deeper": " " * (indent + 2) + text,
                "comment": " " * indent + "# kept",
            }[kind]
        )
    lines += [""] * draw(st.integers(0, 2))
    return lines


@st.composite
def _mapping(draw: st.DrawFn, column: int = 0, depth: int = 0) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        key = draw(st.sampled_from(_KEYS))
        pad = " " * column
        kind = draw(
            st.sampled_from(
                ("scalar", "scalar", "empty", "block", "map", "list", "indentless", "other")
                if depth < 3
                else ("scalar", "empty", "block")
            )
        )
        if kind == "scalar":
            lines.append(f"{pad}{key}: {_scalar(draw, column)}")
        elif kind == "empty":
            lines.append(f"{pad}{key}:" + draw(st.sampled_from(("", " ", " # none"))))
        elif kind == "block":
            head, *rest = _block(draw, column)
            lines += [f"{pad}{key}: {head}", *rest]
        elif kind == "map":
            lines.append(f"{pad}{key}:")
            lines += draw(_mapping(column + draw(st.sampled_from((1, 2, 4))), depth + 1))
        elif kind in ("list", "indentless"):
            lines.append(f"{pad}{key}:")
            at = column if kind == "indentless" else column + draw(st.sampled_from((1, 2)))
            lines += draw(_sequence(at, depth + 1))
        else:
            lines.append(draw(st.sampled_from(("", "# comment", "   ", f"{pad}  more text"))))
    return lines


@st.composite
def _sequence(draw: st.DrawFn, column: int, depth: int) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        pad = " " * column
        gap = draw(st.sampled_from((1, 1, 3)))
        if draw(st.booleans()):
            lines.append(f"{pad}-{' ' * gap}{_scalar(draw, column)}")
        else:
            inner = draw(_mapping(column + 1 + gap, depth + 1))
            first = inner[0].lstrip(" ") if inner[0].strip() else "k: v"
            lines += [f"{pad}-{' ' * gap}{first}", *inner[1:]]
    return lines


@given(_mapping())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_front_matter_reads_the_same_either_way(lines: list[str]) -> None:
    _same_either_way("---\n" + "\n".join(lines) + "\n---\n# Body\n")


@pytest.mark.parametrize(
    "yaml_text",
    [
        "name: a\ndescription: |\n  one\n\n  two\n",
        "name: a\ndescription: >-\n  one\n  two\n\n\n  three\n\nlicense: MIT",
        "name: a\ndescription: >\n  one\n  two",  # the last line: no line break follows
        "name: a\nmetadata:\n  triggers:\n  - x\n  - 'it''s'\n  weights:\n    - target: b\n"
        "      weight: 0.8\n    - target: c\n      weight: 1\n# end",
        'name: a\ndescription: x\nlist:\n- a: 1\n  b:\n  - c\n  d: ~\n- "e"  # note\n',
        "name: a\ndescription: x\nname: b\n",  # duplicate key (S109), located by the converter
    ],
)
def test_the_subset_reads_these_as_ruamel_does(yaml_text: str) -> None:
    assert quick_yaml.compose(yaml_text) is not None
    assert not _same_either_way(f"---\n{yaml_text}\n---\nbody\n")


@pytest.mark.parametrize(
    "yaml_text",
    [
        "name: a\ndescription: Use when: asked\n",  # repaired by frontmatter (W103)
        "name: a\ndescription: one\n  two\n",  # a multi-line plain scalar
        "name: a\nversion: 2024-01-02\n",  # a timestamp
        "name: a\nenabled: yes\n",  # a YAML 1.1 boolean
        "name: &n a\nother: *n\n",  # anchors and aliases
        "name: a\ntags: [x, y]\n",  # a flow collection
        "name: a\ndescription: |+\n  kept\n\n",  # keep chomping
        'name: a\ndescription: "tab\\there"\n',  # an escape
        "name:\ta\n",  # a tab
        "name: a\u00a0b\n",  # a character Python does not call printable
        "- a\n- b\n",  # not a mapping (S103)
        "",  # empty (S103)
    ],
)
def test_the_subset_declines_what_ruamel_judges(yaml_text: str) -> None:
    assert quick_yaml.compose(yaml_text) is None


def test_every_known_front_matter_reads_the_same_either_way() -> None:
    composed = 0
    for path in _FILES:
        text = path.read_text(encoding="utf-8", errors="replace")
        if text.startswith("---\n"):
            composed += not _same_either_way(text)
    assert composed >= len(list(REPO.glob("skills/*/SKILL.md")))


def test_the_project_skills_are_read_without_ruamel() -> None:
    for path in sorted(REPO.glob("skills/*/SKILL.md")):
        text = path.read_text(encoding="utf-8")
        yaml_text = frontmatter.split_front_matter(text, path.name)[0]
        assert quick_yaml.compose(yaml_text) is not None, path
