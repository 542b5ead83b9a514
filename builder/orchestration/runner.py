"""The phase runner: digests, checkpoints, skipping, resuming, stopping on a failed check.

Phases stay pure; everything with a side effect happens here. Each phase's
input digest covers the phase name and number, the builder version and a
digest of its own code (:mod:`builder.pipeline.code_digest`), the source
(path and digest), the configuration, the digests of every earlier phase's
output, and whatever the phase adds through an optional
``extra_digest(inputs)`` (e.g. a template digest). A phase whose digest
matches a passing checkpoint is not run again.

A build is a :class:`Run`: one typed step per phase (:data:`Step`), paused at
a held step and resumed there, in this process or another; a batch begins each
skill's run once (:func:`start`) and walks it wherever its phases run.

Only what can change an output is in its digest, so work stops early: an edit
of phase 6's templates reruns phase 6, and phase 7 only if the package's files
changed. Deciding that a phase is current reads its checkpoint's head (digests
and verdicts), not its output; outputs are loaded when a phase that reads them
has to run, so a build with nothing to do parses no phase output at all.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from builder import __version__
from builder.orchestration.validation import located
from builder.phases import PHASE_NAMES, load_phase, phase_number, resolve_phase
from builder.phases.keys import DigestKey, load_key
from builder.phases.outputs import AnyPhase, Inputs, Outputs
from builder.pipeline.build_results import BuildReport, PhaseReport, PhaseStatus
from builder.pipeline.checkpoints import Checkpoint, CheckpointStore, output_digest
from builder.pipeline.code_digest import phase_code_digest
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import PhaseInput, PhaseResult, SkillSource
from builder.pipeline.errors import CompilerError, PipelineError, UsageError
from builder.pipeline.results import Problem, ValidationReport, check_failure, problem_of
from builder.pipeline.serial import from_plain, to_plain
from builder.pipeline.services import Services
from builder.pipeline.staged import Staged
from builder.pipeline.stamps import PhaseStamp, SavedPhase, Stamp

__all__ = [
    "SHIPPED",
    "BuildReport",
    "Cached",
    "Failed",
    "Held",
    "Hold",
    "KeyLoader",
    "PhaseLoader",
    "PhaseReport",
    "Phases",
    "Progress",
    "Ran",
    "Run",
    "Serviced",
    "Step",
    "ValidationReport",
    "build_source",
    "chain_digest",
    "current_report",
    "identity",
    "input_digest",
    "located",
    "name_line",
    "phase_range",
    "scratch_build",
    "stamped_report",
    "start",
]

#: Called after each phase with its report.
Progress = Callable[[PhaseReport], None]

#: Asked with a phase and its inputs just before the phase would run (never when it is cached or
#: loaded): True holds it back, so the build stops there with that phase neither run nor reported
#: (a batch runs it later, e.g. phase 6 once every package's tests ran in one session); a
#: :class:`Staged` holds it too, and is handed to the phase (``inputs.staged``) when it runs.
Hold = Callable[[AnyPhase, Inputs], bool | Staged]

#: Returns the phase object for a phase name; ``builder.phases.load_phase`` unless a caller (a
#: test) passes another.
PhaseLoader = Callable[[str], AnyPhase]

#: Returns what the input digest takes of a phase, by name: :func:`builder.phases.keys.load_key`
#: stands for :func:`builder.phases.load_phase` without importing the phases; any phase loader
#: is one too.
KeyLoader = Callable[[str], DigestKey]


@dataclass(frozen=True)
class Phases:
    """The phases a build runs, and what a batch may do with them."""

    load: PhaseLoader
    """Each phase by name."""
    keys: KeyLoader
    """What stamps check each phase's digest with (no phase need be imported)."""
    portable: bool
    """A worker process gets the same phases by loading them again (the shipped ones, which
    pickle by name); False: phases that exist in this process only (a test's doubles)."""

    @classmethod
    def local(cls, load: PhaseLoader) -> Phases:
        """Phases a caller made (a test's doubles): they are their own keys and stay here."""
        return cls(load, load, portable=False)


