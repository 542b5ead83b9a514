"""Phase 7: registration, read-back, the end-to-end probe, registry.yaml, rebuilding from it."""

from __future__ import annotations

import os
import signal
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from build_factories import make_source
from phase_factories import outputs_of

from builder.phases import PHASE_NAMES, load_phase, registration
from builder.phases.code_generation import GeneratedPackage
from builder.phases.registration import PHASE, REGISTRY_YAML, Registration, RegistrationPhase
from builder.pipeline import output_folder
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import PhaseInput
from builder.pipeline.errors import RegistrationError
from builder.pipeline.output_folder import committed_ids
from builder.pipeline.serial import from_plain, to_plain
from builder.pipeline.services import Services
from builder.pipeline.worker import WarmWorker
from builder.probe.runner import ProbeResult, WarmProbes, run_probe
from mindrian.graph import (
    EmbeddedRegistry,
    FrameworkRecord,
    RoutingBodyWarning,
    dump_registry_yaml,
    write_registry_yaml,
)
from mindrian.graph.triggers import TriggerIndex
from mindrian.project import ProjectPaths

# Slow: phase 7 starts the end-to-end probe in a subprocess.
pytestmark = pytest.mark.slow

RECORD = FrameworkRecord(
    id="demo-skill",
    name="Demo Skill",
    type="operator",
    description="Checks a plan for gaps.",
    triggers=("gap", "plan review"),
    problem_types=("planning",),
    version="1.0.0",
    source_digest="ab" * 32,
    chains_to=(("jtbd", 0.7), ("devil-advocate", 0.5)),
    good_for=(("planning", 1.0),),
)


@dataclass(frozen=True)
class StubGraph:
    """Stands in for phase 5's GraphConfig: all phase 7 asks of it is the record."""

    record: FrameworkRecord

    def to_framework_record(self) -> FrameworkRecord:
        return self.record


class Probe:
    """A probe runner that records its calls and answers as told."""

    def __init__(self, success: bool = True, summary: str = "scripted handoff succeeded") -> None:
        self.result = ProbeResult(success, summary)
        self.calls: list[tuple[Path, str]] = []

    def __call__(self, out_dir: Path, identifier: str) -> ProbeResult:
        self.calls.append((out_dir, identifier))
        return self.result


def inputs(root: Path, record: FrameworkRecord = RECORD, **config: Any) -> PhaseInput:
    previous = {
        "neo4j_schema": StubGraph(record),
        "code_generation": GeneratedPackage(
            identifier=record.id.replace("-", "_"), files=(), tests="1 passed"
        ),
    }
    return PhaseInput(
        source=make_source(),
        config=BuildConfig(root=str(root), **config),
        previous=outputs_of(previous),
    )


def phase(root: Path, probe: Probe | None = None, **options: Any) -> RegistrationPhase:
    return RegistrationPhase(
        root / "registry.lbug", services=Services(probe=probe or Probe()), **options
    )


def stored(root: Path) -> tuple[FrameworkRecord, ...]:
    with EmbeddedRegistry(root / "registry.lbug") as registry:
        return registry.export()


def reregistered(root: Path, record: FrameworkRecord) -> None:
    with EmbeddedRegistry(root / "registry.lbug") as registry:
        registry.register(record)


def yaml_text(root: Path) -> str:
    return (root / "generated" / REGISTRY_YAML).read_text(encoding="utf-8")


def test_the_runner_loads_registration_as_the_last_phase() -> None:
    loaded = load_phase("registration")
    assert loaded is PHASE
    assert (loaded.number, loaded.checks, loaded.output_type) == (
        len(PHASE_NAMES),
        ("registered", "e2e_passes"),
        Registration,
    )


def test_registers_reads_back_probes_and_writes_registry_yaml(tmp_path: Path) -> None:
    probe = Probe()
    result = phase(tmp_path, probe).run(inputs(tmp_path))
    assert [c.passed for c in result.checks] == [True, True], result.checks
    assert stored(tmp_path) == (RECORD,)
    assert yaml_text(tmp_path) == dump_registry_yaml([RECORD])
    assert probe.calls == [((tmp_path / "generated").resolve(), "demo_skill")]
    output = result.output
    assert (output.framework_id, output.identifier, output.backend) == (
        "demo-skill",
        "demo_skill",
        "embedded",
    )
    assert [(r.type, r.target, r.value) for r in output.relationships] == [
        ("CHAINS_TO", "devil-advocate", 0.5),
        ("CHAINS_TO", "jtbd", 0.7),
        ("GOOD_FOR", "planning", 1.0),
    ]
    assert (output.selection.rank, output.selection.returned) == (1, ("demo-skill",))
    assert "scripted handoff succeeded" in output.e2e
    assert from_plain(Registration, to_plain(output)) == output


