"""Phase 7, registration: put the framework in the registry, read it back, prove the package works.

The framework record comes from phase 5 (``GraphConfig.to_framework_record``)
and goes into the embedded registry (``ProjectPaths.embedded_registry``) or,
when ``--neo4j-uri``/``NEO4J_URI`` names one, into Neo4j. When the embedded
database does not exist yet but ``<out_dir>/registry.yaml`` does (a fresh
clone), the database is first rebuilt from the yaml so the other frameworks
are kept.

``registered`` holds when the node and relationships read back equal the
record. ``e2e_passes`` holds when :mod:`builder.probe.e2e`, run in a child
process by :mod:`builder.probe.runner`, imports the generated package (the
tested one phase 6 left ready, byte-identical to what is installed, probed
before the registry is opened, so a batch probes it ahead; else the installed
one) and gets a successful handoff from it with a scripted model, and the selection
query with the skill's own triggers ranks the framework in the top five. Only then is
``<out_dir>/registry.yaml`` rewritten (atomically, from the registry's sorted
export); on any failure the framework's previous registration is restored.

A batch registers its skills in groups (:mod:`builder.pipeline.turns`): the skills
whose phase 7 waits at once are registered through one registry handle, one after
the other in the batch's order, each checked exactly as alone (so the output is the
same whatever the grouping), and committed together: one journal, one registry.yaml
write, their packages installed as one transaction (:class:`_Group`). The writer lock
is held for about :data:`REGISTRY_HOLD_SECONDS` at most at a time, so another build
registering into the same database gets its turn in between.
Reading the whole registry and registry.yaml to check that they agree, and rendering
every entry, cost O(registry) per skill; a seal beside the embedded database
(:class:`_Leaving`) lets the next registration skip both while neither file changed
since the last one wrote them, and splice its one entry into the text instead.
Registering the same record again changes nothing. A build killed between a group's
first database write and its commit leaves its journal folder
(``staging/registry-register.pending``) from which the next registration puts the
frameworks back as registry.yaml holds them (:class:`_Group`). Retiring the frameworks of
skills that are gone (``build --all``) is one transaction too: the database, registry.yaml and
their packages change together, and a retire killed anywhere is undone or finished by the
next phase 7 (:class:`_Retiring`). A registration into Neo4j keeps the same promises: it holds
the database's writer lock (:class:`mindrian.graph.Neo4jRegistry`, ``exclusive``) from its first
read to its last write, so the journal and the retire work as on the embedded file, and a
database that holds no framework yet is first filled from registry.yaml
(:func:`_seed_from_yaml`), as a missing embedded one is built from it.

The phase is cached like the others: its digest covers the registry target and
the output folder, not the database's contents; and a checkpoint holds only while
the installed package is phase 6's (:meth:`RegistrationPhase.cache_valid`).
``mindrian register`` always reruns it, which is how a deleted or foreign registry
is brought back in sync.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from builder.phases import phase_number
from builder.phases.keys import load_key, registration_extra
from builder.phases.outputs import Inputs, Outputs
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import CheckResult, PhaseHooks, PhaseResult
from builder.pipeline.errors import RegistrationError, SourceLocation
from builder.pipeline.output_folder import (
    RETIRE_COMMITTED,
    RETIRE_PENDING,
    committed_ids,
    generated_packages,
    unfinished_removals,
    unfinished_retire,
)
from builder.pipeline.services import LONE, Services
from builder.pipeline.transaction import GroupEntry, PackageTransaction, RegistrationGroup
from builder.pipeline.turns import ALONE
from builder.probe.runner import ProbeResult, ProbeRunner, run_probe
from mindrian.project import REGISTRY_YAML_NAME, ProjectPaths

if TYPE_CHECKING:
    from mindrian.graph import RegistryLayout

__all__ = [
    "PHASE",
    "REGISTRY_HOLD_SECONDS",
    "REGISTRY_WAIT_SECONDS",
    "REGISTRY_YAML",
    "SELECT_TOP",
    "Registration",
    "RegistrationPhase",
    "RelationshipSummary",
    "SelectionSummary",
    "default_registry_path",
    "output_dir",
    "project_paths",
]

#: The framework must rank within this many results for its own triggers.
SELECT_TOP = 5
#: How long phase 7 waits for another process's writer lock on the embedded registry.
REGISTRY_WAIT_SECONDS = 120.0
#: How long a batch's registration holds the writer lock before it commits what it has
#: registered and lets it go (another build waiting for it polls every 0.1 s), however many
#: skills wait; a hold registers at least one skill, however long that takes. A registration
#: takes tens of milliseconds on an idle machine: this bounds a group of 32 on a loaded one.
REGISTRY_HOLD_SECONDS = 3.0
#: Phase 7's codes for the registry's own errors (damaged database, lock held too long).
_GRAPH_CODES = {"G012": "R008", "G013": "R009"}
#: Name of the committed registry export inside the output folder.
REGISTRY_YAML = REGISTRY_YAML_NAME
#: The trigger postings the last hold in this process left, by embedded database file: with the
#: sha256 of the registry.yaml text they index (:func:`_keep_postings`). One entry at most.
_POSTINGS: dict[Path, tuple[str, Any]] = {}


@dataclass(frozen=True)
class RelationshipSummary:
    """One outgoing relationship of the framework as the registry holds it."""

    type: str
    """``CHAINS_TO`` or ``GOOD_FOR``."""
    target: str
    """Target framework id, or problem-type name."""
    value: float
    """The weight (CHAINS_TO) or confidence (GOOD_FOR)."""


@dataclass(frozen=True)
class SelectionSummary:
    """What the selection query returned for the framework's own triggers."""

    triggers: tuple[str, ...]
    """The triggers asked for (the skill's own)."""
    rank: int
    """1-based position of the framework in the result, 0 when absent."""
    score: float
    """Its score, 0.0 when absent."""
    returned: tuple[str, ...]
    """Ids of every framework returned, best first."""