#: The phases of the pipeline as shipped.
SHIPPED = Phases(load_phase, load_key, portable=True)
#: The phases a build runs when its caller names none; tests put their doubles here.
DEFAULT = SHIPPED


@dataclass(frozen=True)
class Serviced:
    """A phase loader whose phases run their children as :attr:`services` say (it pickles when
    :attr:`base` and the services do)."""

    base: PhaseLoader
    """The loader of every phase."""
    services: Services
    """How their children run."""

    def __call__(self, name: str) -> AnyPhase:
        return self.base(name).with_services(self.services)


class _Done:
    """A phase that has produced its output in this build (run, cached or loaded). It pickles
    (a run paused in one process resumes in another): its output by value, or the read of its
    checkpoint."""

    def __init__(self, digest: str, chain: str, load: _Stored | None, output: Any = None) -> None:
        self.digest = digest
        """The phase's input digest."""
        self.chain = chain
        """:func:`chain_digest` up to and including this phase's output."""
        self._load = load
        self._output = output
        self._loaded = load is None

    def output(self) -> Any:
        """The typed output, read from its checkpoint on first use when it was not run here."""
        if self._load is not None and not self._loaded:
            self._output, self._loaded = self._load(), True
        return self._output


def chain_digest(before: str | None, output: str) -> str:
    """The digest of every output so far: the previous chain and this output's digest."""
    text = f"{before or ''}|{output}"
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def input_digest(phase: DigestKey, inputs: Inputs, chain: str | None) -> str:
    """The ``sha256:`` digest of everything that can change ``phase``'s output.

    ``chain`` is :func:`chain_digest` of the earlier phases' outputs (None for phase 1).
    The digest is of the canonical JSON of ``{"phase", "number", "builder_version", "code",
    "config", "source", "previous", "extra"}``; what no skill changes is serialised
    once per configuration (:func:`_template`).
    """
    source = {"path": inputs.source.path, "digest": inputs.source.digest}
    varying = {
        "extra": to_plain(phase.extra_digest(inputs)),
        "previous": chain,
        "source": source,
    }
    pieces = _template(phase, inputs.config)
    text = pieces[0] + "".join(
        _encode(varying[key]) + piece for key, piece in zip(_VARYING, pieces[1:], strict=True)
    )
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


#: Canonical JSON (sorted keys, no spaces): a dict's text is then its members' texts joined.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
#: How :data:`_CANONICAL` writes one string (it does not escape non-ASCII characters).
_CANONICAL_STRING = json.encoder.encode_basestring


def _encode(value: Any) -> str:
    """:data:`_CANONICAL`'s text of ``value``; a mapping of strings (the source, most extras)
    spelled out, as the encoder sets itself up anew for every mapping it is given."""
    strings = type(value) is dict and all(type(k) is str for k in value)
    if strings and all(type(v) is str for v in value.values()):
        string = _CANONICAL_STRING
        return "{" + ",".join(f"{string(k)}:{string(value[k])}" for k in sorted(value)) + "}"
    return _CANONICAL.encode(value)


#: The members of an input digest's payload that differ between skills, in key order.
_VARYING = ("extra", "previous", "source")
#: The configuration whose templates :func:`_template` holds, and those templates by phase.
_TEMPLATES: list[tuple[BuildConfig, dict[tuple[str, int, str], tuple[str, ...]]]] = []


def _template(phase: DigestKey, config: BuildConfig) -> tuple[str, ...]:
    """The canonical JSON text of ``phase``'s payload cut around the :data:`_VARYING` values:
    the value of ``_VARYING[i]`` goes between pieces ``i`` and ``i + 1``.

    Kept for the last configuration asked about, by identity: a batch asks seven
    times a skill with one configuration, and serialising it each time cost more
    than the rest of a no-op's digests. A :class:`BuildConfig` is frozen and its
    mappings are never changed once it is made (:meth:`~BuildConfig.with_switches`
    copies), so the same object always serialises the same.
    """
    slot = _TEMPLATES[0] if _TEMPLATES else None
    if slot is None or slot[0] is not config:
        slot = (config, {})
        _TEMPLATES[:] = [slot]  # one step: a thread never pairs a config with another's texts
    code = phase_code_digest(phase)
    key = (phase.name, phase.number, code)
    found = slot[1].get(key)
    if found is None:
        found = slot[1][key] = _cut(
            {
                "phase": phase.name,
                "number": phase.number,
                "builder_version": __version__,
                "code": code,
                "config": to_plain(config.digest_data()),
            }
        )
    return found