def test_registering_again_changes_nothing(tmp_path: Path) -> None:
    first = phase(tmp_path).run(inputs(tmp_path))
    text = yaml_text(tmp_path)
    second = phase(tmp_path).run(inputs(tmp_path))
    assert second == first
    assert yaml_text(tmp_path) == text
    with EmbeddedRegistry(tmp_path / "registry.lbug") as registry:
        counts = registry.counts()
    # demo-skill, plus placeholders for the two chain targets; one problem type.
    assert (counts.frameworks, counts.placeholders, counts.chains, counts.good_for) == (1, 2, 2, 1)


def test_stored_bodies_are_not_compared_with_registry_yaml(tmp_path: Path) -> None:
    first = replace(RECORD, body="Use it when the plan is vague.")
    second = replace(RECORD, id="second-skill", name="Second", body="Another body.")
    assert all(c.passed for c in phase(tmp_path).run(inputs(tmp_path, first)).checks)
    # The registry holds first's body, registry.yaml never does: that is no disagreement.
    result = phase(tmp_path).run(inputs(tmp_path, second))
    assert [c.passed for c in result.checks] == [True, True], result.checks
    assert stored(tmp_path) == (first, second)
    assert yaml_text(tmp_path) == dump_registry_yaml([first, second])


def test_a_changed_skill_replaces_its_registration(tmp_path: Path) -> None:
    phase(tmp_path).run(inputs(tmp_path))
    changed = replace(RECORD, triggers=("gap",), chains_to=(("jtbd", 0.9),))
    result = phase(tmp_path).run(inputs(tmp_path, changed))
    assert all(c.passed for c in result.checks)
    assert stored(tmp_path) == (changed,)
    assert yaml_text(tmp_path) == dump_registry_yaml([changed])


def test_a_record_that_reads_back_different_fails_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_get = EmbeddedRegistry.get

    def lossy_get(self: EmbeddedRegistry, framework_id: str) -> FrameworkRecord | None:
        found = real_get(self, framework_id)
        return None if found is None else replace(found, triggers=found.triggers[:1])

    monkeypatch.setattr(EmbeddedRegistry, "get", lossy_get)
    result = phase(tmp_path).run(inputs(tmp_path))
    registered = result.checks[0]
    assert not registered.passed
    assert "reads back different triggers" in registered.reason
    assert not (tmp_path / "generated" / REGISTRY_YAML).exists()


@pytest.mark.parametrize(
    ("record", "others", "reason"),
    [
        (replace(RECORD, triggers=()), (), "declares no triggers"),
        # Five frameworks with the same trigger and smaller ids tie with it and fill the top five.
        (
            replace(RECORD, id="zz-last", triggers=("gap",)),
            tuple(
                FrameworkRecord(id=f"a{n}", name=f"A{n}", type="operator", triggers=("gap",))
                for n in range(5)
            ),
            "returned a0, a1, a2, a3, a4, not the framework",
        ),
    ],
)
def test_selection_must_rank_it_in_the_top_five(
    tmp_path: Path, record: FrameworkRecord, others: tuple[FrameworkRecord, ...], reason: str
) -> None:
    with EmbeddedRegistry(tmp_path / "registry.lbug") as registry:
        registry.register_many(others)
    result = phase(tmp_path).run(inputs(tmp_path, record))
    e2e = result.checks[1]
    assert not e2e.passed
    assert reason in e2e.reason
    assert [r.id for r in stored(tmp_path)] == [r.id for r in others]


def test_a_failed_probe_restores_the_previous_registration(tmp_path: Path) -> None:
    phase(tmp_path).run(inputs(tmp_path))
    before = yaml_text(tmp_path)
    changed = replace(RECORD, triggers=("other",))
    result = phase(tmp_path, Probe(False, "import failed: ImportError: boom")).run(
        inputs(tmp_path, changed)
    )
    assert [c.passed for c in result.checks] == [True, False]
    assert "end-to-end handoff failed: import failed: ImportError: boom" in result.checks[1].reason
    assert stored(tmp_path) == (RECORD,)
    assert yaml_text(tmp_path) == before


def test_a_failed_probe_leaves_a_new_framework_unregistered(tmp_path: Path) -> None:
    result = phase(tmp_path, Probe(False, "handoff failed: no")).run(inputs(tmp_path))
    assert not result.checks[1].passed
    assert stored(tmp_path) == ()
    assert not (tmp_path / "generated" / REGISTRY_YAML).exists()


OTHER = FrameworkRecord(
    id="other-skill",
    name="Other",
    type="role",
    triggers=("talk",),
    chains_to=(("demo-skill", 0.4),),
)


