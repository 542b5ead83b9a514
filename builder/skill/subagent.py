"""A plugin's ``agents/*.md`` written without front matter, read as the subagent it describes.

Claude Code's subagents name themselves in front matter (``name``, ``description``), but
the Mindrian author's plugin also keeps subagents written as plain markdown — a title,
a one-paragraph summary, then the agent's instructions. Such a file says both things a
subagent needs, just not in YAML, so phase 1 reads it rather than refusing it:

* ``name`` is the file's stem (``agents/opportunity-scanner.md`` is ``opportunity-scanner``),
  as Claude Code names a subagent's file after it;
* ``description`` is the first paragraph of prose: the first run of non-blank lines that is
  not a heading, list item, table, HTML block, rule or fenced code, with blockquote marks
  (``>``) removed and its lines joined by spaces;
* the whole file is the body, so every line still reaches the prompt, and the title (the
  first ``#`` heading) becomes the display name as for any skill whose name is a slug.

Warning W120 names the file and the paragraph's line and says how to state them instead.
A file of ``agents/`` with no paragraph of prose is S101, as any file without front matter.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from builder.pipeline.errors import SkillError, SourceLocation
from builder.pipeline.patterns import on_first_use
from builder.skill.body import atx_heading
from builder.skill.frontmatter import FrontMatter

__all__ = ["IMPLIED_FRONT_MATTER", "implied_front_matter", "is_subagent_note"]

#: The warning code of an ``agents/*.md`` whose name and description are read from its text.
IMPLIED_FRONT_MATTER = "W120"
#: The folder of a plugin that holds subagents.
_AGENTS = "agents"
_FENCE = on_first_use(r"^[ \t]*(`{3,}|~{3,})")
#: Lines that start something other than prose: a list item, a table row, HTML, a rule.
_NOT_PROSE = on_first_use(
    r"^[ \t]*(?:[-*+][ \t]|\d{1,9}[.)][ \t]|\||<|([-*_])(?:[ \t]*\1){2,}[ \t]*$)"
)
_QUOTE = on_first_use(r"^[ \t]*(?:>[ \t]?)+")


def is_subagent_note(path: str, text: str) -> bool:
    """Whether ``text`` is an ``agents/*.md`` file without front matter."""
    where = PurePosixPath(path)
    in_agents = where.parent.name == _AGENTS and where.suffix == ".md"
    return in_agents and text.split("\n", 1)[0].rstrip() != "---"


def _first_paragraph(lines: list[str]) -> tuple[str, int] | None:
    """(first paragraph of prose, joined; its 1-based line), if the text has one."""
    fence = ""
    paragraph: list[str] = []
    start = 0
    for index, raw in enumerate(lines):
        line = raw.rstrip("\r")
        marker = _FENCE().match(line)
        if fence:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = ""
            continue
        if marker:
            if paragraph:
                break
            fence = marker.group(1)
            continue
        text = _QUOTE().sub("", line).strip()
        prose = bool(text) and not atx_heading(line) and not _NOT_PROSE().match(text)
        if prose:
            start = start or index + 1
            paragraph.append(text)
        elif paragraph:
            break
    return (" ".join(paragraph), start) if paragraph else None


def implied_front_matter(text: str, path: str) -> tuple[FrontMatter, str]:
    """The front matter an ``agents/*.md`` note implies, and warning W120 saying so.

    Raises SkillError S101 when the file has no paragraph to describe it with.
    """
    found = _first_paragraph(text.split("\n"))
    if found is None:
        raise SkillError(
            "valid_yaml: no front matter, and no paragraph of prose to describe the subagent "
            "with: start the file with '---', name, description, '---'",
            location=SourceLocation(path, 1, 1),
            code="S101",
        )
    description, line = found
    name = PurePosixPath(path).stem
    front = FrontMatter(
        data={"name": name, "description": description},
        positions={("description",): (line, 1)},
        raw={},
        open_line=0,
        close_line=0,
        body=text,
        body_line=1,
    )
    warning = (
        f"{SourceLocation(path, line, 1)}: warning[{IMPLIED_FRONT_MATTER}]: no front matter: "
        f"read as the subagent {name!r} (its file name), described by its first paragraph "
        f"(line {line}); start the file with '---', name, description, '---' to say them yourself"
    )
    return front, warning
