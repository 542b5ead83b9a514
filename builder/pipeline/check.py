"""``mindrian check``: regenerate every skill in a scratch folder and diff it against
``generated/``.

Everything is rebuilt from nothing, phases 1–7, with a fresh checkpoint folder
and a fresh embedded registry inside a temporary directory (never the
project's own, and never Neo4j even when ``NEO4J_URI`` is set). The scratch
output is then compared file by file with the committed folder: a changed
byte, a file only one side has, all count as drift and are shown as a unified
diff with paths relative to the project root. Caches that Python or pytest may
leave in the committed folder (``__pycache__``, ``.pytest_cache``, ``*.pyc``) are
not part of the builder's output and are ignored.
"""

from __future__ import annotations

import difflib
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from builder.pipeline.batch import BatchOptions, Listener, Target, build_many
from builder.pipeline.config import BuildConfig
from builder.pipeline.results import BuildReport

__all__ = [
    "IGNORED_DIRS",
    "IGNORED_SUFFIXES",
    "CheckResult",
    "check",
    "diff_trees",
    "read_tree",
    "summary",
]

#: Folders under the output folder that are caches, not builder output.
IGNORED_DIRS = frozenset({"__pycache__", ".pytest_cache"})
#: File suffixes that are caches, not builder output.
IGNORED_SUFFIXES = (".pyc", ".pyo")


@dataclass(frozen=True)
class CheckResult:
    """The outcome of ``mindrian check``."""

    builds: tuple[BuildReport, ...]
    """One report per skill, in build order."""
    drift: tuple[str, ...]
    """Paths (relative to the project root) that differ, sorted; empty when clean."""
    diff: str
    """The unified diff of every drifted file (committed → regenerated)."""
    files: int
    """Files compared."""

    @property
    def clean(self) -> bool:
        """Every skill built and nothing drifted."""
        return not self.drift and all(r.problem is None for r in self.builds)


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative POSIX path (caches left out); empty when ``root`` is
    missing."""
    if not root.is_dir():
        return {}
    files = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if (
            not path.is_file()
            or IGNORED_DIRS.intersection(relative.parts)
            or path.suffix in IGNORED_SUFFIXES
        ):
            continue
        files[relative.as_posix()] = path.read_bytes()
    return files


def _lines(data: bytes) -> list[str] | None:
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def _file_diff(name: str, old: bytes | None, new: bytes | None) -> str:
    """The unified diff of one file; ``None`` for the side that does not have it."""
    before = "/dev/null" if old is None else f"a/{name}"
    after = "/dev/null" if new is None else f"b/{name}"
    old_lines, new_lines = _lines(old or b""), _lines(new or b"")
    if old_lines is None or new_lines is None:
        return f"Binary files {before} and {after} differ\n"
    text = "".join(difflib.unified_diff(old_lines, new_lines, before, after))
    if text and not text.endswith("\n"):
        text += "\n\\ No newline at end of file\n"
    return (
        text or f"--- {before}\n+++ {after}\n(no line differs; the bytes do, e.g. line endings)\n"
    )


def diff_trees(
    committed: Mapping[str, bytes], fresh: Mapping[str, bytes], prefix: str
) -> tuple[tuple[str, ...], str]:
    """Paths that differ (``prefix/…``) and their unified diff, committed → regenerated."""
    drift = []
    parts = []
    for name in sorted(set(committed) | set(fresh)):
        old, new = committed.get(name), fresh.get(name)
        if old == new:
            continue
        shown = f"{prefix}/{name}" if prefix else name
        drift.append(shown)
        parts.append(_file_diff(shown, old, new))
    return tuple(drift), "".join(parts)


def check(
    root: Path,
    skills: Sequence[Target],
    config: BuildConfig,
    committed_dir: Path,
    *,
    jobs: int = 1,
    listener: Listener | None = None,
) -> CheckResult:
    """Regenerate ``skills`` in a scratch folder and compare with ``committed_dir``."""
    from builder.phases.registration import RegistrationPhase

    with tempfile.TemporaryDirectory(prefix="mindrian-check-") as scratch:
        work = Path(scratch)
        out_dir = work / "generated"
        # present from the start, so phase 7's probe server can load while phases 1-6 run
        out_dir.mkdir()
        options = BatchOptions(checkpoints_dir=work / "checkpoints", out_dir=out_dir, jobs=jobs)
        fresh_config = config.with_switches(out_dir=str(out_dir), neo4j_uri=None)
        # An empty environment: a NEO4J_URI of the caller must not send the check to a server.
        registration = RegistrationPhase(work / "registry.lbug", env={})
        builds = build_many(
            skills, fresh_config, options, listener=listener, registration=registration
        )
        fresh = read_tree(out_dir)
    committed = read_tree(committed_dir)
    drift, diff = diff_trees(committed, fresh, _relative(committed_dir, root))
    return CheckResult(
        builds=builds, drift=drift, diff=diff, files=len(set(committed) | set(fresh))
    )


def _relative(folder: Path, root: Path) -> str:
    try:
        return folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return folder.as_posix()


def summary(result: CheckResult, shown: str) -> Iterable[str]:
    """The closing lines of ``mindrian check``."""
    failed = [r for r in result.builds if r.problem is not None]
    if failed:
        yield f"check: {len(failed)} skill(s) failed to build; {shown} cannot be confirmed"
    if result.drift:
        yield (
            f"check: {len(result.drift)} file(s) in {shown} differ from a fresh build (run "
            "`mindrian build --all` and commit)"
        )
    if result.clean:
        yield (
            f"check: {shown} matches a fresh build of {len(result.builds)} skill(s) "
            f"({result.files} files)"
        )