def journal_files(root: Path) -> list[Path]:
    return list(ProjectPaths(root).staging.glob("registry-register.*"))


def kill_after_the_database_write(root: Path, record: FrameworkRecord) -> None:
    """Register ``record`` in a child SIGKILLed once the database holds it (its group's
    transaction committed), before registry.yaml is written (where a killed batch leaves the
    database ahead of the file)."""
    pid = os.fork()
    if pid == 0:
        try:
            registration._registry_text = lambda *_: os.kill(os.getpid(), signal.SIGKILL)  # type: ignore[assignment,return-value]
            phase(root).run(inputs(root, record))
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status
    assert journal_files(root)


def test_a_registration_killed_after_the_database_write_is_undone_by_the_next(
    tmp_path: Path,
) -> None:
    phase(tmp_path).run(inputs(tmp_path))
    committed = yaml_text(tmp_path)
    changed = replace(RECORD, description="Changed before the kill.")
    kill_after_the_database_write(tmp_path, changed)
    assert changed in stored(tmp_path) and yaml_text(tmp_path) == committed
    # Without the journal the next build of any other skill would refuse the registry (R007).
    with pytest.warns(RoutingBodyWarning, match="demo-skill: no package beside it"):
        result = phase(tmp_path).run(inputs(tmp_path, OTHER))
    assert all(c.passed for c in result.checks), result.checks
    assert stored(tmp_path) == (RECORD, OTHER)
    assert yaml_text(tmp_path) == dump_registry_yaml([RECORD, OTHER])
    assert journal_files(tmp_path) == []


def test_a_killed_first_registration_leaves_the_framework_unregistered(tmp_path: Path) -> None:
    phase(tmp_path).run(inputs(tmp_path, OTHER))
    kill_after_the_database_write(tmp_path, RECORD)
    result = phase(tmp_path).run(inputs(tmp_path, OTHER))
    assert all(c.passed for c in result.checks), result.checks
    assert stored(tmp_path) == (OTHER,)
    assert yaml_text(tmp_path) == dump_registry_yaml([OTHER])
    assert journal_files(tmp_path) == []


def test_a_journal_file_killed_while_written_is_removed_by_the_next_registration(
    tmp_path: Path,
) -> None:
    # Killed inside atomic_write_text: its temporary file, never renamed into place, was
    # written before any database write. The kill suite found one left in staging/ for good.
    phase(tmp_path).run(inputs(tmp_path))
    pending = ProjectPaths(tmp_path).staging / "registry-register.pending"
    pending.mkdir(parents=True)
    torn = pending / ".registering.json.ab12cd34.tmp"
    torn.write_text('[{"framework": "demo-sk', encoding="utf-8")
    result = phase(tmp_path).run(inputs(tmp_path, OTHER))
    assert all(c.passed for c in result.checks), result.checks
    assert not torn.exists() and journal_files(tmp_path) == []


def install_package(root: Path, record: FrameworkRecord) -> Path:
    """A package folder the output holds for ``record`` (found by its spec.yaml's head)."""
    folder = root / "generated" / record.id.replace("-", "_")
    folder.mkdir(parents=True)
    (folder / "spec.yaml").write_text(f"# generated by mindrian\nid: {record.id}\n")
    return folder


def retire_journal(root: Path) -> list[str]:
    return sorted(p.name for p in ProjectPaths(root).staging.glob("registry-retire.*"))


def kill_retiring(root: Path, at: str) -> None:
    """Retire OTHER (its skill gone) in a child SIGKILLed ``at`` ``database`` (once the database
    lost it, before registry.yaml is written) or ``commit`` (just after the commit point)."""
    pid = os.fork()
    if pid == 0:
        try:
            if at == "database":
                unregister = EmbeddedRegistry.unregister

                def killed(registry: EmbeddedRegistry, framework_id: str) -> bool:
                    unregister(registry, framework_id)
                    os.kill(os.getpid(), signal.SIGKILL)
                    return True

                EmbeddedRegistry.unregister = killed  # type: ignore[method-assign]
            else:
                registration._Retiring._roll_forward = (  # type: ignore[method-assign]
                    lambda *_: os.kill(os.getpid(), signal.SIGKILL)
                )
            phase(root).retire(inputs(root).config, {RECORD.id})
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status


