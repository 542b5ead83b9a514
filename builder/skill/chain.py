"""A chain folder: ``CHAIN.md`` plus numbered stage files, read as one pipeline skill.

The Mindrian author's plugin writes a staged method as ``pipelines/<name>/CHAIN.md``
(front matter ``name``, ``display_name``, ``description``, ``stages: N``; the method's
overview as body)
beside ``01-decompose.md``, ``02-abstract.md``, … Each stage file has front matter
(``stage``, ``chain``, ``input_from``, ``output_to``) and its own instructions as body.
CHAIN.md takes the place of SKILL.md; each stage file becomes one step of the
pipeline, in the order of its number, named after its file (``decompose``), with
its whole body as the step's instructions.

The stage files travel in ``SkillSource.files`` (so the digest covers them) and
are read here, never from disk. Errors name the stage file and line:

======  ===================================================================
S207    two stage files give the same stage name
S220    a stage file is missing, numbered twice, or the folder has none
S221    CHAIN.md's ``stages`` disagrees with the stage files
S222    a stage file's ``stage`` or ``chain`` disagrees with its file name or chain
S223    a stage's ``input_from``/``output_to`` is not its neighbour in the order
W121    CHAIN.md's stage list (its "Stage Sequence") names a stage no file has,
        leaves out a stage file, or orders them differently (a warning: the
        files decide the phases)
======  ===================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from builder.pipeline.contract import SkillSource
from builder.pipeline.errors import SkillError, SourceLocation
from builder.skill.chain_layout import (
    CHAIN_FILE,
    CHAIN_KEYS,
    StageFile,
    is_chain,
    skill_file,
    stage_files,
)
from builder.skill.frontmatter import FrontMatter, decode_skill, parse_front_matter
from builder.skill.model import StepSpec
from builder.skill.stages import listed_stages, same_stage

__all__ = [
    "CHAIN_FILE",
    "CHAIN_KEYS",
    "StageFile",
    "chain_stage_bytes",
    "chain_steps",
    "is_chain",
    "skill_file",
    "stage_files",
    "stage_list_findings",
]


def chain_stage_bytes(source: SkillSource) -> tuple[tuple[str, bytes], ...]:
    """(stage name, raw bytes) of each stage file of a chain, in order; empty for a SKILL.md."""
    if not is_chain(source.path):
        return ()
    files = dict(source.files)
    return tuple((stage.name, files[stage.path]) for stage in stage_files(files))


@dataclass(frozen=True)
class _Stage:
    """A stage file read: its place, its front matter and its instructions."""

    file: StageFile
    """Which file."""
    shown: str
    """The file as the user would name it (beside CHAIN.md)."""
    front: FrontMatter
    """Its parsed front matter and body."""


def _shown(source: SkillSource, name: str) -> str:
    return str(PurePosixPath(source.path).parent / name)


def _fail(code: str, message: str, path: str, line: int = 0) -> SkillError:
    return SkillError(f"required_fields: {message}", location=SourceLocation(path, line), code=code)


def _line(front: FrontMatter, key: str) -> int:
    return front.positions.get((key,), (0, 0))[0]


def chain_steps(source: SkillSource, chain: FrontMatter) -> tuple[StepSpec, ...]:
    """The steps of the chain whose CHAIN.md is ``source.data`` (parsed as ``chain``).

    Raises SkillError (S220–S223, or S101–S111 for a stage file's own front matter).
    """
    files = dict(source.files)
    found = stage_files(files)
    _check_numbering(source, found)
    _check_names(source, found)
    declared = chain.data.get("stages")
    if declared is not None and (
        isinstance(declared, bool) or not isinstance(declared, int) or declared != len(found)
    ):
        listed = ", ".join(s.path for s in found)
        raise _fail(
            "S221",
            f"stages: {declared!r} but the folder holds {len(found)} stage files ({listed}); "
            "make them agree",
            source.path,
            _line(chain, "stages"),
        )
    stages = []
    for file in found:
        shown = _shown(source, file.path)
        front = parse_front_matter(decode_skill(files[file.path], shown), shown)
        stages.append(_Stage(file, shown, front))
    for read in stages:
        _check_stage(read, chain.data.get("name"))
    _check_links(stages)
    return tuple(
        StepSpec(
            name=read.file.name,
            instructions=read.front.body.strip(),
            line=_text_line(read.front),
            source=read.shown,
            input_from=_neighbour(read.front.data, "input_from"),
            output_to=_neighbour(read.front.data, "output_to"),
        )
        for read in stages
    )


def _text_line(front: FrontMatter) -> int:
    """Line where a stage's instructions (its body, stripped) start."""
    body = front.body
    return front.body_line + body[: len(body) - len(body.lstrip())].count("\n")


def _check_numbering(source: SkillSource, found: tuple[StageFile, ...]) -> None:
    """S220 unless the stage files are numbered 1, 2, … without gap or repeat."""
    if not found:
        raise _fail(
            "S220",
            f"the chain folder has no stage files beside {CHAIN_FILE}; add one file per stage, "
            "numbered from 1 (01-<stage>.md, 02-<stage>.md, …)",
            source.path,
        )
    for expected, stage in enumerate(found, start=1):
        if stage.number == expected:
            continue
        shown = _shown(source, stage.path)
        if expected == 1 and stage.number == 0:
            message = f"{stage.path} is numbered 0; stage files are numbered from 1"
        elif stage.number < expected:
            other = found[expected - 2].path
            message = f"stage {stage.number} is numbered twice ({other} and {stage.path})"
        else:
            before = f" after {found[expected - 2].path}" if expected > 1 else ""
            message = (
                f"stage {expected} is missing: the next stage file{before} is {stage.path}; "
                f"number the stage files 1, 2, … without gaps"
            )
        raise _fail("S220", message, shown)


def _check_names(source: SkillSource, found: tuple[StageFile, ...]) -> None:
    """S207 when two stage files give the same name: a phase is known by its name."""
    seen: dict[str, str] = {}
    for stage in found:
        if stage.name in seen:
            raise _fail(
                "S207",
                f"the stage name {stage.name!r} is given twice ({seen[stage.name]} and "
                f"{stage.path}); name each stage once",
                _shown(source, stage.path),
            )
        seen[stage.name] = stage.path


def _check_stage(stage: _Stage, chain_name: Any) -> None:
    """S222 when the file's own ``stage`` or ``chain`` contradicts where it is."""
    data = stage.front.data
    number = data.get("stage")
    if number is not None and (isinstance(number, bool) or number != stage.file.number):
        raise _fail(
            "S222",
            f"stage: {number!r} but the file name numbers it {stage.file.number}; make them agree",
            stage.shown,
            _line(stage.front, "stage"),
        )
    named = data.get("chain")
    if named is not None and named != chain_name:
        raise _fail(
            "S222",
            f"chain: {named!r} but the stage is in the chain {chain_name!r} (CHAIN.md's name); "
            "a stage belongs to the chain of its folder",
            stage.shown,
            _line(stage.front, "chain"),
        )


def _neighbour(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else str(value)


def _check_links(stages: list[_Stage]) -> None:
    """S223 unless each ``input_from`` names the stage before and each ``output_to`` the one after.

    The pipeline hands each phase the output of the phase before it and nothing
    else, so a stage that reads from or writes to any other stage would be built
    into something that does not do what it says.
    """
    for index, stage in enumerate(stages):
        before = stages[index - 1].file.name if index > 0 else None
        after = stages[index + 1].file.name if index + 1 < len(stages) else None
        for key, expected, where in (
            ("input_from", before, "the stage before it"),
            ("output_to", after, "the stage after it"),
        ):
            if key not in stage.front.data:
                continue
            value = _neighbour(stage.front.data, key)
            if value == expected:
                continue
            wanted = f"{expected!r}, {where}" if expected else f"null: it is the {_end(key)} stage"
            raise _fail(
                "S223",
                f"{key}: {value!r}, but a pipeline stage runs on what the stage before it hands "
                f"on; expected {wanted}",
                stage.shown,
                _line(stage.front, key),
            )


def _end(key: str) -> str:
    return "first" if key == "input_from" else "last"


def stage_list_findings(
    chain: FrontMatter, steps: tuple[StepSpec, ...]
) -> tuple[tuple[int, str], ...]:
    """(line, message) for each way CHAIN.md's stage list disagrees with its stage files.

    The list is how a reader learns the stages, and the files are what is built, so a
    list left behind by a renamed, added or reordered stage file misleads the reader
    without breaking the build: each disagreement is a warning at the item or heading.
    """
    found = listed_stages(chain.body, chain.body_line)
    if found is None:
        return ()
    heading = f"the {found.listed.heading!r} list"
    files = [(s.name, PurePosixPath(s.source).name) for s in steps]
    findings = [
        (line, f"{heading} names {name!r}, but no stage file does; add one or drop the item")
        for name, line in found.names
        if not any(same_stage(name, stage) for stage, _ in files)
    ]
    findings += [
        (found.listed.line, f"{heading} leaves out the stage file {file}; list it")
        for stage, file in files
        if not any(same_stage(name, stage) for name, _ in found.names)
    ]
    listed = [stage for name, _ in found.names for stage, _ in files if same_stage(name, stage)]
    in_files = [stage for stage, _ in files if stage in listed]
    if not findings and listed != in_files:
        findings.append(
            (
                found.listed.line,
                f"{heading} orders the stages {', '.join(listed)}; the stage files run "
                f"{', '.join(in_files)}, and the files' order is the pipeline's",
            )
        )
    return tuple(findings)