@dataclass(frozen=True)
class Registration:
    """Phase 7: where the framework was registered and what the checks saw."""

    framework_id: str
    """The Framework node's id."""
    identifier: str
    """The generated package the end-to-end probe imported."""
    backend: str
    """``embedded`` or ``neo4j`` (never a URI or credentials)."""
    name: str
    """The node's ``name`` as read back."""
    type: str
    """The node's ``type`` as read back."""
    triggers: tuple[str, ...]
    """The node's triggers as read back."""
    problem_types: tuple[str, ...]
    """The node's problem types as read back."""
    relationships: tuple[RelationshipSummary, ...]
    """Outgoing relationships as read back, CHAINS_TO then GOOD_FOR, each sorted by target."""
    selection: SelectionSummary
    """The selection query's verdict."""
    e2e: str
    """One line from the end-to-end probe."""


def default_registry_path(config: BuildConfig) -> Path:
    """The embedded registry indexing the build's output folder (see :class:`ProjectPaths`)."""
    return project_paths(config).embedded_registry


def project_paths(config: BuildConfig) -> ProjectPaths:
    """The layout of the project for the build's output folder."""
    return ProjectPaths(Path(config.root), Path(config.out_dir))


def _out_dir(inputs: Inputs) -> Path:
    return output_dir(inputs.config)


def output_dir(config: BuildConfig) -> Path:
    """The folder whose packages phase 7 probes and whose registry.yaml it rewrites."""
    return project_paths(config).generated.resolve()


def _relationships(record: Any) -> tuple[RelationshipSummary, ...]:
    chains = tuple(RelationshipSummary("CHAINS_TO", t, w) for t, w in record.chains_to)
    good_for = tuple(RelationshipSummary("GOOD_FOR", p, c) for p, c in record.good_for)
    return chains + good_for


def _selection(registry: Any, framework_id: str, triggers: tuple[str, ...]) -> SelectionSummary:
    found = registry.select(triggers, limit=SELECT_TOP) if triggers else ()
    ids = tuple(s.id for s in found)
    rank = ids.index(framework_id) + 1 if framework_id in ids else 0
    score = found[rank - 1].score if rank else 0.0
    return SelectionSummary(triggers=triggers, rank=rank, score=score, returned=ids)


def _e2e_check(selection: SelectionSummary, probe: ProbeResult) -> CheckResult:
    if not probe.success:
        return CheckResult("e2e_passes", False, f"end-to-end handoff failed: {probe.summary}")
    if not selection.triggers:
        return CheckResult(
            "e2e_passes",
            False,
            "the skill declares no triggers, so the selection query can never choose it",
        )
    if not selection.rank:
        shown = ", ".join(selection.returned) or "nothing"
        return CheckResult(
            "e2e_passes",
            False,
            f"selecting with its own triggers {list(selection.triggers)} returned {shown}, not the "
            f"framework (top {SELECT_TOP})",
        )
    return CheckResult(
        "e2e_passes",
        True,
        f"{probe.summary}; its own triggers select it at rank {selection.rank} of "
        f"{len(selection.returned)} (score {selection.score:g})",
    )