def test_a_retire_killed_after_the_database_write_is_undone_by_the_next_registration(
    tmp_path: Path,
) -> None:
    for record in (RECORD, OTHER):
        phase(tmp_path).run(inputs(tmp_path, record))
    package = install_package(tmp_path, OTHER)
    committed = yaml_text(tmp_path)
    kill_retiring(tmp_path, "database")
    # Without the retire's journal every later build would refuse the registry (R007).
    assert stored(tmp_path) == (RECORD,) and yaml_text(tmp_path) == committed
    assert retire_journal(tmp_path) == ["registry-retire.pending"]
    with pytest.warns(RoutingBodyWarning, match="other-skill"):
        result = phase(tmp_path).run(inputs(tmp_path, RECORD))
    assert all(c.passed for c in result.checks), result.checks
    assert stored(tmp_path) == (RECORD, OTHER) and yaml_text(tmp_path) == committed
    assert package.is_dir() and retire_journal(tmp_path) == []
    # The next build --all retires it whole.
    assert phase(tmp_path).retire(inputs(tmp_path).config, {RECORD.id}) == (OTHER.id,)
    assert stored(tmp_path) == (RECORD,) and yaml_text(tmp_path) == dump_registry_yaml([RECORD])
    assert not package.exists() and retire_journal(tmp_path) == []


def test_a_retire_killed_after_its_commit_point_is_finished_by_the_next_build(
    tmp_path: Path,
) -> None:
    for record in (RECORD, OTHER):
        phase(tmp_path).run(inputs(tmp_path, record))
    package = install_package(tmp_path, OTHER)
    kill_retiring(tmp_path, "commit")
    assert stored(tmp_path) == (RECORD,) and package.is_dir()
    assert retire_journal(tmp_path) == ["registry-retire.committed"]
    result = phase(tmp_path).run(inputs(tmp_path, RECORD))
    assert all(c.passed for c in result.checks), result.checks
    assert stored(tmp_path) == (RECORD,) and yaml_text(tmp_path) == dump_registry_yaml([RECORD])
    assert not package.exists() and retire_journal(tmp_path) == []
    assert list(ProjectPaths(tmp_path).staging.iterdir()) == []


def test_a_database_changed_behind_registry_yaml_is_still_refused(tmp_path: Path) -> None:
    # One phase object, as a batch uses: what its last registration wrote is not trusted
    # once the database's files changed.
    registering = phase(tmp_path)
    registering.run(inputs(tmp_path))
    with EmbeddedRegistry(tmp_path / "registry.lbug") as registry:
        registry.register(replace(RECORD, description="Written by something else."))
    with pytest.raises(RegistrationError) as raised:
        registering.run(inputs(tmp_path, OTHER))
    assert raised.value.code == "R007"


def test_a_registry_yaml_changed_behind_the_database_is_still_refused(tmp_path: Path) -> None:
    registering = phase(tmp_path)
    registering.run(inputs(tmp_path))
    write_registry_yaml([RECORD, OTHER], tmp_path / "generated" / REGISTRY_YAML)
    with pytest.raises(RegistrationError) as raised:
        registering.run(inputs(tmp_path, replace(RECORD, description="Changed.")))
    assert raised.value.code == "R007" and "lacks other-skill" in raised.value.message


class Reads:
    """Counts the whole-registry reads phase 7 makes: the database's export, registry.yaml's
    parse."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.exports = 0
        self.parses = 0
        real_export = EmbeddedRegistry.export
        real_parse = registration._committed_records

        def export(registry: EmbeddedRegistry) -> tuple[FrameworkRecord, ...]:
            self.exports += 1
            return real_export(registry)

        def parse(path: Path) -> dict[str, Any] | None:
            self.parses += 1
            return real_parse(path)

        monkeypatch.setattr(EmbeddedRegistry, "export", export)
        monkeypatch.setattr(registration, "_committed_records", parse)

    def counted(self) -> tuple[int, int]:
        found = (self.exports, self.parses)
        self.exports = self.parses = 0
        return found


def test_after_a_registration_the_next_reads_neither_file_and_writes_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = Reads(monkeypatch)
    phase(tmp_path).run(inputs(tmp_path, OTHER))
    assert reads.counted() == (1, 1)  # the first one has no seal to go by
    changed = replace(RECORD, description="Changed.", triggers=("gap",))
    for record in (RECORD, changed, OTHER):  # added, changed, unchanged
        result = phase(tmp_path).run(inputs(tmp_path, record))
        assert all(c.passed for c in result.checks), result.checks
        assert reads.counted() == (0, 0)
    assert yaml_text(tmp_path) == dump_registry_yaml([changed, OTHER])
    assert stored(tmp_path) == (changed, OTHER)


class Gets:
    """The frameworks phase 7 reads one by one from the database, in order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ids: list[str] = []
        real_get = EmbeddedRegistry.get

        def get(registry: EmbeddedRegistry, framework_id: str) -> FrameworkRecord | None:
            self.ids.append(framework_id)
            return real_get(registry, framework_id)

        monkeypatch.setattr(EmbeddedRegistry, "get", get)

    def taken(self) -> list[str]:
        found, self.ids = self.ids, []
        return found


