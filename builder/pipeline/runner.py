"""The phase runner: digests, checkpoints, skipping, resuming, stopping on a failed check.

Phases stay pure; everything with a side effect happens here. Each phase's
input digest covers the phase name and number, the builder version and a
digest of its code, the source (path and digest), the configuration, the
previous phase's digest and output, and whatever the phase adds through an
optional ``extra_digest(inputs)`` (e.g. a template digest). A phase whose digest
matches a passing checkpoint is not run again; its stored output is used.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from builder import __version__
from builder.phases import PHASE_NAMES, UNAVAILABLE_CODE, load_phase, phase_number, resolve_phase
from builder.pipeline.checkpoints import Checkpoint, CheckpointStore
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import PhaseInput, PhaseResult, SkillSource
from builder.pipeline.errors import MindrianError, PipelineError, SourceLocation, UsageError
from builder.pipeline.results import (
    BuildReport,
    PhaseReport,
    PhaseStatus,
    Problem,
    ValidationReport,
    check_failure,
    problem_of,
)
from builder.pipeline.serial import from_plain, to_plain

__all__ = [
    "BuildReport",
    "PhaseLoader",
    "PhaseReport",
    "Progress",
    "ValidationReport",
    "build",
    "build_source",
    "builder_code_digest",
    "code_digest",
    "input_digest",
    "load_phase",
    "phase_range",
    "validate",
]

#: Called after each phase with its report.
Progress = Callable[[PhaseReport], None]

#: Returns the phase object for a phase name; ``builder.phases.load_phase`` unless a caller (a
#: test) passes another.
PhaseLoader = Callable[[str], Any]


@dataclass(frozen=True)
class _Done:
    """A phase that has produced its output in this build (run, cached or loaded)."""

    digest: str
    output: Any
    plain: Any


@functools.cache
def builder_code_digest() -> str:
    """SHA-256 of the builder's and the runtime's Python files and the builder's schemas.

    The version number alone would let an edited phase reuse checkpoints its
    old code wrote; hashing the code makes any change rerun. The runtime is
    included because phases read its contracts (phase 3 introspects
    ``HandoffResult``) and run against it (the generated tests, the e2e probe).
    """
    return code_digest(Path(__file__).resolve().parents[2])


def code_digest(root: Path) -> str:
    """SHA-256 over the code files :func:`builder_code_digest` names, below ``root``."""
    files = sorted(
        p
        for package, pattern in (
            ("builder", "**/*.py"),
            ("builder", "schemas/*.json"),
            ("mindrian", "**/*.py"),
        )
        for p in (root / package).glob(pattern)
        if "node_modules" not in p.parts and "__pycache__" not in p.parts
    )
    digest = hashlib.sha256()
    for path in files:
        name = path.relative_to(root).as_posix().encode("utf-8")
        data = path.read_bytes()
        digest.update(b"%d:%s\x00%d:" % (len(name), name, len(data)))
        digest.update(data)
    return digest.hexdigest()


def input_digest(phase: Any, inputs: PhaseInput, before: _Done | None) -> str:
    """The ``sha256:`` digest of everything that can change ``phase``'s output."""
    extra = getattr(phase, "extra_digest", None)
    payload = {
        "phase": phase.name,
        "number": phase.number,
        "builder_version": __version__,
        "builder_code": builder_code_digest(),
        "source": {"path": inputs.source.path, "digest": inputs.source.digest},
        "config": to_plain(inputs.config.digest_data()),
        "previous": None if before is None else {"digest": before.digest, "output": before.plain},
        "extra": to_plain(extra(inputs)) if callable(extra) else None,
    }
    text = json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def build(
    path: str | Path,
    config: BuildConfig,
    *,
    checkpoints_dir: Path,
    display: str | None = None,
    from_phase: str | None = None,
    until_phase: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
    phases: PhaseLoader | None = None,
) -> BuildReport:
    """Build one SKILL.md through the phases; every problem ends up in the report.

    Only an unknown phase name or ``--from`` after ``--until`` raises (:class:`UsageError`).
    """
    from builder.skill.source import load_source

    shown = display or Path(path).as_posix()
    try:
        source = load_source(Path(path), display=shown)
    except MindrianError as error:
        return BuildReport(
            path=shown, agent_id=None, phases=(), problem=_located(problem_of(error), shown)
        )
    return build_source(
        source,
        config,
        checkpoints_dir=checkpoints_dir,
        from_phase=from_phase,
        until_phase=until_phase,
        force=force,
        progress=progress,
        phases=phases,
    )