class RegistrationPhase(PhaseHooks[Outputs, Registration]):
    """Phase 7; the registry location, the environment and the probe are injectable."""

    name = "registration"
    number = phase_number(name)
    #: It writes the registry (one writer: skills in turn, in this process) and probes the
    #: installed package in a child (declared with its key, which a batch reads without
    #: importing this module).
    traits = load_key(name).traits
    checks = ("registered", "e2e_passes")
    output_type = Registration
    #: The end-to-end probe runs the whole runtime, not only what this module imports.
    code_packages = ("mindrian",)

    def __init__(
        self,
        registry_path: Path | None = None,
        *,
        env: Mapping[str, str] | None = None,
        services: Services = LONE,
    ) -> None:
        """``registry_path`` None means the project's default; ``env`` replaces ``os.environ`` for
        NEO4J_*; ``services`` says how the probe runs."""
        self.registry_path = registry_path
        self.env = env
        self.services = services

    def with_services(self, services: Services) -> RegistrationPhase:
        """A copy of this phase (registry, environment) probing packages as ``services`` says."""
        changed = copy.copy(self)
        changed.services = services
        return changed

    @property
    def probe(self) -> ProbeRunner:
        """How this phase probes a package."""
        return self.services.probe or run_probe

    def _environ(self) -> Mapping[str, str]:
        return os.environ if self.env is None else self.env

    def _neo4j_uri(self, config: BuildConfig) -> str | None:
        return config.neo4j_uri or self._environ().get("NEO4J_URI") or None

    def _db_path(self, config: BuildConfig) -> Path:
        return (self.registry_path or default_registry_path(config)).resolve()

    def extra_digest(self, inputs: Inputs) -> dict[str, str]:
        """Where the framework goes: registering elsewhere must run the phase again."""
        return registration_extra(inputs, self.registry_path, self.env)

    def cache_valid(self, inputs: Inputs, stored: Callable[[], Registration]) -> bool:
        """A checkpoint counts only while phase 6's package is the installed one.

        Installing the ready package is this phase's job (one transaction with the
        registry), so a package phase 6 staged again, because the installed one was
        deleted or edited, must not be left waiting behind a cached registration.
        """
        package = inputs.previous.package()
        txn = PackageTransaction(project_paths(inputs.config), package.identifier)
        return txn.settled() and txn.installed_matches(dict(package.files))

    def _open(self, config: BuildConfig) -> Any:
        from builder.graph.commands import restore_registry_once, uri_credentials_problem
        from builder.pipeline.errors import CompilerError
        from mindrian.graph import EmbeddedRegistry, GraphError, open_registry

        uri = self._neo4j_uri(config)
        db = self._db_path(config)
        yaml_path = output_dir(config) / REGISTRY_YAML
        try:
            if uri is not None:
                problem = uri_credentials_problem(uri)
                if problem:
                    raise RegistrationError(problem, code="R010")
                registry = open_registry(uri, db, env=self._environ(), exclusive=True)
                try:
                    _seed_from_yaml(registry, yaml_path)
                except BaseException:
                    registry.close()
                    raise
                return registry
            if not db.exists() and yaml_path.is_file():
                restore_registry_once(yaml_path, db)
            return EmbeddedRegistry(db, wait=REGISTRY_WAIT_SECONDS, on_wait=_tell_waiting)
        except GraphError as exc:
            raise RegistrationError(str(exc), code=_GRAPH_CODES.get(exc.code, "R004")) from None
        except RegistrationError:
            raise
        except CompilerError as exc:
            raise RegistrationError(exc.message, location=exc.location, code="R005") from None

    def run(self, inputs: Inputs) -> PhaseResult[Registration]:
        from mindrian.graph.backends import backend_for

        record = inputs.previous.graph().to_framework_record()
        identifier = inputs.previous.package().identifier
        out_dir = _out_dir(inputs)
        txn = PackageTransaction(project_paths(inputs.config), identifier)
        txn.recover()
        installing = txn.ready.is_dir()
        # The package as it will be installed (the ready one is byte-identical to the install),
        # probed before the registry's writer lock is taken: a batch may probe it ahead.
        probed = self.probe(txn.ready.parent if installing else out_dir, identifier)
        request = _Request(inputs.config, record, identifier, installing, probed)
        done = (self.services.turns or ALONE).join(request, self._serve)
        if done.error is not None:
            raise done.error
        shown = done.stored or record
        output = Registration(
            framework_id=record.id,
            identifier=identifier,
            backend=backend_for(self._neo4j_uri(inputs.config)).name,
            name=shown.name,
            type=shown.type,
            triggers=shown.triggers,
            problem_types=shown.problem_types,
            relationships=_relationships(shown),
            selection=done.selection,
            e2e=done.e2e.reason,
        )
        return PhaseResult(output=output, checks=(done.registered, done.e2e))

    def _serve(self, requests: Sequence[_Request]) -> list[_Done]:
        """Register ``requests`` (one batch's, in its order): under one writer lock at a time,
        held for about :data:`REGISTRY_HOLD_SECONDS` at most, one journal and one
        registry.yaml write per hold."""
        done: list[_Done] = []
        while len(done) < len(requests):
            try:
                done += self._hold(requests[len(done) :])
            except (RegistrationError, OSError) as error:
                # The holds before stay committed; this one was undone: its skills and the
                # rest fail with why.
                return done + [_Done.failed(error)] * (len(requests) - len(done))
        return done

    def _hold(self, requests: Sequence[_Request]) -> list[_Done]:
        """Register the first of ``requests`` and as many after it as the hold's time allows,
        each as it would be alone, in order; commit them as one group (:class:`_Group`)."""
        from mindrian.graph import GraphError

        config = requests[0].config
        paths = project_paths(config)
        yaml_path = output_dir(config) / REGISTRY_YAML
        sealed = self._neo4j_uri(config) is None  # the seal is the embedded file's
        db = self._db_path(config)
        group = _Group(paths)
        leaving: _Leaving | None = None
        with self._open(config) as registry:
            began = time.monotonic()
            try:
                _Retiring(paths).recover(registry)
                group.recover(registry)
                listed = _vouched(db, yaml_path) if sealed else None
                if listed is not None:
                    _resume_postings(registry, db, listed.leaving)
                held = _held(registry, yaml_path, {r.record.id for r in requests}, listed)
                group.begin([GroupEntry(r.record.id, r.identifier) for r in requests])
                # The seal vouches that the database holds what registry.yaml lists: a framework
                # it does not list has nothing to put back, so nothing is read before it.
                unlisted = set() if listed is None else _unlisted(requests, listed)
            except GraphError as exc:
                raise RegistrationError(str(exc), code="R006") from None
            done: list[_Done] = []
            try:
                # One transaction for the group's registrations, checks and put-backs: its
                # commit comes before the group's (a kill between them is undone as before).
                with registry.together():
                    for request in requests:
                        if done and time.monotonic() - began > REGISTRY_HOLD_SECONDS:
                            break  # let another build's registration have the lock in between
                        new = request.record.id in unlisted
                        unlisted.discard(request.record.id)  # registered, whatever the checks
                        done.append(_register_one(registry, request, new=new))
                put = [d.stored for d in done if d.kept]
                text = _registry_text(listed, held, put) if put else None
                group.commit(text[0] if text else None)
            except BaseException as exc:
                # The database, the packages and registry.yaml agree again, as before the group.
                group.undo(registry)
                if isinstance(exc, GraphError):
                    raise RegistrationError(str(exc), code="R006") from None
                raise
            if sealed and text is not None:
                leaving = _Leaving.of(yaml_path, *text)
            elif sealed and listed is not None:  # registry.yaml is as it was
                leaving = listed.leaving
            postings = _postings_of(registry) if leaving is not None else None
        if leaving is not None:  # sealed with the database's files as the close left them
            leaving.seal(db)
            _keep_postings(db, leaving, postings)
        return done

    def retire(self, config: BuildConfig, keep: Collection[str]) -> tuple[str, ...]:
        """Unregister and uninstall what the output folder holds for skills not in ``keep``.

        ``keep`` is every agent id of the project (``build --all``): a deleted or
        renamed skill must not stay registered and installed, or the output
        never equals a fresh build. Returns the ids removed, sorted. The
        registry, ``registry.yaml`` and the packages of registered frameworks
        change as one transaction (:class:`_Retiring`); packages nothing
        registered go last. A run stopped anywhere is finished or undone by the
        next phase 7, and what is left to remove is found again from what is on disk.
        """
        out_dir = output_dir(config)
        paths = project_paths(config)
        listed = set(_listed_ids(paths)) - set(keep)
        gone = self._unregister(config, keep) if listed or unfinished_retire(paths) else []
        for left in unfinished_removals(paths):
            shutil.rmtree(left, ignore_errors=True)
        orphans = {k: v for k, v in generated_packages(out_dir).items() if k not in keep}
        for folder in orphans.values():
            _remove_package(folder, paths.staging)
        return tuple(sorted({*gone, *orphans}))

    def _unregister(self, config: BuildConfig, keep: Collection[str]) -> list[str]:
        """Unregister the frameworks registry.yaml lists that are not in ``keep``, write it again
        and delete their packages, in one transaction; their ids, sorted."""
        from mindrian.graph import GraphError, laid_out_registry_yaml

        paths = project_paths(config)
        db = self._db_path(config)
        sealed = self._neo4j_uri(config) is None
        retiring = _Retiring(paths)
        leaving: _Leaving | None = None
        with self._open(config) as registry:
            try:
                retiring.recover(registry)
                _Group(paths).recover(registry)
                # A killed registration's package transaction may have been rolled forward.
                committed = _committed_records(paths.registry_yaml) or {}
                gone = sorted(set(committed) - set(keep))
                if not gone:
                    return []
                _check_against(registry.export(), committed, (), "holds")
                installed = generated_packages(paths.generated)
                packages = sorted(installed[i].name for i in gone if i in installed)
                retiring.begin(gone, packages)
            except GraphError as exc:
                raise RegistrationError(str(exc), code="R006") from None
            try:
                for framework_id in gone:
                    registry.unregister(framework_id)
                exported = registry.export()
                kept = {k: v for k, v in committed.items() if k not in gone}
                _check_against(exported, kept, (), "would write")
                text, layout = laid_out_registry_yaml(exported)
                retiring.commit(text, packages)
            except BaseException as exc:
                # Finished when past its commit point, else undone: the three agree again.
                retiring.recover(registry)
                if isinstance(exc, GraphError):
                    raise RegistrationError(str(exc), code="R006") from None
                raise
            if sealed:
                leaving = _Leaving.of(paths.registry_yaml, text, layout)
        if leaving is not None:
            leaving.seal(db)
        return gone