def test_a_framework_registry_yaml_does_not_list_is_not_read_before_it_is_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under the seal the database holds what registry.yaml lists: a new framework has nothing to
    put back, so only its read-back reads it; one listed is read first, and put back."""
    phase(tmp_path).run(inputs(tmp_path, OTHER))
    gets = Gets(monkeypatch)
    failing = phase(tmp_path, Probe(False, "no")).run(inputs(tmp_path, RECORD))
    assert not failing.checks[1].passed
    assert gets.taken() == [RECORD.id]  # the read-back only
    assert stored(tmp_path) == (OTHER,)
    phase(tmp_path).run(inputs(tmp_path, RECORD))
    assert gets.taken() == [RECORD.id]
    changed = replace(RECORD, description="Changed.")
    phase(tmp_path, Probe(False, "no")).run(inputs(tmp_path, changed))
    assert gets.taken() == [RECORD.id, RECORD.id]  # what to put back, then the read-back
    assert stored(tmp_path) == (RECORD, OTHER)
    assert yaml_text(tmp_path) == dump_registry_yaml([RECORD, OTHER])


def test_a_failed_registration_leaves_the_seal_good_for_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = Reads(monkeypatch)
    phase(tmp_path).run(inputs(tmp_path, OTHER))
    phase(tmp_path, Probe(False, "no")).run(inputs(tmp_path, RECORD))
    reads.counted()
    phase(tmp_path).run(inputs(tmp_path, RECORD))
    assert reads.counted() == (0, 0)
    assert yaml_text(tmp_path) == dump_registry_yaml([RECORD, OTHER])


@pytest.mark.parametrize(
    "touch",
    [
        # The same bytes in a new file: only the file that was sealed is vouched for.
        lambda root: write_registry_yaml([OTHER], root / "generated" / REGISTRY_YAML),
        # A database another writer wrote to (the same record again) is read again.
        lambda root: reregistered(root, OTHER),
        lambda root: Path(f"{root / 'registry.lbug'}.written").write_text("{", encoding="utf-8"),
        lambda root: Path(f"{root / 'registry.lbug'}.written").unlink(),
    ],
)
def test_a_seal_that_no_longer_describes_both_files_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, touch: Any
) -> None:
    reads = Reads(monkeypatch)
    phase(tmp_path).run(inputs(tmp_path, OTHER))
    touch(tmp_path)
    reads.counted()
    phase(tmp_path).run(inputs(tmp_path, RECORD))
    assert reads.counted() == (1, 1)
    assert yaml_text(tmp_path) == dump_registry_yaml([RECORD, OTHER])


class Builds:
    """Counts the reads of every registered framework into trigger postings."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = TriggerIndex.build.__func__  # type: ignore[attr-defined]

        def build(cls: type[TriggerIndex], frameworks: Any) -> TriggerIndex:
            self.count += 1
            return real(cls, frameworks)  # type: ignore[no-any-return]

        monkeypatch.setattr(TriggerIndex, "build", classmethod(build))
        # This process's hold has left no postings yet (another test's are for another file).
        monkeypatch.setattr(registration, "_POSTINGS", {})


def selected_afresh(root: Path, triggers: tuple[str, ...]) -> tuple[str, ...]:
    """The ids the selection query returns, through a handle that never wrote."""
    with EmbeddedRegistry(root / "registry.lbug") as registry:
        return tuple(s.id for s in registry.select(triggers))


def test_the_next_registration_selects_from_the_postings_the_last_one_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds = Builds(monkeypatch)
    phase(tmp_path).run(inputs(tmp_path, OTHER))
    assert builds.count == 1
    changed = replace(RECORD, triggers=("gap", "talk"))
    for record in (RECORD, changed, OTHER):  # added, changed, unchanged: one hold each
        result = phase(tmp_path).run(inputs(tmp_path, record))
        assert all(c.passed for c in result.checks), result.checks
        want = selected_afresh(tmp_path, record.triggers)
        assert result.output.selection.returned == want
    assert want == ("demo-skill", "other-skill")  # a tie, broken by id
    assert builds.count == 1


def test_postings_of_a_registry_another_process_changed_are_not_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds = Builds(monkeypatch)
    phase(tmp_path).run(inputs(tmp_path, OTHER))
    ours = dict(registration._POSTINGS)
    # Another process (its own postings) registers a framework that RECORD's triggers select.
    monkeypatch.setattr(registration, "_POSTINGS", {})
    rival = FrameworkRecord(id="rival-skill", name="Rival", type="operator", triggers=("gap",))
    phase(tmp_path).run(inputs(tmp_path, rival))
    monkeypatch.setattr(registration, "_POSTINGS", ours)
    result = phase(tmp_path).run(inputs(tmp_path, RECORD))
    assert result.output.selection.returned == ("demo-skill", "rival-skill")
    assert builds.count == 3