def _cut(shared: dict[str, Any]) -> tuple[str, ...]:
    """The text of ``shared`` and the :data:`_VARYING` members, in key order, cut where each
    varying value goes."""
    pieces, current = [], "{"
    for index, key in enumerate(sorted([*shared, *_VARYING])):
        # Every key is a plain identifier: quoted as it is, as JSON would.
        current += f'{"," if index else ""}"{key}":'
        if key in shared:
            current += _CANONICAL.encode(shared[key])
        else:
            pieces.append(current)
            current = ""
    return (*pieces, current + "}")


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
    hold: Hold | None = None,
) -> BuildReport:
    """Build one skill, read by :func:`builder.skill.source.load_source`, through the phases;
    every problem ends up in the report.

    Only an unknown phase name or ``--from`` after ``--until`` raises (:class:`UsageError`).
    """
    first, stop = phase_range(from_phase, until_phase)
    rerun = first if force or from_phase is not None else None
    run = Run(source, config, CheckpointStore(checkpoints_dir), start=first, rerun_from=rerun)
    return run.advance(stop, phases or DEFAULT.load, hold=hold, progress=progress)


def scratch_build(
    source: SkillSource,
    config: BuildConfig,
    *,
    until_phase: str | None = None,
    progress: Progress | None = None,
    phases: PhaseLoader | None = None,
) -> tuple[BuildReport, Outputs]:
    """Phases 1..``until_phase`` of ``source`` in memory: every phase runs, nothing is
    cached, loaded or written, and no digest is taken (digests only name and check
    checkpoints); the report, and the outputs of the phases that passed.

    For a build whose checkpoints would be thrown away unread (``mindrian check``):
    the phases, and so every byte they write, are the same as in :func:`build_source`;
    what is skipped is rendering each output as checkpoint YAML.
    """
    _, stop = phase_range(None, until_phase)
    run = Run(source, config, None)
    return run.advance(stop, phases or DEFAULT.load, progress=progress), run.outputs


@dataclass(frozen=True)
class Cached:
    """The phase's passing checkpoint holds, or ``--from`` loaded it: nothing ran."""


@dataclass(frozen=True)
class Ran:
    """The phase ran and all its checks passed."""


@dataclass(frozen=True)
class Held:
    """The phase would have run and was kept back: by the build's :data:`Hold`, or because the
    build may run nothing (:func:`current_report`)."""


@dataclass(frozen=True)
class Failed:
    """The phase failed a check or raised a stage error; the build stops with ``problem``."""

    problem: Problem
    """What the report says, located by :meth:`Run.advance`."""


#: What one step of the runner's loop gives (pydantic-graph's habit: the loop dispatches on it,
#: no exception carries control).
Step = Cached | Ran | Held | Failed


def current_report(
    source: SkillSource,
    config: BuildConfig,
    *,
    checkpoints_dir: Path,
    until_phase: str | None = None,
    phases: PhaseLoader | None = None,
) -> BuildReport | None:
    """The report of a build with nothing to do (every phase cached), else None; runs nothing.

    Reads checkpoint heads only, so a caller can tell the skills that need work
    from those that do not before starting workers for them.
    """
    _, stop = phase_range(None, until_phase)
    run = Run(source, config, CheckpointStore(checkpoints_dir))
    run.walk_cached(stop, phases or DEFAULT.load)
    return run.report if run.finished(stop) else None