@dataclass(frozen=True)
class _Request:
    """One skill's registration, as its phase 7 hands it to the group it is registered in."""

    config: BuildConfig
    """The build's configuration (the registry and output folder; the same for a batch)."""
    record: Any
    """The framework record of phase 5."""
    identifier: str
    """The generated package."""
    installing: bool
    """Phase 6 left a ready package to install with the registration."""
    probed: ProbeResult
    """The end-to-end probe's verdict on that package."""


@dataclass(frozen=True)
class _Done:
    """What registering one request did."""

    stored: Any
    """The framework as read back (None when it is not there)."""
    selection: SelectionSummary
    """The selection query's verdict."""
    registered: CheckResult
    """The read-back check."""
    e2e: CheckResult
    """The end-to-end check."""
    error: RegistrationError | OSError | None = None
    """Why the request was not registered at all (its hold failed); the rest is then empty."""

    @classmethod
    def failed(cls, error: RegistrationError | OSError) -> _Done:
        """A request whose hold failed with ``error``."""
        unchecked = CheckResult("registered", False, str(error))
        return cls(None, SelectionSummary((), 0, 0.0, ()), unchecked, unchecked, error)

    @property
    def kept(self) -> bool:
        """Both checks passed: the registration stays, and its package is installed."""
        return self.registered.passed and self.e2e.passed