def test_retiring_knows_the_ids_by_registry_yaml_bytes_and_seals_what_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = inputs(tmp_path).config
    for record in (RECORD, OTHER):
        phase(tmp_path).run(inputs(tmp_path, record))
    assert committed_ids(ProjectPaths(tmp_path)) == {RECORD.id, OTHER.id}  # as build --all asks
    # Which ids registry.yaml lists is the key file's answer alone, whatever the seal says.
    Path(f"{tmp_path / 'registry.lbug'}.written").unlink()
    reads = Reads(monkeypatch)

    def unparsed(data: bytes) -> None:
        raise AssertionError("registry.yaml was parsed for its ids")

    monkeypatch.setattr(output_folder, "_parsed_ids", unparsed)
    assert phase(tmp_path).retire(config, {RECORD.id, OTHER.id}) == ()
    assert reads.counted() == (0, 0)
    assert phase(tmp_path).retire(config, {RECORD.id}) == (OTHER.id,)
    assert yaml_text(tmp_path) == dump_registry_yaml([RECORD])
    reads.counted()
    phase(tmp_path).run(inputs(tmp_path, replace(RECORD, name="Renamed")))
    assert reads.counted() == (0, 0)
    assert yaml_text(tmp_path) == dump_registry_yaml([replace(RECORD, name="Renamed")])


def test_a_missing_database_is_rebuilt_from_registry_yaml_first(tmp_path: Path) -> None:
    other = FrameworkRecord(
        id="kept", name="Kept", type="role", triggers=("talk",), chains_to=(("demo-skill", 0.4),)
    )
    write_registry_yaml([other], tmp_path / "generated" / REGISTRY_YAML)
    assert not (tmp_path / "registry.lbug").exists()
    result = phase(tmp_path).run(inputs(tmp_path))
    assert all(c.passed for c in result.checks)
    assert stored(tmp_path) == (RECORD, other)
    assert yaml_text(tmp_path) == dump_registry_yaml([RECORD, other])
    assert not list(tmp_path.glob(".registry-build-*"))


def test_a_broken_registry_yaml_is_a_registration_error(tmp_path: Path) -> None:
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / REGISTRY_YAML).write_text("format: 99\n", encoding="utf-8")
    with pytest.raises(RegistrationError, match="cannot be read as a registry"):
        phase(tmp_path).run(inputs(tmp_path))
    with pytest.raises(RegistrationError, match="cannot be read as a registry"):
        phase(tmp_path).retire(inputs(tmp_path).config, set())


@pytest.mark.parametrize(
    ("config", "env"),
    [
        ({"neo4j_uri": "bolt://neo4j:hunter2@db.example:7687"}, {}),
        ({}, {"NEO4J_URI": "bolt://neo4j:hunter2@db.example:7687"}),
    ],
)
def test_a_neo4j_uri_selects_neo4j_and_never_leaks_the_password(
    tmp_path: Path, config: dict[str, str], env: dict[str, str]
) -> None:
    registration = phase(tmp_path, env=env)
    digest_part = registration.extra_digest(inputs(tmp_path, **config))
    assert digest_part["registry"].startswith("neo4j ")
    assert "hunter2" not in repr(digest_part)
    # Credentials in the URI are refused (a driver would echo them), never sent anywhere.
    with pytest.raises(RegistrationError, match="carries credentials") as caught:
        registration.run(inputs(tmp_path, **config))
    assert caught.value.code == "R010"
    assert "hunter2" not in caught.value.message
    assert not (tmp_path / "registry.lbug").exists()


def test_the_digest_follows_the_registry_and_output_folder(tmp_path: Path) -> None:
    base = phase(tmp_path).extra_digest(inputs(tmp_path))
    assert RegistrationPhase(tmp_path / "other.lbug").extra_digest(inputs(tmp_path)) != base
    assert phase(tmp_path).extra_digest(inputs(tmp_path, out_dir="elsewhere")) != base
    assert phase(tmp_path, env={}).extra_digest(inputs(tmp_path)) == base


# --- the end-to-end probe, for real, in a subprocess ---------------------------------------

