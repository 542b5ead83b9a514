"""The agents of a project at one git revision (or in its working tree), read with git.

``mindrian diff`` compares what the committed packages say, not what their text looks like: each
side is read from the ``spec.yaml``, ``instructions.md`` and ``workflow.dot`` of every package under
the generated folder at that revision (``git ls-tree`` and ``git show``; nothing is checked out or
built), with the skills' SKILL.md text to cite prompt lines. A skill with no package at a revision
did not build there (or was never built); it is listed as such.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from builder.pipeline.errors import CompilerError
from mindrian.project import DEFAULT_OUT_DIR

__all__ = [
    "WORKING_TREE",
    "AgentSnapshot",
    "ReviewError",
    "Snapshot",
    "default_base",
    "git_root",
    "read_snapshot",
    "resolve",
]

#: The label of the working tree as a side of a comparison.
WORKING_TREE = "working tree"
_SKILLS_DIR = "skills"
#: Branches taken for the default branch when ``origin/HEAD`` names none, in order.
_DEFAULT_BRANCHES = ("main", "master")


class ReviewError(CompilerError):
    """``mindrian diff`` cannot compare: not a git repository, an unknown revision, git failed."""

    stage = "review"
    default_code = "V003"


@dataclass(frozen=True)
class AgentSnapshot:
    """One generated package at one revision."""

    spec: Mapping[str, Any]
    """Its ``spec.yaml`` as plain data."""
    instructions: str
    """Its ``instructions.md`` without the generated header: the prompt, verbatim."""
    workflow: str | None
    """Its ``workflow.dot`` text; None when the package has none."""
    skill: str | None
    """The text of its SKILL.md at the same revision (to cite lines); None when missing."""


@dataclass(frozen=True)
class Snapshot:
    """Every agent of the project at one revision."""

    label: str
    """The revision as the user named it (or ``working tree``)."""
    agents: Mapping[str, AgentSnapshot]
    """Packages by agent id."""
    unbuilt: tuple[str, ...]
    """SKILL.md paths (project-relative) that have no package at this revision, sorted."""
    skills: Mapping[str, str]
    """Every SKILL.md text by project-relative path."""


def _git(root: Path, *args: str, given: bytes | None = None) -> bytes:
    """Run git in ``root`` (``given`` on its stdin); its stdout, or a ReviewError with git's
    first line of complaint."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            input=given,
            capture_output=True,
            check=False,
            timeout=120,
        )
    except FileNotFoundError:
        raise ReviewError("git is not installed (mindrian diff reads revisions with it)") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ReviewError(f"git {args[0]} failed: {said[0] if said else done.returncode}")
    return done.stdout


def git_root(root: Path) -> Path:
    """The top of the git work tree holding ``root``; a ReviewError when there is none."""
    try:
        return Path(_git(root, "rev-parse", "--show-toplevel").decode().strip())
    except ReviewError:
        raise ReviewError(f"not a git repository: {root}", code="V001") from None


def resolve(root: Path, revision: str) -> str:
    """The commit id ``revision`` names; a ReviewError (V002) when it names none."""
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}").decode()[
            :-1
        ]
    except ReviewError:
        raise ReviewError(f"unknown revision {revision!r}", code="V002") from None


def default_base(root: Path) -> tuple[str, str]:
    """The merge base of HEAD with the default branch (``origin/HEAD``, else main or master),
    or ``HEAD`` when there is no such branch; with how to show it."""
    try:
        branch = _git(root, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
        candidates: tuple[str, ...] = (branch.decode().strip(),)
    except ReviewError:
        candidates = _DEFAULT_BRANCHES
    for name in candidates:
        try:
            resolve(root, name)
            commit = _git(root, "merge-base", "HEAD", name).decode().strip()
        except ReviewError:
            continue
        return commit, f"merge base with {name} ({commit[:12]})"
    return "HEAD", "HEAD"


def _files(root: Path, commit: str | None) -> dict[str, bytes]:
    """The files the comparison reads (specs, instructions, workflows, SKILL.md), by
    project-relative path, at ``commit`` or in the working tree (None)."""
    wanted = ("spec.yaml", "instructions.md", "workflow.dot", "SKILL.md")
    if commit is None:
        # Hidden folders (an output's own .mindrian/staging) hold no committed package.
        return {
            p.relative_to(root).as_posix(): p.read_bytes()
            for top in (DEFAULT_OUT_DIR, _SKILLS_DIR)
            for p in sorted((root / top).rglob("*"))
            if p.name in wanted
            and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(root).parts)
        }
    listed = _git(
        root, "ls-tree", "-r", "-z", "--name-only", commit, "--", DEFAULT_OUT_DIR, _SKILLS_DIR
    )
    names = sorted(
        n
        for n in listed.decode("utf-8").split("\0")
        if PurePosixPath(n).name in wanted and "\n" not in n  # a batch request is one line
    )
    return dict(zip(names, _blobs(root, commit, names), strict=True))


def _blobs(root: Path, commit: str, names: list[str]) -> list[bytes]:
    """The contents of ``names`` (relative to ``root``) at ``commit``, read by one git process."""
    prefix = _git(root, "rev-parse", "--show-prefix").decode("utf-8").strip()
    request = "".join(f"{commit}:{prefix}{name}\n" for name in names).encode("utf-8")
    out = _git(root, "cat-file", "--batch", given=request)
    blobs, at = [], 0
    for _ in names:
        end = out.index(b"\n", at)
        size = int(out[at:end].split()[2])  # "<object id> blob <size>"
        blobs.append(out[end + 1 : end + 1 + size])
        at = end + 1 + size + 1  # the content is followed by a LF
    return blobs


def _is_package_spec(path: str) -> bool:
    """Whether ``path`` is the spec of a package: ``generated/<package>/spec.yaml``."""
    parts = PurePosixPath(path).parts
    return len(parts) == 3 and parts[0] == DEFAULT_OUT_DIR and parts[2] == "spec.yaml"


def _body(text: str) -> str:
    """``instructions.md`` without its generated header comment."""
    if text.startswith("<!--"):
        return text.split("-->\n", 1)[-1]
    return text


def read_snapshot(root: Path, revision: str | None, label: str | None = None) -> Snapshot:
    """The agents at ``revision`` (a name git resolves) or in the working tree (None), shown as
    ``label`` (default: the revision as given)."""
    commit = None if revision is None else resolve(root, revision)
    files = _files(root, commit)
    text = {p: data.decode("utf-8", "replace") for p, data in files.items()}
    skills = {
        p: t for p, t in text.items() if p.startswith(f"{_SKILLS_DIR}/") and p.endswith("/SKILL.md")
    }
    agents: dict[str, AgentSnapshot] = {}
    for path in sorted(p for p in text if _is_package_spec(p)):
        folder = path[: -len("spec.yaml")]
        try:
            spec = yaml.safe_load(text[path]) or {}
        except yaml.YAMLError:  # not a package this builder wrote: left out, like a missing one
            continue
        if not isinstance(spec, dict) or not isinstance(spec.get("id"), str):
            continue
        agents[spec["id"]] = AgentSnapshot(
            spec=spec,
            instructions=_body(text.get(folder + "instructions.md", "")),
            workflow=text.get(folder + "workflow.dot"),
            skill=skills.get(str(spec.get("source_path", ""))),
        )
    built = {str(a.spec.get("source_path")) for a in agents.values()}
    return Snapshot(
        label=label or (WORKING_TREE if revision is None else revision),
        agents=agents,
        unbuilt=tuple(sorted(set(skills) - built)),
        skills=skills,
    )