def phase_range(from_phase: str | None, until_phase: str | None) -> tuple[int, int]:
    """First and last phase numbers of a build; :class:`UsageError` for unknown names or an empty
    range."""
    start = phase_number(resolve_phase(from_phase)) if from_phase else 1
    stop = phase_number(resolve_phase(until_phase)) if until_phase else len(PHASE_NAMES)
    if start > stop:
        raise UsageError(f"--from {from_phase} comes after --until {until_phase}", code="U003")
    return start, stop


def build_source(
    source: SkillSource,
    config: BuildConfig,
    *,
    checkpoints_dir: Path,
    from_phase: str | None = None,
    until_phase: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
    phases: PhaseLoader | None = None,
) -> BuildReport:
    """Build an already loaded source; see :func:`build`.

    Raises :class:`UsageError` for an unknown phase name or ``--from`` after ``--until``.
    """
    start, stop = phase_range(from_phase, until_phase)
    rerun = force or from_phase is not None
    store = CheckpointStore(checkpoints_dir)
    run = _Build(source, config, store, start, rerun, progress, phases or load_phase)
    return run.through(stop)


class _Build:
    """The state of one build while it walks the phases."""

    def __init__(
        self,
        source: SkillSource,
        config: BuildConfig,
        store: CheckpointStore,
        start: int,
        rerun: bool,
        progress: Progress | None,
        phases: PhaseLoader,
    ) -> None:
        self.source = source
        self.config = config
        self.store = store
        self.start = start
        """Phases before this one are loaded from their checkpoints (``--from``)."""
        self.rerun = rerun
        """Phases from ``start`` on run even when a checkpoint matches (``--from``, ``--force``)."""
        self.progress = progress
        self.phases = phases
        self.agent_id: str | None = None
        self.done: dict[str, _Done] = {}
        self.reports: list[PhaseReport] = []

    def through(self, stop: int) -> BuildReport:
        """Run phases 1..stop; the report says where and why it stopped."""
        for name in PHASE_NAMES[:stop]:
            problem = self._step(name, time.perf_counter())
            if problem is not None:
                return BuildReport(
                    self.source.path,
                    self.agent_id,
                    tuple(self.reports),
                    _located(problem, self.source.path),
                )
        return BuildReport(self.source.path, self.agent_id, tuple(self.reports), None)

    def _step(self, name: str, began: float) -> Problem | None:
        number = phase_number(name)
        status: PhaseStatus
        try:
            phase = self.phases(name)
            inputs = PhaseInput(source=self.source, config=self.config, previous=self._previous())
            before = self.done[PHASE_NAMES[number - 2]] if number > 1 else None
            digest = input_digest(phase, inputs, before)
            if number < self.start:
                (stored, output), status = self._required(phase, digest), "loaded"
            elif self.rerun:
                return self._run(phase, inputs, digest, began)
            else:
                found, status = self._cached(phase, digest, inputs), "cached"
                if found is None:
                    return self._run(phase, inputs, digest, began)
                stored, output = found
            self._accept(phase, digest, output)
        except MindrianError as error:
            status = "unavailable" if error.code == UNAVAILABLE_CODE else "error"
            self._note(PhaseReport(number, name, status, seconds=time.perf_counter() - began))
            return problem_of(error)
        self._note(
            PhaseReport(
                number, name, status, stored.checks, stored.warnings, time.perf_counter() - began
            )
        )
        return None

    def _previous(self) -> Mapping[str, Any]:
        return MappingProxyType({name: done.output for name, done in self.done.items()})

    def _cached(self, phase: Any, digest: str, inputs: PhaseInput) -> tuple[Checkpoint, Any] | None:
        """A passing checkpoint with this digest and its loaded output, else None.

        A phase with side effects may say its checkpoint no longer holds
        (``cache_valid(inputs, output)``, e.g. phase 6 when its package is gone).
        """
        if phase.number == 1:
            self.agent_id = self.store.find_agent(1, phase.name, digest)
        if self.agent_id is None:
            return None
        try:
            stored = self.store.read(self.agent_id, phase.number, phase.name)
            if stored is None or not stored.passed or stored.input_digest != digest:
                return None
            output = from_plain(phase.output_type, stored.output)
        except (PipelineError, TypeError, ValueError, KeyError):
            return None  # a damaged or outdated checkpoint is simply rebuilt
        still_valid = getattr(phase, "cache_valid", None)
        if callable(still_valid) and not still_valid(inputs, output):
            return None
        return stored, output

    def _required(self, phase: Any, digest: str) -> tuple[Checkpoint, Any]:
        """The checkpoint ``--from`` relies on for an earlier phase; an error when unusable."""
        if phase.number == 1:
            self.agent_id = self.store.find_agent(1, phase.name, digest)
        stored = self.store.read(self.agent_id, phase.number, phase.name) if self.agent_id else None
        where = f"phase {phase.name} ({phase.number})"
        if stored is None or stored.input_digest != digest:
            # Phase 1 is found by its digest, so "missing" may also mean the skill changed.
            state = (
                "out of date"
                if stored
                else "missing"
                if phase.number > 1
                else "missing or out of date"
            )
            raise PipelineError(
                f"--from needs the checkpoint of {where}, which is {state}; run the build without "
                "--from first",
                code="P004",
            )
        if not stored.passed:
            raise PipelineError(
                f"--from needs {where} to have passed; its checkpoint records a failed check",
                code="P004",
            )
        try:
            return stored, from_plain(phase.output_type, stored.output)
        except (TypeError, ValueError, KeyError) as exc:
            raise PipelineError(
                f"checkpoint of {where} no longer matches its output type: {exc}", code="P005"
            ) from None

    def _run(self, phase: Any, inputs: PhaseInput, digest: str, began: float) -> Problem | None:
        try:
            result: PhaseResult[Any] = phase.run(inputs)
            _check_names(phase, result)
        except MindrianError as error:
            if self.agent_id is not None:
                self.store.remove_from(self.agent_id, phase.number)
            self._note(
                PhaseReport(phase.number, phase.name, "error", seconds=time.perf_counter() - began)
            )
            return problem_of(error)
        failed = next((c for c in result.checks if not c.passed), None)
        if phase.number == 1 and failed is None:
            self.agent_id = result.output.id
        if self.agent_id is not None:
            self._save(phase, digest, result, passed=failed is None)
        if failed is not None:
            self._note(
                PhaseReport(
                    phase.number,
                    phase.name,
                    "failed",
                    result.checks,
                    result.warnings,
                    time.perf_counter() - began,
                )
            )
            return check_failure(phase.number, phase.name, failed)
        self._accept(phase, digest, result.output)
        self._note(
            PhaseReport(
                phase.number,
                phase.name,
                "ok",
                result.checks,
                result.warnings,
                time.perf_counter() - began,
            )
        )
        return None

    def _save(self, phase: Any, digest: str, result: PhaseResult[Any], *, passed: bool) -> None:
        assert self.agent_id is not None
        checkpoint = Checkpoint(
            phase=phase.name,
            number=phase.number,
            builder_version=__version__,
            input_digest=digest,
            passed=passed,
            checks=result.checks,
            warnings=result.warnings,
            output=to_plain(result.output),
        )
        if self.store.write(self.agent_id, checkpoint):
            # Later checkpoints were derived from what this one replaced.
            self.store.remove_from(self.agent_id, phase.number + 1)

    def _accept(self, phase: Any, digest: str, output: Any) -> None:
        self.done[phase.name] = _Done(digest=digest, output=output, plain=to_plain(output))

    def _note(self, report: PhaseReport) -> None:
        self.reports.append(report)
        if self.progress is not None:
            self.progress(report)