def start(
    source: SkillSource,
    config: BuildConfig,
    *,
    checkpoints_dir: Path | None,
    phases: PhaseLoader,
    index: CheckpointStore | None,
    from_phase: str | None = None,
    rerun_from: int | None = None,
    current: int | None = None,
) -> Run:
    """A skill's build begun, in the one entry a batch makes into the runner for it: the run
    knows the skill's identity and, when ``current`` is given, has taken every step it can
    without running a phase.

    The identity (:attr:`Run.identity`) comes from the phase-1 index of ``index`` when phase
    1 is current there; else phase 1 runs here, writing nothing (the batch looks for collisions
    first), and the run keeps its result for its first step. Only when the identity came from
    the index are the steps up to phase ``current`` taken from checkpoint heads
    (:meth:`Run.walk_cached`): a skill whose phase 1 had to run is not current.
    ``checkpoints_dir`` None: a scratch run (:func:`scratch_build`); ``from_phase`` and
    ``rerun_from`` are ``--from`` and the first phase that runs even when cached.
    """
    first, _ = phase_range(from_phase, None)
    store = CheckpointStore(checkpoints_dir) if checkpoints_dir is not None else None
    run = Run(source, config, store, start=first, rerun_from=rerun_from)
    if run.identify(index, phases) and current is not None:
        run.walk_cached(current, phases)
    return run


def stamped_report(
    source: SkillSource,
    config: BuildConfig,
    stamp: Stamp,
    *,
    checkpoints_dir: Path,
    keys: KeyLoader,
) -> BuildReport | None:
    """The report of a build of every phase with nothing to do, decided from ``stamp`` (see
    :mod:`builder.pipeline.stamps`) rather than from checkpoint heads; None when it cannot say.

    Every phase's input digest is computed as a build would and must be the
    recorded one; the recorded output digests stand for the outputs, which are
    read from their checkpoints only if a phase's ``extra_digest`` asks for one.
    The caller has verified the stamp's files (the source's, the checkpoints',
    the installed package's), which is what the phases' ``cache_valid`` looks at.
    ``source.files`` may be left empty: no phase runs here and the input digest
    takes ``source.digest``, so an ``extra_digest`` that read the files could
    only differ from the recorded one (a fallback), never match wrongly.

    ``keys`` gives each phase's identity (:mod:`builder.phases.keys`): no phase is run, so
    none need be imported.
    """
    if len(stamp.phases) != len(PHASE_NAMES):
        return None
    store = CheckpointStore(checkpoints_dir)
    outputs = Outputs()
    reports = []
    chain: str | None = None
    for name, recorded in zip(PHASE_NAMES, stamp.phases, strict=True):
        began, cpu_began = time.perf_counter(), time.thread_time()
        phase = keys(name)
        if (recorded.number, recorded.phase) != (phase.number, phase.name):
            return None
        try:
            digest = input_digest(phase, PhaseInput(source, config, outputs), chain)
        except (CompilerError, OSError):  # the build reports it
            return None
        if digest != recorded.input_digest:
            return None
        chain = chain_digest(chain, recorded.output_digest)
        done = _Done(digest, chain, _stored_output(store, stamp.agent_id, phase))
        outputs = outputs.after(phase.name, done.output)
        seconds, cpu = time.perf_counter() - began, time.thread_time() - cpu_began
        reports.append(
            PhaseReport(
                phase.number, phase.name, "cached", recorded.checks, recorded.warnings, seconds, cpu
            )
        )
    return BuildReport(source.path, stamp.agent_id, tuple(reports), None, package=stamp.identifier)


def _stored_output(store: CheckpointStore, agent_id: str | None, phase: DigestKey) -> _Stored:
    """Reads a phase's stored output when called; P005 when it no longer fits."""
    return _Stored(store, agent_id, phase)


class _Readable(Protocol):
    """What reading a phase's output from its checkpoint takes of the phase."""

    @property
    def name(self) -> str: ...
    @property
    def number(self) -> int: ...
    @property
    def output_type(self) -> Any: ...


@dataclass(frozen=True)
class _Read:
    """A phase as a read of its output needs it, in a pickle (a phase object need not pickle)."""

    name: str
    """The phase's name."""
    number: int
    """The phase's number."""
    output_type: Any
    """Its output type."""