PACKAGES = {
    "operator": """
        from mindrian.agents import OperatorAgent

        __all__ = ["ProbeMeAgent"]


        class ProbeMeAgent(OperatorAgent):
            agent_id = "probe-me"
            name = "Probe me"
            instructions = "Answer the task."
    """,
    "role": """
        from mindrian.agents import RoleAgent

        __all__ = ["ProbeMeAgent"]


        class ProbeMeAgent(RoleAgent):
            agent_id = "probe-me"
            name = "Probe me"
            instructions = "Ask what, who and success."
    """,
    "role with a required MCP server that cannot start": """
        from mindrian.agents import RoleAgent
        from mindrian.agents.mcp import mcp_toolkit

        __all__ = ["ProbeMeAgent"]
        SERVER = {"name": "nowhere", "command": "/nonexistent/mcp-server", "tools": ["lookup"]}


        class ProbeMeAgent(RoleAgent):
            agent_id = "probe-me"
            name = "Probe me"
            instructions = "Ask what, who and success."
            tools = (mcp_toolkit(SERVER),)
            mcp_servers = (SERVER,)
    """,
    "broken import": """
        raise ImportError("this package is broken on purpose")
    """,
    "no agent class": """
        __all__ = ["VALUE"]
        VALUE = 1
    """,
}


def make_package(out_dir: Path, body: str, identifier: str = "probe_me") -> Path:
    package = out_dir / identifier
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return package


@pytest.mark.parametrize(
    ("kind", "success", "summary"),
    [
        ("operator", True, "handoff e2e-probe -> probe-me succeeded (structured, 1 finding(s))"),
        ("role", True, "handoff e2e-probe -> probe-me succeeded (markdown, 0 finding(s))"),
        (
            "role with a required MCP server that cannot start",
            True,
            "succeeded (markdown, 0 finding(s)); MCP servers not started by the offline probe: "
            "nowhere",
        ),
        ("broken import", False, "import failed: ImportError: this package is broken on purpose"),
        ("no agent class", False, "must export exactly one agent class"),
    ],
)
def test_the_probe_imports_the_package_and_runs_one_handoff(
    tmp_path: Path, kind: str, success: bool, summary: str
) -> None:
    make_package(tmp_path, PACKAGES[kind])
    result = run_probe(tmp_path, "probe_me")
    assert result.success is success
    assert summary in result.summary


def test_a_package_that_fails_to_import_fails_e2e_passes(tmp_path: Path) -> None:
    make_package(tmp_path / "generated", PACKAGES["broken import"], "demo_skill")
    result = RegistrationPhase(tmp_path / "registry.lbug").run(inputs(tmp_path))
    e2e = result.checks[1]
    assert not e2e.passed
    assert "ImportError: this package is broken on purpose" in e2e.reason
    assert stored(tmp_path) == ()


# --- the probe server of batches: same verdicts, planned probes several to a process --------

PID_PACKAGE = """
    import os
    from pathlib import Path

    # One file per process: a second probe run in the same process would fail here.
    marker = Path(__file__).resolve().parent.parent / "pids" / str(os.getpid())
    marker.parent.mkdir(exist_ok=True)
    with marker.open("x") as handle:
        handle.write(__name__)

    from mindrian.agents import OperatorAgent

    __all__ = ["ProbeMeAgent"]


    class ProbeMeAgent(OperatorAgent):
        agent_id = "probe-me"
        name = "Probe me"
        instructions = "Answer the task."
"""


def test_warm_probes_give_run_probes_verdict_for_every_kind_of_package(tmp_path: Path) -> None:
    for index, kind in enumerate(PACKAGES):
        make_package(tmp_path, PACKAGES[kind], f"probe_{index}")
    asked = [(tmp_path, f"probe_{index}") for index in range(len(PACKAGES))]
    with WarmWorker() as worker:
        probes = WarmProbes(worker, at_once=2)
        probes.plan(asked)  # ahead of time, two at once, as a batch does
        served = [probes(*probe) for probe in asked]
    assert served == [run_probe(*probe) for probe in asked]
    assert [r.success for r in served] == [True, True, True, False, False]


def test_warm_probes_run_each_probe_in_a_process_of_its_own(tmp_path: Path) -> None:
    with WarmWorker() as worker:
        worker.start()  # before the packages exist, as in a build
        probes = WarmProbes(worker)
        for identifier in ("first", "second"):
            make_package(tmp_path, PID_PACKAGE, identifier)
            assert probes(tmp_path, identifier).success
        assert probes(tmp_path, "first").success
    probed = sorted(path.read_text() for path in (tmp_path / "pids").iterdir())
    assert probed == ["first", "first", "second"]


MARKED_PACKAGE = """
    import os
    from pathlib import Path

    # Marks the process that imports it; with LONER set, fails where another package was probed.
    marks = Path(__file__).resolve().parent.parent.parent / "marks"
    if LONER and list(marks.glob(f"{os.getpid()}-*")):
        raise ImportError("probed after another package in this process")
    (marks / f"{os.getpid()}-{__name__}").touch()

    from mindrian.agents import OperatorAgent

    __all__ = ["MarkedAgent"]


    class MarkedAgent(OperatorAgent):
        agent_id = "marked"
        name = "Marked"
        instructions = "Answer the task."
"""