def _unlisted(requests: Sequence[_Request], listed: _Listed) -> set[str]:
    """The frameworks of ``requests`` that registry.yaml, as the seal vouches for it, lists not."""
    return {r.record.id for r in requests} - set(listed.leaving.layout.ids)


def _register_one(registry: Any, request: _Request, *, new: bool = False) -> _Done:
    """Register one request in the open registry and check it; a failed check puts back what the
    registry held before (``new``: known to hold none); a kept one installs its package
    (committed with its group)."""
    from mindrian.graph import GraphError

    record = request.record
    try:
        before = None if new else registry.get(record.id)
        registry.register(record, new=new)
        stored = registry.get(record.id)
        selection = _selection(registry, record.id, record.triggers)
    except GraphError as exc:
        raise RegistrationError(str(exc), code="R006") from None
    checks = (_read_back_check(record, stored), _e2e_check(selection, request.probed))
    done = _Done(stored, selection, *checks)
    if not done.kept:
        _restore(registry, record.id, before)
    elif request.installing:
        PackageTransaction(project_paths(request.config), request.identifier).install()
    return done


def _remove_package(folder: Path, staging: Path) -> None:
    """Take ``folder`` out of the output in one rename, then delete it from the staging area."""
    staging.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=f"{folder.name}.retired-", dir=staging))
    os.rename(folder, aside / folder.name)
    shutil.rmtree(aside, ignore_errors=True)


def _listed_ids(paths: ProjectPaths) -> Collection[str]:
    """The framework ids registry.yaml lists, known by its bytes (:func:`committed_ids`, which
    ``build --all`` has just asked); a registry.yaml that is no registry is refused, with why."""
    ids = committed_ids(paths)
    return (_committed_records(paths.registry_yaml) or {}) if ids is None else ids


def _held(
    registry: Any, yaml_path: Path, own: Collection[str], listed: _Listed | None
) -> tuple[Any, ...]:
    """Every framework the registry holds, each not in ``own`` checked against registry.yaml.

    Reading and comparing both whole costs O(registry) per skill. Nothing is read
    when ``listed``: the seal vouches that the database holds what registry.yaml lists.
    """
    if listed is not None:
        return ()
    held = tuple(registry.export())
    _check_against(held, _committed_records(yaml_path), own, "holds")
    return held


def _registry_text(
    listed: _Listed | None,
    held: tuple[Any, ...],
    stored: Sequence[Any],
) -> tuple[str, RegistryLayout]:
    """registry.yaml's text now that ``stored`` are registered, and its layout.

    With ``listed`` only their entries are rendered, into the sealed text. Else the text
    is ``held`` with their entries replaced: the writer lock, held from the first read to
    the write, lets no other registration change the registry in between.
    """
    from mindrian.graph import laid_out_registry_yaml, splice_registry_yaml

    if listed is not None:
        return splice_registry_yaml(listed.text, listed.leaving.layout, put=stored)
    put = {r.id for r in stored}
    return laid_out_registry_yaml((*(r for r in held if r.id not in put), *stored))