def _located(problem: Problem, path: str) -> Problem:
    """Problems without a place point at the SKILL.md being built, so every error line names a
    file."""
    return problem if problem.location else replace(problem, location=SourceLocation(path))


def _check_names(phase: Any, result: PhaseResult[Any]) -> None:
    """A phase must return one verdict per declared check, in order (a bug otherwise)."""
    names = tuple(c.name for c in result.checks)
    if names != tuple(phase.checks):
        raise PipelineError(
            f"phase {phase.name} returned checks {', '.join(names) or 'none'}; it declares "
            f"{', '.join(phase.checks)}",
            code="P008",
        )


def validate(
    path: str | Path,
    config: BuildConfig,
    *,
    display: str | None = None,
    phases: PhaseLoader | None = None,
) -> ValidationReport:
    """Run phase 1 only, writing nothing: every failed check or the error raised."""
    from builder.skill.source import load_source

    shown = display or Path(path).as_posix()
    try:
        source = load_source(Path(path), display=shown)
        phase = (phases or load_phase)(PHASE_NAMES[0])
        result: PhaseResult[Any] = phase.run(PhaseInput(source=source, config=config))
    except MindrianError as error:
        return ValidationReport(path=shown, problems=(_located(problem_of(error), shown),))
    failures = tuple(
        _located(check_failure(1, phase.name, c), shown) for c in result.checks if not c.passed
    )
    if failures:
        return ValidationReport(path=shown, problems=failures)
    return ValidationReport(path=shown, agent_id=result.output.id, agent_type=result.output.type)