def marked(folder: Path, identifier: str, *, loner: bool = False) -> tuple[Path, str]:
    make_package(folder, f"LONER = {loner}\n" + textwrap.dedent(MARKED_PACKAGE), identifier)
    return folder, identifier


def test_planned_probes_share_a_process_and_a_failure_there_is_judged_alone(
    tmp_path: Path,
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    asked = [
        marked(tmp_path / "one", "shares"),
        marked(tmp_path / "two", "also_shares"),  # another folder: its own on the import path
        marked(tmp_path / "one", "loner", loner=True),
    ]
    with WarmWorker() as worker:
        probes = WarmProbes(worker)
        probes.plan(asked)
        served = [probes(*probe) for probe in asked]
    by_process: dict[str, list[str]] = {}
    for mark in sorted(marks.iterdir()):
        pid, name = mark.name.split("-", 1)
        by_process.setdefault(pid, []).append(name)
    assert sorted(by_process.values()) == [["also_shares", "shares"], ["loner"]]
    assert served == [run_probe(*probe) for probe in asked]  # in new processes, marked alone
    assert all(result.success for result in served)


#: What a probe that answers may take once the hanging one has timed out after 5 s: a bound on a
#: hang, as a loaded machine may take seconds to start a probe (or the warm worker first).
_ANSWER_SECONDS = 120.0


def test_a_probe_asked_for_before_it_was_planned_brings_the_plan_up_to_date_first(
    tmp_path: Path,
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    ready = [marked(tmp_path / "one", name) for name in ("first", "second", "third")]
    with WarmWorker() as worker:
        probes = WarmProbes(worker)
        updates: list[int] = []

        def more() -> None:  # as a batch does: every package ready by now
            updates.append(len(ready))
            probes.plan(ready)

        probes.more = more
        served = [probes(*probe) for probe in ready]
    assert updates == [3]  # once, for the first: the others were planned then
    processes = {mark.name.split("-", 1)[0] for mark in marks.iterdir()}
    assert len(processes) == 1 and len(list(marks.iterdir())) == 3
    assert all(result.success for result in served)


def test_a_process_of_planned_probes_that_times_out_leaves_each_to_a_process_of_its_own(
    tmp_path: Path,
) -> None:
    make_package(tmp_path, PACKAGES["operator"], "answers")
    make_package(tmp_path, "import time\ntime.sleep(600)\n", "hangs")
    with WarmWorker() as worker:
        probes = WarmProbes(worker, timeout=5)
        probes.plan([(tmp_path, "answers"), (tmp_path, "hangs")])
        assert probes(tmp_path, "hangs") == ProbeResult(
            False, "the end-to-end probe timed out after 5 s"
        )
        probes.timeout = _ANSWER_SECONDS
        assert probes(tmp_path, "answers") == run_probe(tmp_path, "answers")


def test_a_probe_that_hangs_times_out_and_the_next_one_still_runs(tmp_path: Path) -> None:
    make_package(tmp_path, "import time\ntime.sleep(600)\n", "hangs")
    make_package(tmp_path, PACKAGES["operator"], "answers")
    with WarmWorker() as worker:
        probes = WarmProbes(worker, timeout=5)
        assert probes(tmp_path, "hangs") == ProbeResult(
            False, "the end-to-end probe timed out after 5 s"
        )
        probes.timeout = _ANSWER_SECONDS
        assert probes(tmp_path, "answers").success


def test_a_name_that_is_not_an_identifier_is_judged_as_run_probe_judges_it(tmp_path: Path) -> None:
    with WarmWorker() as worker:
        assert WarmProbes(worker)(tmp_path, "not-a-module") == run_probe(tmp_path, "not-a-module")


def test_with_services_keeps_the_registry_and_environment(tmp_path: Path) -> None:
    original = RegistrationPhase(
        tmp_path / "registry.lbug", env={"NEO4J_URI": "bolt://db.example:7687"}
    )
    probe = Probe()
    changed = original.with_services(Services(probe=probe))
    assert (changed.registry_path, changed.env, changed.probe) == (
        original.registry_path,
        original.env,
        probe,
    )
    assert changed.extra_digest(inputs(tmp_path)) == original.extra_digest(inputs(tmp_path))


def test_a_worker_that_dies_leaves_the_probe_to_a_fresh_process(tmp_path: Path) -> None:
    make_package(tmp_path, PACKAGES["operator"])
    with WarmWorker() as worker:
        worker.start()
        assert worker._process is not None
        os.killpg(worker._process.pid, signal.SIGKILL)
        result = WarmProbes(worker)(tmp_path, "probe_me")
    assert result == run_probe(tmp_path, "probe_me")
    assert result.success