def _seed_from_yaml(registry: Any, yaml_path: Path) -> None:
    """Fill a Neo4j database that holds no framework yet with what registry.yaml lists.

    A fresh database beside a committed registry.yaml is a new clone's first build: the other
    frameworks must be there before one is registered, or the registry and registry.yaml
    disagree. Called under the writer lock, so one of several builds starting at once fills it.
    """
    from mindrian.graph import with_routing_bodies

    committed = _committed_records(yaml_path)
    if committed and registry.counts().frameworks == 0:
        registry.register_many(with_routing_bodies(committed.values(), yaml_path))


#: Suffix of the seal beside the embedded database's file (see :class:`_Leaving`).
_SEAL = ".written"


@dataclass(frozen=True)
class _Leaving:
    """registry.yaml as a registration into the embedded database leaves it.

    Once the database is closed this is sealed beside it (:meth:`seal`) with the
    database's files as the close left them. While registry.yaml is still that very
    file (same inode, times and digest) and the database's files are unchanged, the
    database holds exactly what registry.yaml lists, as every writer checks that
    before writing either: the next registration, in this process or another, then
    reads neither whole and splices its one entry into the text (:func:`_vouched`).
    """

    yaml_sha256: str
    """The sha256 of its bytes."""
    yaml_file: tuple[int, ...]
    """Its (inode, size, mtime, ctime) just after it was written."""
    layout: RegistryLayout
    """Where each framework's entry lies in its text."""

    @classmethod
    def of(cls, yaml_path: Path, text: str, layout: RegistryLayout) -> _Leaving:
        """registry.yaml just written at ``yaml_path`` with ``text`` laid out as ``layout``."""
        return cls(_sha256(text.encode("utf-8")), _stat(yaml_path) or (), layout)

    def seal(self, db: Path) -> None:
        """Keep this beside the closed database ``db``, with its files as they are now."""
        plain = {
            "database": _files(db),
            "ids": self.layout.ids,
            "sizes": self.layout.sizes,
            "yaml_file": self.yaml_file,
            "yaml_sha256": self.yaml_sha256,
        }
        _write_file(Path(f"{db}{_SEAL}"), json.dumps(plain, sort_keys=True))


@dataclass(frozen=True)
class _Listed:
    """registry.yaml's text while the seal beside the database vouches for it."""

    text: str
    """The file's text."""
    leaving: _Leaving
    """The seal's account of it, its layout among the rest."""


def _keep_postings(db: Path, leaving: _Leaving, postings: Any) -> None:
    """Keep the trigger postings a hold left on ``db`` for the next hold in this process.

    They are a function of what registry.yaml lists (every field of every registered framework
    that explicit selection reads), and the hold ends with the database holding exactly that:
    so they are good for any later state the seal vouches for with the same text.
    """
    _POSTINGS.clear()
    if postings is not None:
        _POSTINGS[db] = (leaving.yaml_sha256, postings)


def _postings_of(registry: Any) -> Any:
    """The registry's current trigger postings; None when it holds none or cannot say."""
    from mindrian.graph import GraphError

    try:
        return registry.trigger_postings()
    except GraphError:  # the registrations are committed: the next hold only reads them again
        return None


def _resume_postings(registry: Any, db: Path, leaving: _Leaving) -> None:
    """Give ``registry`` the postings an earlier hold kept, when the seal vouches that the
    database holds what registry.yaml lists and that text is the one they index: phase 7's
    selection check then reads no framework (else its first one reads them all)."""
    kept = _POSTINGS.get(db)
    if kept is not None and kept[0] == leaving.yaml_sha256:
        registry.use_trigger_postings(kept[1])