@dataclass(frozen=True)
class _Stored:
    """The read of a phase's output from its checkpoint (it pickles, unlike a closure)."""

    store: CheckpointStore
    """Where the checkpoint is."""
    agent_id: str | None
    """The skill's agent id (known by the time an output is read)."""
    phase: _Readable
    """The phase; its output type is asked for when the output is read (a phase key imports
    its phase for it, which a no-op never does)."""

    def __call__(self) -> Any:
        phase = self.phase
        where = f"phase {phase.name} ({phase.number})"
        assert self.agent_id is not None
        stored = self.store.read(self.agent_id, phase.number, phase.name)
        if stored is None:
            raise PipelineError(
                f"the checkpoint of {where} disappeared during the build", code="P005"
            )
        try:
            return from_plain(phase.output_type, stored.output)
        except (TypeError, ValueError, KeyError) as exc:
            raise PipelineError(
                f"checkpoint of {where} no longer matches its output type: {exc}", code="P005"
            ) from None

    def __reduce__(self) -> tuple[Any, ...]:
        phase = _Read(self.phase.name, self.phase.number, self.phase.output_type)
        return _Stored, (self.store, self.agent_id, phase)


def identity(
    source: SkillSource,
    config: BuildConfig,
    *,
    store: CheckpointStore | None,
    phases: PhaseLoader,
) -> tuple[str, str | None] | None:
    """The agent id and package identifier phase 1 gives ``source``; None when phase 1 fails.

    Known from the index of ``store`` when phase 1 is current there, else phase
    1 runs and nothing is written (:meth:`Run.identify`).
    """
    run = Run(source, config, None)
    run.identify(store, phases)
    return run.identity


def name_line(source: SkillSource, config: BuildConfig, *, phases: PhaseLoader) -> int:
    """The SKILL.md line the agent id comes from (0 when unknown); phase 1 runs, writing
    nothing."""
    return _id_line(_first_result(phases(PHASE_NAMES[0]), PhaseInput(source, config, Outputs())))


def _id_line(result: PhaseResult[Any] | None) -> int:
    """The SKILL.md line of the agent id in phase 1's result (0 when it failed or has none)."""
    passed = result is not None and all(c.passed for c in result.checks)
    lines = result.output.field_lines if result is not None and passed else {}
    keys = ("metadata.mindrian.id", "id", "name")
    return next((int(lines[k]) for k in keys if k in lines), 0)


def _first_result(phase: AnyPhase, inputs: Inputs) -> PhaseResult[Any] | None:
    """What phase 1 returns, None when it raises; nothing is written."""
    try:
        result: PhaseResult[Any] = phase.run(inputs)
    except Exception:  # the skill's own build reports it (as I001 when it is a bug)
        return None
    return result


@dataclass(frozen=True)
class _Leg:
    """What one walk of a run is given; nothing of it is kept once the walk returns (a run
    pickles, its phases, hold and progress need not)."""

    phases: PhaseLoader
    """Each phase by name."""
    hold: Hold | None
    """Asked before a phase runs; True stops the walk there (:data:`Hold`)."""
    progress: Progress | None
    """Called after each phase with its report."""
    cached_only: bool
    """Hold every phase that would run, and any that would fail (:meth:`Run.walk_cached`)."""