def _vouched(db: Path, yaml_path: Path) -> _Listed | None:
    """registry.yaml's text when it is the file the seal beside ``db`` describes and the
    database's files are as they were sealed; else None."""
    from mindrian.graph import RegistryLayout

    try:
        plain = json.loads(Path(f"{db}{_SEAL}").read_text(encoding="utf-8"))
        layout = RegistryLayout(tuple(plain["ids"]), tuple(plain["sizes"]))
        leaving = _Leaving(plain["yaml_sha256"], tuple(plain["yaml_file"]), layout)
        files = tuple(None if f is None else tuple(f) for f in plain["database"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if files != _files(db) or leaving.yaml_file != _stat(yaml_path):
        return None
    try:
        data = yaml_path.read_bytes()
    except OSError:
        return None
    if _sha256(data) != leaving.yaml_sha256:
        return None
    return _Listed(data.decode("utf-8"), leaving)


def _files(db: Path) -> tuple[tuple[int, ...] | None, ...]:
    """:func:`_stat` of the database file and of its write-ahead log."""
    return (_stat(db), _stat(Path(f"{db}.wal")))


def _stat(path: Path) -> tuple[int, ...] | None:
    """(inode, size, mtime, ctime) of ``path``; None when it is absent."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class _Group:
    """A group registration's journal (:class:`~builder.pipeline.transaction.RegistrationGroup`)
    and what undoing it does to the database.

    A build killed between a group's first database write and its commit point leaves the
    database ahead of registry.yaml for the group's frameworks, and every later build would
    refuse the registry (R007). The next registration, under the same writer lock (the
    embedded file's, or Neo4j's lock node), finds the journal, rolls each package's
    install back and puts each framework back as registry.yaml holds it (:meth:`recover`).
    Only that lock keeps another build's registration in progress from looking like a killed
    one.
    """

    paths: ProjectPaths
    """The project layout of the build's output folder."""

    def begin(self, entries: Sequence[GroupEntry]) -> None:
        """Record that ``entries`` are about to be written."""
        RegistrationGroup(self.paths).begin(entries)

    def commit(self, registry_yaml: str | None) -> None:
        """Commit the group (see :meth:`RegistrationGroup.commit`)."""
        RegistrationGroup(self.paths).commit(registry_yaml)

    def recover(self, registry: Any) -> bool:
        """Finish a committed group or undo a pending one a killed build left; whether there
        was one."""
        files = RegistrationGroup(self.paths)
        finished = files.finish()
        left = files.pending()
        if left is None:
            return finished
        for entry in left:
            PackageTransaction(self.paths, entry.identifier).recover()
        _put_back(registry, self.paths.registry_yaml, [e.framework for e in left])
        files.discard()  # last: a recovery killed midway is done again
        return True

    def undo(self, registry: Any) -> None:
        """This process's group failed: finished when past its commit point, else undone."""
        self.recover(registry)


#: The new registry.yaml's name inside a retire's journal folder until it is moved into place.
_NEW_YAML = "registry.yaml.new"
#: The file in a retire's journal folder naming what it removes.
_RETIRE_ENTRY = "retiring.json"


@dataclass(frozen=True)
class _Retiring:
    """The journal of one retire: its frameworks leave the database, registry.yaml and the
    output folder together or not at all.

    Before the first database write :meth:`begin` writes the frameworks and their
    packages into ``staging/`` (:data:`RETIRE_PENDING`). :meth:`commit` puts the new
    registry.yaml beside them and renames the folder (:data:`RETIRE_COMMITTED`), the one
    step that commits the retire; the file is then moved into place and the packages
    deleted. A run killed before that rename is undone by the next phase 7 (each framework
    put back as registry.yaml still holds it, its package untouched), one killed after it
    is finished (:meth:`recover`), under the same writer lock as :class:`_Group`.
    """

    paths: ProjectPaths
    """The project layout of the build's output folder."""

    def begin(self, framework_ids: Collection[str], packages: Collection[str]) -> None:
        """Record that ``framework_ids``, installed as ``packages``, are about to be removed."""
        entry = {"frameworks": sorted(framework_ids), "packages": sorted(packages)}
        self._pending.mkdir(parents=True)
        _write_file(self._pending / _RETIRE_ENTRY, json.dumps(entry, sort_keys=True))

    def commit(self, registry_yaml: str, packages: Collection[str]) -> None:
        """Write ``registry_yaml`` (the database has lost the frameworks) and delete
        ``packages``, those :meth:`begin` was given."""
        _write_file(self._pending / _NEW_YAML, registry_yaml)
        os.rename(self._pending, self._committed)
        self._roll_forward(packages)
        shutil.rmtree(self._committed)

    def recover(self, registry: Any) -> bool:
        """Finish or undo the retire a killed run left; whether there was one."""
        done = self._committed.is_dir()
        folder = self._committed if done else self._pending
        if not folder.is_dir():
            return False
        entry = self._entry(folder)
        if done:
            self._roll_forward(entry["packages"])
        # Committed, registry.yaml lists none of them; else every one, as before. The journal
        # goes last, so a recovery killed midway is done again.
        _put_back(registry, self.paths.registry_yaml, entry["frameworks"])
        shutil.rmtree(folder)
        return True

    @property
    def _pending(self) -> Path:
        return self.paths.staging / RETIRE_PENDING

    @property
    def _committed(self) -> Path:
        return self.paths.staging / RETIRE_COMMITTED

    def _entry(self, folder: Path) -> dict[str, list[str]]:
        """What the journal in ``folder`` removes; nothing when its file is not whole: killed
        while it was written (before any database write) or while the folder was deleted
        (once the three agreed)."""
        try:
            plain = json.loads((folder / _RETIRE_ENTRY).read_text(encoding="utf-8"))
            return {"frameworks": list(plain["frameworks"]), "packages": list(plain["packages"])}
        except (OSError, ValueError, KeyError, TypeError):
            return {"frameworks": [], "packages": []}

    def _roll_forward(self, packages: Collection[str]) -> None:
        """registry.yaml moved into place, then the packages out of the output folder in one
        rename each, into the journal folder (deleted with it)."""
        done = self._committed
        if (done / _NEW_YAML).exists():
            os.replace(done / _NEW_YAML, self.paths.registry_yaml)
        for name in packages:
            if (self.paths.generated / name).exists():
                os.rename(self.paths.generated / name, done / name)


def _put_back(registry: Any, yaml_path: Path, framework_ids: Collection[str]) -> None:
    """Make the database hold each of ``framework_ids`` as registry.yaml holds it (or not at
    all), with its routing body from its package."""
    from mindrian.graph import with_routing_bodies

    committed = _committed_records(yaml_path) or {}
    wrong = [i for i in framework_ids if _plain(registry.get(i)) != _plain(committed.get(i))]
    listed = [committed[i] for i in wrong if i in committed]
    bodied = {r.id: r for r in with_routing_bodies(listed, yaml_path)} if listed else {}
    for framework_id in wrong:
        _restore(registry, framework_id, bodied.get(framework_id))


def _plain(record: Any) -> Any:
    return None if record is None else record.to_plain()


def _write_file(path: Path, text: str) -> None:
    from mindrian.atomic import atomic_write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)


class _Undo(Exception):
    """A check failed: undo the registration and the install, then report the checks."""


def _tell_waiting(line: str) -> None:
    """Progress while phase 7 waits for another writer: stderr, so ``--json`` stdout stays valid."""
    print(f"note: {line}", file=sys.stderr, flush=True)


def _committed_records(path: Path) -> dict[str, Any] | None:
    """The frameworks ``registry.yaml`` lists, by id; None when there is no file yet.

    A file that is no registry (not UTF-8, not YAML, or not its shape: a list, a scalar,
    an entry of the wrong types) is refused with R005, placed at the fault.
    """
    from builder.graph.commands import shown_path
    from mindrian.graph import RegistryYamlError, load_registry_yaml

    if not path.is_file():
        return None
    try:
        return {r.id: r for r in load_registry_yaml(path)}
    except RegistryYamlError as exc:
        raise RegistrationError(
            f"cannot be read as a registry: {exc.message}; restore it from version control",
            location=SourceLocation(shown_path(path), exc.line, exc.column),
            code="R005",
        ) from None
    except OSError as exc:
        raise RegistrationError(
            f"{path.as_posix()} cannot be read as a registry: {' '.join(str(exc).split())}; "
            "restore it from version control",
            code="R005",
        ) from None


def _check_against(
    records: Any, committed: Mapping[str, Any] | None, own: Collection[str], verb: str
) -> None:
    """A build may change only its own framework: every other one must equal ``registry.yaml``.

    A database that lost frameworks, or holds different data for other ones
    (partly corrupted, or written by something else), is refused before it
    can be exported over the committed file.
    """
    if committed is None:
        return
    # Compared as registry.yaml holds them: the stored body's prose is never in that file.
    held = {r.id: r.to_plain() for r in records if r.id not in own}
    expected = {k: v.to_plain() for k, v in committed.items() if k not in own}
    if held == expected:
        return
    missing = sorted(set(expected) - set(held))
    extra = sorted(set(held) - set(expected))
    changed = sorted(k for k in set(held) & set(expected) if held[k] != expected[k])
    parts = [
        f"{label} {', '.join(ids)}"
        for label, ids in (("lacks", missing), ("adds", extra), ("differs on", changed))
        if ids
    ]
    raise RegistrationError(
        f"the registry {verb} other frameworks than registry.yaml: {'; '.join(parts)}; "
        "registry.yaml is left unchanged. When registry.yaml is the newer one (after a git "
        "pull or checkout), rebuild the database from it: `mindrian graph rebuild`",
        code="R007",
    )


def _read_back_check(record: Any, stored: Any) -> CheckResult:
    if stored is None:
        return CheckResult(
            "registered",
            False,
            f"framework {record.id!r} is not in the registry after registering it",
        )
    if stored != record:
        differ = [k for k, v in record.to_plain().items() if stored.to_plain().get(k) != v]
        return CheckResult(
            "registered", False, f"framework {record.id!r} reads back different {', '.join(differ)}"
        )
    return CheckResult(
        "registered",
        True,
        f"framework {record.id!r} reads back equal: {len(record.triggers)} trigger(s), "
        f"{len(record.chains_to)} CHAINS_TO, {len(record.good_for)} GOOD_FOR",
    )


def _restore(registry: Any, framework_id: str, before: Any) -> None:
    """Put back what the registry held for the framework before this run."""
    if before is None:
        registry.unregister(framework_id)
    else:
        registry.register(before)


#: The phase object the runner loads.
PHASE = RegistrationPhase()