class Run:
    """One skill's build: a loop of typed steps (:data:`Step`), one per phase in order.

    A held step pauses the run at that phase, and the next :meth:`advance` resumes there:
    in this process or in another (a run pickles), with the phases and their services that
    walk is given. So a batch begins each skill's build once (:func:`start`) and walks it
    in legs, where its phases run, and no phase is stepped twice but a held one.
    """

    def __init__(
        self,
        source: SkillSource,
        config: BuildConfig,
        store: CheckpointStore | None,
        *,
        start: int = 1,
        rerun_from: int | None = None,
    ) -> None:
        self.source = source
        """The skill, as read once for its whole build."""
        self.config = config
        """The build's configuration."""
        self.store = store
        """Where checkpoints are read and written; None: a scratch build (:func:`scratch_build`)."""
        self.start = start
        """Phases before this one are loaded from their checkpoints (``--from``)."""
        self.rerun_from = len(PHASE_NAMES) + 1 if rerun_from is None else rerun_from
        """Phases from this one on run even when a checkpoint matches (``--from``, ``--force``,
        ``register``)."""
        self.agent_id: str | None = None
        """The agent id, once phase 1 is done (or found current)."""
        self.identity: tuple[str, str | None] | None = None
        """The agent id and package identifier phase 1 gives (:meth:`identify`); None when phase 1
        fails or was not asked."""
        self.done: dict[str, _Done] = {}
        """The phases stepped so far, in order."""
        self.saved: dict[str, SavedPhase] = {}
        """The passing checkpoints this run wrote, by phase (a build's stamp takes them, as
        long as each file still holds, rather than reading them back)."""
        self.reports: list[PhaseReport] = []
        """One report per phase stepped, in order (a held phase has none)."""
        self.problem: Problem | None = None
        """Why the run stopped for good (a failed step)."""
        self.held = False
        """The last walk stopped at a held step: the next one resumes there."""
        self._first: tuple[str, PhaseResult[Any]] | None = None
        """Phase 1's input digest and result when :meth:`identify` ran it."""
        self._staged: tuple[str, object] | None = None
        """The held phase's name and what its hold kept (:class:`Staged`), until it runs."""
        self._leg: _Leg | None = None
        self._cpu_began = 0.0

    @property
    def outputs(self) -> Outputs:
        """What the phases done so far hand over to the next one."""
        outputs = Outputs()
        for name, done in self.done.items():
            outputs = outputs.after(name, done.output)
        return outputs

    @property
    def report(self) -> BuildReport:
        """The phases stepped so far, and the problem that stopped the run, if any."""
        return BuildReport(self.source.path, self.agent_id, tuple(self.reports), self.problem)

    def finished(self, stop: int) -> bool:
        """Whether phases 1..``stop`` are done and passed."""
        return self.problem is None and len(self.done) >= stop

    def advance(
        self,
        stop: int,
        phases: PhaseLoader,
        *,
        hold: Hold | None = None,
        progress: Progress | None = None,
    ) -> BuildReport:
        """Step from where the run stopped through phase ``stop``, or to a held or failed step;
        the report of every phase stepped so far says where and why it stopped."""
        return self._walk(stop, _Leg(phases, hold, progress, cached_only=False))

    def walk_cached(self, stop: int, phases: PhaseLoader) -> None:
        """Step through phase ``stop`` as long as each phase is current, running none: the first
        that would run, or fail, is held for the next walk."""
        self._walk(stop, _Leg(phases, None, None, cached_only=True))

    def identify(self, index: CheckpointStore | None, phases: PhaseLoader) -> bool:
        """Set :attr:`identity` from the phase-1 index of ``index``, else by running phase 1
        (writing nothing; its result is this run's phase 1 when its digest still holds); True
        when the index knew it."""
        phase = phases(PHASE_NAMES[0])
        inputs = PhaseInput(source=self.source, config=self.config, previous=Outputs())
        digest = input_digest(phase, inputs, None)
        known = index.identity(digest) if index is not None else None
        if known is not None:
            self.identity = known.agent_id, known.identifier
            return True
        result = _first_result(phase, inputs)
        self._first = (digest, result) if result is not None else None
        if result is not None and all(c.passed for c in result.checks):
            self.identity = result.output.id, result.output.identifier
        return False

    def name_line(self, phases: PhaseLoader) -> int:
        """The SKILL.md line the agent id comes from (0 when unknown): from phase 1's result
        when :meth:`identify` ran it, else by :func:`name_line`."""
        if self._first is None:
            return name_line(self.source, self.config, phases=phases)
        return _id_line(self._first[1])

    def _walk(self, stop: int, leg: _Leg) -> BuildReport:
        self._leg, self.held = leg, False
        try:
            for name in PHASE_NAMES[len(self.done) : stop] if self.problem is None else ():
                self._cpu_began = time.thread_time()
                kept = len(self.reports)
                match self._step(name, time.perf_counter()):
                    case Failed() if leg.cached_only:
                        # A walk that runs nothing cannot tell; the build's own walk reports it.
                        del self.reports[kept:]
                        self.held = True
                    case Failed(problem):
                        self.problem = located(problem, self.source.path)
                    case Held():
                        self.held = True
                    case Cached() | Ran():
                        continue
                break
        finally:
            self._leg = None
        return self.report

    def _walking(self) -> _Leg:
        assert self._leg is not None, "a run steps only while it walks"
        return self._leg

    def _step(self, name: str, began: float) -> Step:
        number = phase_number(name)
        status: PhaseStatus
        leg = self._walking()
        try:
            phase = leg.phases(name)
            inputs = PhaseInput(
                source=self.source,
                config=self.config,
                previous=self.outputs,
                staged=self._take_staged(name),
            )
            if self.store is None:
                return self._run_unless_held(
                    phase, inputs, self._scratch_digest(phase), None, began
                )
            chain = self.done[PHASE_NAMES[number - 2]].chain if number > 1 else None
            digest = input_digest(phase, inputs, chain)
            if number < self.start:
                stored, status = self._required(phase, digest), "loaded"
            elif number >= self.rerun_from:
                return self._run_unless_held(phase, inputs, digest, chain, began)
            else:
                found, status = self._cached(phase, digest, inputs), "cached"
                if found is None and leg.cached_only:
                    return Held()
                if found is None:
                    return self._run_unless_held(phase, inputs, digest, chain, began)
                stored = found
            self._accept_stored(phase, digest, chain, stored)
        # A stage error, or this skill's files refused: disk full, read-only, name too long …
        except (CompilerError, OSError) as error:
            self._note(PhaseReport(number, name, "error", seconds=time.perf_counter() - began))
            return Failed(problem_of(error))
        self._note(
            PhaseReport(
                number, name, status, stored.checks, stored.warnings, time.perf_counter() - began
            )
        )
        return Cached()

    def _scratch_digest(self, phase: AnyPhase) -> str:
        """A scratch build takes no digest, but for phase 1 when :meth:`identify` ran it (to
        match its result)."""
        if phase.number != 1 or self._first is None:
            return ""
        return input_digest(phase, PhaseInput(self.source, self.config, Outputs()), None)

    def _cached(self, phase: AnyPhase, digest: str, inputs: Inputs) -> Checkpoint | None:
        """The head of a passing checkpoint with this digest, else None.

        A phase with side effects may say its checkpoint no longer holds
        (``cache_valid(inputs, output)``, e.g. phase 6 when its package is gone).
        """
        store = self._store()
        try:
            if phase.number == 1:
                self.agent_id = store.find_agent(1, phase.name, digest)
            if self.agent_id is None:
                return None
            stored = store.read_head(self.agent_id, phase.number, phase.name)
        except PipelineError:
            return None  # a damaged or outdated checkpoint is simply rebuilt
        if stored is None or not stored.passed or stored.input_digest != digest:
            return None
        try:
            return stored if phase.cache_valid(inputs, self._load(phase)) else None
        except PipelineError:
            return None  # its output no longer loads: rebuilt like a damaged checkpoint

    def _required(self, phase: AnyPhase, digest: str) -> Checkpoint:
        """The checkpoint head ``--from`` relies on for an earlier phase; an error when unusable."""
        store = self._store()
        if phase.number == 1:
            self.agent_id = store.find_agent(1, phase.name, digest)
        stored = store.read_head(self.agent_id, phase.number, phase.name) if self.agent_id else None
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
        return stored

    def _load(self, phase: DigestKey) -> _Stored:
        """Reads a phase's stored output when first asked for; P005 when it no longer fits."""
        return _stored_output(self._store(), self.agent_id, phase)

    def _take_staged(self, name: str) -> object:
        """What the hold kept for phase ``name`` when it was held (once: the step takes it)."""
        staged, self._staged = self._staged, None
        return staged[1] if staged is not None and staged[0] == name else None

    def _run_unless_held(
        self, phase: AnyPhase, inputs: Inputs, digest: str, chain: str | None, began: float
    ) -> Step:
        hold = self._walking().hold
        held = hold(phase, inputs) if hold is not None else False
        if isinstance(held, Staged):
            self._staged = (phase.name, held.value)
        if held:
            return Held()
        return self._run(phase, inputs, digest, chain, began)

    def _result(self, phase: AnyPhase, inputs: Inputs, digest: str) -> PhaseResult[Any]:
        """What the phase returns: phase 1's result from :meth:`identify` when it is for this
        digest (phase 1 does not run twice), else the phase's ``run``."""
        if phase.number == 1:
            first, self._first = self._first, None
            if first is not None and digest and first[0] == digest:
                return first[1]
        return phase.run(inputs)

    def _run(
        self, phase: AnyPhase, inputs: Inputs, digest: str, chain: str | None, began: float
    ) -> Step:
        try:
            result = self._result(phase, inputs, digest)
            _check_names(phase, result)
        except (CompilerError, OSError) as error:
            if self.agent_id is not None and self.store is not None:
                # On a disk that refused the phase, cleaning may fail too; the digests still
                # keep a stale checkpoint from being used.
                with contextlib.suppress(OSError):
                    self.store.remove_from(self.agent_id, phase.number)
            self._note(
                PhaseReport(phase.number, phase.name, "error", seconds=time.perf_counter() - began)
            )
            return Failed(problem_of(error))
        failed = next((c for c in result.checks if not c.passed), None)
        if phase.number == 1 and failed is None:
            self.agent_id = result.output.id
        chained = self._keep(phase, digest, chain, result, passed=failed is None)
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
            return Failed(check_failure(phase.number, phase.name, failed))
        self._done(phase, _Done(digest, chained, None, result.output))
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
        return Ran()

    def _keep(
        self,
        phase: AnyPhase,
        digest: str,
        chain: str | None,
        result: PhaseResult[Any],
        *,
        passed: bool,
    ) -> str:
        """Save the output's checkpoint (once the agent id is known); the chain digest up to this
        output, empty in a scratch build, which saves and digests nothing."""
        if self.store is None:
            return ""
        plain = to_plain(result.output)
        stored = output_digest(plain)
        if self.agent_id is not None:
            self._save(phase, digest, result, plain, stored, passed=passed)
        return chain_digest(chain, stored)

    def _save(
        self,
        phase: AnyPhase,
        digest: str,
        result: PhaseResult[Any],
        plain: Any,
        stored: str,
        *,
        passed: bool,
    ) -> None:
        assert self.agent_id is not None
        store = self._store()
        checkpoint = Checkpoint(
            phase=phase.name,
            number=phase.number,
            builder_version=__version__,
            input_digest=digest,
            passed=passed,
            checks=result.checks,
            warnings=result.warnings,
            output=plain,
            output_digest=stored,
        )
        try:
            old = store.read_head(self.agent_id, phase.number, phase.name)
        except PipelineError:
            old = None
        changed = old is None or old.output_digest != stored or not old.passed
        saved = store.write(self.agent_id, checkpoint)
        if saved.changed and (changed or not passed):
            # Later checkpoints were derived from an output this one replaced.
            store.remove_from(self.agent_id, phase.number + 1)
        self.saved.pop(phase.name, None)
        if passed and saved.written is not None:
            head = PhaseStamp(
                phase.number, phase.name, digest, stored, result.checks, result.warnings
            )
            self.saved[phase.name] = SavedPhase(head, saved.written)

    def _accept_stored(
        self, phase: AnyPhase, digest: str, chain: str | None, stored: Checkpoint
    ) -> None:
        self._done(
            phase, _Done(digest, chain_digest(chain, stored.output_digest), self._load(phase))
        )

    def _done(self, phase: DigestKey, done: _Done) -> None:
        self.done[phase.name] = done

    def _store(self) -> CheckpointStore:
        # Only a build that keeps checkpoints gets past ``_step``'s scratch branch to here.
        assert self.store is not None, "a scratch build reads and writes no checkpoint"
        return self.store

    def _note(self, report: PhaseReport) -> None:
        report = replace(report, cpu_seconds=time.thread_time() - self._cpu_began)
        self.reports.append(report)
        progress = self._walking().progress
        if progress is not None:
            progress(report)


def _check_names(phase: AnyPhase, result: PhaseResult[Any]) -> None:
    """A phase must return one verdict per declared check, in order (a bug otherwise)."""
    names = tuple(c.name for c in result.checks)
    if names != tuple(phase.checks):
        raise PipelineError(
            f"phase {phase.name} returned checks {', '.join(names) or 'none'}; it declares "
            f"{', '.join(phase.checks)}",
            code="P008",
        )
