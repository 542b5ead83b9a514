"""Kill suite: SIGKILL ``mindrian build`` at random points; nothing is lost, leaked or left behind.

Two variants of one skill (A, B) are built once each for reference. Each trial
then starts a real ``python -m builder build`` of the other variant and kills
the builder (the parent alone, as an OOM killer or a closed terminal would) at
a random moment of its run. After each kill:

- no process the build started survives it (pytest, the probe server, a probe);
- once the interrupted transaction is recovered, as the next build does first,
  the package and ``registry.yaml`` are both variant A or both variant B, never
  a mix, and the registry database opens and holds every framework the yaml lists;
- at the end a normal build succeeds, leaves nothing under staging, and gives
  byte-identical output to the reference build.

A third kills the retire of ``build --all`` (the skills that are gone unregistered, registry.yaml
rewritten, their packages deleted) just before each of its file or database changes in turn:
the next ``build --all`` must succeed and leave what an uninterrupted retire leaves.

A second suite does the same to ``build --all`` of several skills, killed
while the batch registers them (phase 7: probes running ahead in the warm
worker, the registry, the packages and ``registry.yaml`` changing skill after
skill): every skill's package must match its own entry in ``registry.yaml``
(both of one variant), whatever the others are.

The batch suite runs twice: registering into the embedded file, and into the test Neo4j (the
registry's writer lock there is a server transaction, which the server must release when the
killed build's connection goes).

A last one kills a group registration of the batch's skills (one journal, their database
writes and installs, one registry.yaml) just before each of its changes in turn: the next
build's first steps leave each package beside its own registry.yaml entry, the database agrees
with registry.yaml, and the next ``build --all`` leaves what an uninterrupted one leaves.

``MINDRIAN_KILL_TRIALS`` sets the number of trials (default 20, what CI runs),
``MINDRIAN_KILL_BATCH_TRIALS`` those of the batch suite (default 6; 4 on Neo4j),
``MINDRIAN_KILL_GROUP_STEPS`` the changes before which a group registration is killed
(comma-separated numbers; default every one), and
``MINDRIAN_KILL_REPORT`` names a JSON file that receives the counts.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from builder.pipeline.transaction import PackageTransaction, output_lock
from mindrian.graph import EmbeddedRegistry, Neo4jRegistry, load_registry_yaml
from mindrian.project import ProjectPaths
from mindrian.testing.neo4j_server import Neo4jServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process checks read /proc"),
]

REPO = Path(__file__).resolve().parents[2]
TRIALS = int(os.environ.get("MINDRIAN_KILL_TRIALS", "20"))
BATCH_TRIALS = int(os.environ.get("MINDRIAN_KILL_BATCH_TRIALS", "6"))
#: The Neo4j variant's trials: each costs a build of its own, and CI runs both variants.
NEO4J_BATCH_TRIALS = int(os.environ.get("MINDRIAN_KILL_BATCH_TRIALS", "4"))
_NEO4J = ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE")
SEED = 20261123
PACKAGE = "pws_validation"
SKILL = Path("skills") / "pws" / "SKILL.md"


@dataclass
class Counts:
    """What the kill trials found; every field but ``trials`` must stay 0."""

    trials: int = 0
    crashes: int = 0
    hangs: int = 0
    leaks: int = 0
    inconsistent_states: int = 0


#: The skills of the batch suite (chained to each other, so relationships are written too).
BATCH_SKILLS = (
    SKILL,
    Path("skills") / "jtbd" / "SKILL.md",
    Path("skills") / "minto-pyramid" / "SKILL.md",
)


def variant_text(variant: str, skill: Path = SKILL) -> str:
    text = (REPO / skill).read_text(encoding="utf-8")
    if variant == "A":
        return text
    marked = text.replace("\ndescription: ", "\ndescription: Revised. ", 1)
    assert marked != text
    return marked


def make_project(root: Path) -> Path:
    (root / "skills" / "pws").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "k"\n\n[tool.mindrian]\n')
    (root / SKILL).write_text(variant_text("A"), encoding="utf-8")
    return root


def start_build(project: Path, variant: str) -> subprocess.Popen[bytes]:
    (project / SKILL).write_text(variant_text(variant), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "builder", "build", str(SKILL)],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def finish(build: subprocess.Popen[bytes], timeout: float = 600) -> int:
    _, err = build.communicate(timeout=timeout)
    assert build.returncode == 0, err.decode("utf-8", "replace")
    return build.returncode


def package_tree(project: Path) -> dict[str, bytes] | None:
    root = project / "generated" / PACKAGE
    if not root.is_dir():
        return None
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def registry_text(project: Path) -> str | None:
    path = project / "generated" / "registry.yaml"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def processes_of(project: Path) -> list[int]:
    """Live processes whose working folder or environment points into ``project``."""
    needle = str(project)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            stat = (entry / "stat").read_text()
            if stat.rsplit(") ", 1)[-1].startswith("Z"):
                continue  # a zombie is dead, only not yet reaped
            cwd = os.readlink(entry / "cwd")
            environ = (entry / "environ").read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        if cwd.startswith(needle) or needle in environ:
            found.append(int(entry.name))
    return found


def survivors(project: Path, grace: float = 60.0) -> list[int]:
    """The project's processes still alive after up to ``grace`` seconds: a bound on their dying
    (a loaded machine may take seconds to schedule a killed child's exit), not a speed."""
    deadline = time.monotonic() + grace
    while (alive := processes_of(project)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def consistent(project: Path, references: dict[str, tuple[dict[str, bytes], str]]) -> str:
    """Why the project's state after a kill (once recovered) is inconsistent, or ""."""
    paths = ProjectPaths(project)
    with output_lock(paths, lambda _: None):  # what the next build does first
        PackageTransaction(paths, PACKAGE).recover()
    package, exported = package_tree(project), registry_text(project)
    package_variant = next((v for v, (p, _) in references.items() if p == package), None)
    yaml_variant = next((v for v, (_, y) in references.items() if y == exported), None)
    if package_variant is None or yaml_variant is None:
        return (
            f"package is {package_variant or 'neither variant'}, yaml {yaml_variant or 'neither'}"
        )
    if package_variant != yaml_variant:
        return f"package of variant {package_variant} beside registry.yaml of {yaml_variant}"
    journal = sorted(
        p.name for p in ProjectPaths(project).staging.glob(f"{PACKAGE}.*") if "build-" not in p.name
    )
    if any(name.endswith((".previous", ".committed")) for name in journal):
        return f"recovery left {journal}"
    listed = {r.id for r in load_registry_yaml(project / "generated" / "registry.yaml")}
    with EmbeddedRegistry(ProjectPaths(project).embedded_registry, wait=30) as registry:
        held = {r.id for r in registry.export()}
    if not listed <= held:
        return f"the database lacks {sorted(listed - held)}"
    return ""


def test_kills_at_random_points_lose_leak_and_leave_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    references: dict[str, tuple[dict[str, bytes], str]] = {}
    durations = []
    for variant in ("B", "A"):
        began = time.monotonic()
        finish(start_build(project, variant))
        durations.append(time.monotonic() - began)
        tree, exported = package_tree(project), registry_text(project)
        assert tree is not None and exported is not None
        references[variant] = (tree, exported)
    assert references["A"][0] != references["B"][0] and references["A"][1] != references["B"][1]

    rng = random.Random(SEED)
    counts, problems = Counts(), []
    span = max(durations)
    for trial in range(TRIALS):
        counts.trials += 1
        build = start_build(project, "B" if trial % 2 == 0 else "A")
        time.sleep(rng.uniform(0.05, span))
        if build.poll() is None:
            build.send_signal(signal.SIGKILL)
        try:
            build.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            counts.hangs += 1
            build.kill()
            build.communicate()
        if build.returncode not in (0, -signal.SIGKILL):
            counts.crashes += 1
            problems.append(f"trial {trial}: exit {build.returncode}")
        leaked = survivors(project)
        if leaked:
            counts.leaks += 1
            problems.append(f"trial {trial}: processes {leaked} outlived the build")
            for pid in leaked:
                os.kill(pid, signal.SIGKILL)
        reason = consistent(project, references)
        if reason:
            counts.inconsistent_states += 1
            problems.append(f"trial {trial}: {reason}")

    final = "B" if TRIALS % 2 == 0 else "A"
    finish(start_build(project, final))
    assert (package_tree(project), registry_text(project)) == references[final]
    assert list(ProjectPaths(project).staging.iterdir()) == []
    assert survivors(project) == []

    report = os.environ.get("MINDRIAN_KILL_REPORT")
    if report:
        Path(report).write_text(json.dumps(asdict(counts), indent=2) + "\n", encoding="utf-8")
    assert (counts.crashes, counts.hangs, counts.leaks, counts.inconsistent_states) == (
        0,
        0,
        0,
        0,
    ), "\n".join([str(counts), *problems])
    shutil.rmtree(project, ignore_errors=True)


def start_batch(
    project: Path, variant: str, log: Path, server: Neo4jServer | None = None
) -> subprocess.Popen[bytes]:
    """``build --all`` of ``variant``, registering into ``server`` (else the embedded file)."""
    for skill in BATCH_SKILLS:
        (project / skill).write_text(variant_text(variant, skill), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in _NEO4J}
    env.update({"PYTHONPATH": str(REPO), **(server.env() if server else {})})
    with log.open("wb") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "builder", "build", "--all", "--jobs", "2"],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=subprocess.STDOUT,
        )


def batch_state(project: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every package's files by package, and every registry.yaml entry by framework id."""
    generated = project / "generated"
    packages = {
        folder.name: package_tree_at(folder)
        for folder in sorted(generated.iterdir())
        if folder.is_dir()
    }
    listed = generated / "registry.yaml"
    records = {r.id: r for r in load_registry_yaml(listed)} if listed.is_file() else {}
    return packages, records


def package_tree_at(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


#: A batch's state: files by package, registry.yaml entries by framework id.
BatchState = tuple[dict[str, Any], dict[str, Any]]


def held_ids(project: Path, server: Neo4jServer | None) -> set[str]:
    """The frameworks the registry the batch wrote into holds."""
    if server is None:
        with EmbeddedRegistry(ProjectPaths(project).embedded_registry, wait=30) as registry:
            return {r.id for r in registry.export()}
    with Neo4jRegistry(server.uri, server.user, server.password, read_only=True) as graph:
        return {r.id for r in graph.export()}


def batch_consistent(
    project: Path,
    references: dict[str, BatchState],
    owners: dict[str, str],
    server: Neo4jServer | None = None,
) -> str:
    """Why a killed batch left some skill's package and registry entry apart, or ""."""
    paths = ProjectPaths(project)
    with output_lock(paths, lambda _: None):  # what the next build does first
        for package in owners:
            PackageTransaction(paths, package).recover()
    packages, records = batch_state(project)
    problems = []
    for package, framework in sorted(owners.items()):
        of_package = [v for v, (p, _) in references.items() if packages.get(package) == p[package]]
        of_entry = [v for v, (_, r) in references.items() if records.get(framework) == r[framework]]
        new = package not in packages and framework not in records  # never built yet
        if not new and (of_package[:1] != of_entry[:1] or not of_package):
            problems.append(f"{package}: package {of_package or '-'}, entry {of_entry or '-'}")
    journal = [p.name for p in paths.staging.glob("*") if p.suffix in (".previous", ".committed")]
    if journal:
        problems.append(f"recovery left {sorted(journal)}")
    held = held_ids(project, server)
    if not set(records) <= held:
        problems.append(f"the database lacks {sorted(set(records) - held)}")
    return "; ".join(problems)


def framework_of(project: Path, package: str) -> str:
    """The framework id of a generated package, from its spec."""
    spec = (project / "generated" / package / "spec.yaml").read_text(encoding="utf-8")
    return str(yaml.safe_load(spec)["id"])


def wait_for_registration(build: subprocess.Popen[bytes], log: Path) -> None:
    """Return once ``build`` reports its first phase 7 (or has ended)."""
    deadline = time.monotonic() + 900
    while build.poll() is None and time.monotonic() < deadline:
        if b"registration" in log.read_bytes():
            break
        time.sleep(0.05)


def registration_seconds(build: subprocess.Popen[bytes], log: Path) -> float:
    """How long ``build`` ran after its first phase 7 report: the window the trials kill in."""
    wait_for_registration(build, log)
    started = time.monotonic()
    assert build.wait(timeout=900) == 0, log.read_text("utf-8", "replace")
    return time.monotonic() - started


def kill_while_registering(
    build: subprocess.Popen[bytes], log: Path, delay: float, counts: Counts
) -> str:
    """SIGKILL ``build`` ``delay`` seconds after it reports its first phase 7; what went wrong."""
    wait_for_registration(build, log)
    time.sleep(delay)
    if build.poll() is None:
        build.send_signal(signal.SIGKILL)
    try:
        build.wait(timeout=60)
    except subprocess.TimeoutExpired:
        counts.hangs += 1
        build.kill()
        build.wait()
        return " hang"
    if build.returncode not in (0, -signal.SIGKILL):
        counts.crashes += 1
        return f" exit {build.returncode}"
    return ""


@pytest.mark.parametrize("engine", ["embedded", "neo4j"])
def test_kills_during_a_batch_registration_leave_every_skill_consistent(
    tmp_path: Path, engine: str, request: pytest.FixtureRequest
) -> None:
    server: Neo4jServer | None = None
    trials = BATCH_TRIALS
    if engine == "neo4j":
        server, trials = request.getfixturevalue("neo4j_server"), NEO4J_BATCH_TRIALS
    project = make_project(tmp_path / "project")
    for skill in BATCH_SKILLS:
        (project / skill).parent.mkdir(parents=True, exist_ok=True)
    log = tmp_path / "build.log"
    references: dict[str, BatchState] = {}
    window = 0.0
    for variant in ("B", "A"):
        build = start_batch(project, variant, log, server)
        # The window of A's build, which changes every skill of a built batch as each trial
        # does: B's is the project's first build, whose end (its helpers stopped, every stamp
        # new) runs longer than any trial's, so kills drawn over it missed every trial at times.
        window = registration_seconds(build, log)
        references[variant] = batch_state(project)
    owners = {package: framework_of(project, package) for package in references["A"][0]}
    assert len(owners) == len(BATCH_SKILLS) and len(set(owners.values())) == len(BATCH_SKILLS)
    for package, framework in owners.items():
        assert references["A"][0][package] != references["B"][0][package]
        assert references["A"][1][framework] != references["B"][1][framework]

    rng = random.Random(SEED)
    counts, problems, killed = Counts(), [], 0
    trial = -1
    # Trials go on, up to twice as many, until one is killed before its batch finished.
    while (trial := trial + 1) < trials or (not killed and trial < 2 * trials):
        counts.trials += 1
        build = start_batch(project, "B" if trial % 2 == 0 else "A", log, server)
        # Delays drawn over the registration as the reference builds timed it, so the kills
        # land inside it however fast phase 7 becomes.
        problem = kill_while_registering(build, log, rng.uniform(0.0, window), counts)
        killed += build.returncode == -signal.SIGKILL
        if build.returncode == 0:
            # Done before its kill: this machine registers faster now than when the window was
            # timed (a loaded machine, or a server warmed up); the next kills draw from less.
            window /= 2
        leaked = survivors(project)
        if leaked:
            counts.leaks += 1
            problem += f" processes {leaked} outlived the build"
            for pid in leaked:
                os.kill(pid, signal.SIGKILL)
        if problem:
            problems.append(f"trial {trial}:{problem}")
        reason = batch_consistent(project, references, owners, server)
        if reason:
            counts.inconsistent_states += 1
            problems.append(f"trial {trial}: {reason}")

    assert killed, "no trial was killed before its batch finished: nothing was tested"
    final = "B" if counts.trials % 2 == 0 else "A"
    build = start_batch(project, final, log, server)
    assert build.wait(timeout=900) == 0, log.read_text("utf-8", "replace")
    assert batch_state(project) == references[final]
    assert held_ids(project, server) == set(references[final][1])
    assert list(ProjectPaths(project).staging.iterdir()) == []
    assert survivors(project) == []
    assert (counts.crashes, counts.hangs, counts.leaks, counts.inconsistent_states) == (
        0,
        0,
        0,
        0,
    ), "\n".join([str(counts), *problems])
    shutil.rmtree(project, ignore_errors=True)


#: The skills of the retire suite: the first is kept, the others are deleted and retired.
RETIRE_SKILLS = ("minto-pyramid", "jtbd", "lean-canvas")

#: The start of each kill script: every file change (a rename, replace, unlink, rmdir or rmtree)
#: and database register or unregister is counted once armed, and the process SIGKILLs itself
#: just before the ``MINDRIAN_KILL_AT``-th.
COUNT_CHANGES = """
import os, runpy, shutil, signal, sys
from mindrian.graph import EmbeddedRegistry

kill_at = int(os.environ["MINDRIAN_KILL_AT"])
state = {"armed": False, "inside": False, "steps": 0}

def counted(change):
    def step(*args, **kwargs):
        if state["armed"] and not state["inside"]:
            state["steps"] += 1
            if state["steps"] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
        state["inside"], outer = True, state["inside"]  # rmtree's own unlinks are one change
        try:
            return change(*args, **kwargs)
        finally:
            state["inside"] = outer
    return step

for owner, name in ((os, "rename"), (os, "replace"), (os, "unlink"), (os, "rmdir")):
    setattr(owner, name, counted(getattr(owner, name)))
shutil.rmtree = counted(shutil.rmtree)
EmbeddedRegistry.register = counted(EmbeddedRegistry.register)
EmbeddedRegistry.unregister = counted(EmbeddedRegistry.unregister)
"""


#: ``mindrian build --all``, SIGKILLed just before the retire's ``MINDRIAN_KILL_AT``-th change
#: (a rename, replace, unlink, rmdir or rmtree, a database register or unregister), counted
#: from the moment it starts retiring. What it changes is found where the changes happen,
#: so the trials cover every point of the retire whatever its code looks like.
KILL_RETIRE_AT = (
    COUNT_CHANGES
    + """
import builder.orchestration.batch as batch
retire = batch.retire_removed

def retiring(*args, **kwargs):
    state["armed"] = True
    return retire(*args, **kwargs)

batch.retire_removed = retiring
sys.argv = ["mindrian", "build", "--all"]
runpy.run_module("builder", run_name="__main__", alter_sys=True)
"""
)


def build_all(project: Path, kill_at: int = 0) -> subprocess.CompletedProcess[str]:
    """``build --all`` of ``project``; with ``kill_at``, killed at that change of its retire."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "MINDRIAN_KILL_AT": str(kill_at)}
    command = ["-c", KILL_RETIRE_AT] if kill_at else ["-m", "builder", "build", "--all"]
    return subprocess.run(
        [sys.executable, *command],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )


def output_state(project: Path) -> tuple[dict[str, Any], str, list[Any], list[str]]:
    """The packages' files, registry.yaml's text, the database's frameworks as registry.yaml
    would hold them, and what is left under staging."""
    paths = ProjectPaths(project)
    packages = {
        folder.name: package_tree_at(folder)
        for folder in sorted(paths.generated.iterdir())
        if folder.is_dir()
    }
    with EmbeddedRegistry(paths.embedded_registry, wait=30) as registry:
        held = [r.to_plain() for r in registry.export()]
    left = sorted(p.name for p in paths.staging.iterdir()) if paths.staging.is_dir() else []
    return packages, paths.registry_yaml.read_text(encoding="utf-8"), held, left


def test_a_retire_killed_before_any_of_its_changes_is_finished_by_the_next_build(
    tmp_path: Path,
) -> None:
    template = tmp_path / "template"
    (template / "skills").mkdir(parents=True)
    (template / "pyproject.toml").write_text('[project]\nname = "k"\n\n[tool.mindrian]\n')
    for name in RETIRE_SKILLS:
        shutil.copytree(REPO / "skills" / name, template / "skills" / name)
    done = build_all(template)
    assert done.returncode == 0, done.stderr
    for name in RETIRE_SKILLS[1:]:
        shutil.rmtree(template / "skills" / name)
    reference = tmp_path / "reference"
    shutil.copytree(template, reference, symlinks=True)
    done = build_all(reference)
    assert done.returncode == 0 and done.stderr.count("its skill is gone") == 2, done.stderr
    expected = output_state(reference)
    assert len(expected[0]) == 1 and expected[3] == []
    assert expected[2] == [
        r.to_plain() for r in load_registry_yaml(ProjectPaths(reference).registry_yaml)
    ]

    problems, step = [], 0
    while True:
        step += 1
        project = tmp_path / f"killed-{step}"
        shutil.copytree(template, project, symlinks=True)
        killed = build_all(project, kill_at=step)
        if killed.returncode == 0:  # the retire made fewer changes: every one was a kill point
            break
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert survivors(project) == []
        after = build_all(project)
        if after.returncode != 0:
            problems.append(f"killed before change {step}: the next build failed: {after.stderr}")
        elif output_state(project) != expected:
            problems.append(
                f"killed before change {step}: the next build left {output_state(project)}"
            )
        shutil.rmtree(project, ignore_errors=True)
    assert step > 3, f"the retire made only {step - 1} change(s): the kill points are not counted"
    assert not problems, "\n".join(problems)


#: ``mindrian build ARGS``, the batch's skills registered as one group (every skill's serial
#: phases submitted before any runs: the batch holds the turns' baton while it submits; the
#: writer lock held as long as it takes), and,
#: with ``MINDRIAN_KILL_AT`` = k, SIGKILLed just before the k-th file or database change of its
#: registration, counted from the moment its group's journal is begun (0: at that moment) to
#: the end of the group's hold. What it changes is found where the changes happen, so the
#: trials cover every point of a group's registration whatever its code looks like.
KILL_GROUP_AT = (
    COUNT_CHANGES
    + """
import builder.orchestration.serial_stage as stage
import builder.phases.registration as registration
import builder.pipeline.transaction as transaction

registration.REGISTRY_HOLD_SECONDS = 3600.0  # one group, however loaded the machine
begin = transaction.RegistrationGroup.begin
def arming(self, entries):
    assert len(entries) > 1, f"a group of {len(entries)}: nothing batched"
    state["armed"] = True
    if kill_at == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    return begin(self, entries)
transaction.RegistrationGroup.begin = arming

hold = registration.RegistrationPhase._hold
def holding(self, requests):
    try:
        return hold(self, requests)
    finally:
        state["armed"] = False
registration.RegistrationPhase._hold = holding

submit, aside = stage.SerialStage.submit, stage.SerialStage.aside
def submit_held(self, work):
    if self.turns is not None and not getattr(self, "held", False):
        self.turns.baton.acquire()
        self.held = True
    return submit(self, work)
def aside_released(self, work, wait=False):
    if wait and getattr(self, "held", False):
        self.held = False
        self.turns.baton.release()
    return aside(self, work, wait)
stage.SerialStage.submit, stage.SerialStage.aside = submit_held, aside_released

sys.argv = ["mindrian", *sys.argv[1:]]
runpy.run_module("builder", run_name="__main__", alter_sys=True)
"""
)


def mindrian(
    project: Path, *args: str, kill_at: int | None = None
) -> subprocess.CompletedProcess[str]:
    """``mindrian ARGS`` in ``project``; with ``kill_at``, through :data:`KILL_GROUP_AT`."""
    env = {k: v for k, v in os.environ.items() if k not in _NEO4J}
    env.update({"PYTHONPATH": str(REPO), "MINDRIAN_KILL_AT": str(kill_at or 0)})
    command = ["-c", KILL_GROUP_AT, *args] if kill_at is not None else ["-m", "builder", *args]
    return subprocess.run(
        [sys.executable, *command],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )


def first_steps_agree(
    project: Path, owners: dict[str, str], variants: dict[str, BatchState]
) -> str:
    """What the next build does before anything else (take the output lock, recover each
    package's transaction), then why a package and its registry.yaml entry are of two variants,
    or ""."""
    paths = ProjectPaths(project)
    with output_lock(paths, lambda _: None):
        for package in owners:
            PackageTransaction(paths, package).recover()
    packages, records = batch_state(project)
    problems = []
    for package, framework in sorted(owners.items()):
        of_package = [v for v, (p, _) in variants.items() if packages.get(package) == p[package]]
        of_entry = [v for v, (_, r) in variants.items() if records.get(framework) == r[framework]]
        if of_package[:1] != of_entry[:1] or not of_package:
            problems.append(f"{package}: package {of_package or '-'}, entry {of_entry or '-'}")
    return "; ".join(problems)


def test_a_batch_registration_killed_at_each_of_its_changes_is_recovered_by_the_next_build(
    tmp_path: Path,
) -> None:
    """Three skills registered as one group (journal, database writes, installs, registry.yaml,
    commit), killed just before each change in turn. Right after, the next build's first steps
    leave every package beside its own registry.yaml entry; a build of one skill of the group
    finds the database agreeing with registry.yaml for the others (R007 otherwise); then
    ``build --all`` leaves what an uninterrupted build leaves and ``check`` passes."""
    template = make_project(tmp_path / "template")
    for skill in BATCH_SKILLS:
        (template / skill).parent.mkdir(parents=True, exist_ok=True)
        (template / skill).write_text(variant_text("A", skill), encoding="utf-8")
    done = mindrian(template, "build", "--all")
    assert done.returncode == 0, done.stderr
    variants: dict[str, BatchState] = {"A": batch_state(template)}
    owners = {package: framework_of(template, package) for package in variants["A"][0]}
    for skill in BATCH_SKILLS:
        (template / skill).write_text(variant_text("B", skill), encoding="utf-8")
    reference = tmp_path / "reference"
    shutil.copytree(template, reference, symlinks=True)
    done = mindrian(reference, "build", "--all", kill_at=None)
    assert done.returncode == 0, done.stderr
    variants["B"] = batch_state(reference)
    expected = output_state(reference)
    assert expected[3] == [] and len(expected[0]) == len(BATCH_SKILLS)
    checked = mindrian(reference, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # Phases 1-6 of variant B done, their packages ready: each trial only registers.
    snapshot = tmp_path / "snapshot"
    shutil.copytree(template, snapshot, symlinks=True)
    killed = mindrian(snapshot, "build", "--all", kill_at=0)
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    problems, step, project = [], 0, None
    chosen = [int(s) for s in os.environ.get("MINDRIAN_KILL_GROUP_STEPS", "").split(",") if s]
    while not chosen or step < max(chosen):
        step += 1
        if chosen and step not in chosen:
            continue
        if project is not None:  # the last one stays, for ``check``
            shutil.rmtree(project, ignore_errors=True)
        project = tmp_path / f"killed-{step}"
        shutil.copytree(snapshot, project, symlinks=True)
        killed = mindrian(project, "build", "--all", kill_at=step)
        if killed.returncode == 0:  # the group made fewer changes: every one was a kill point
            break
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert survivors(project) == []
        where = f"killed before change {step}"
        disagree = first_steps_agree(project, owners, variants)
        if disagree:
            problems.append(f"{where}: after the next build's first steps, {disagree}")
        one = mindrian(project, "build", str(BATCH_SKILLS[0]))
        if one.returncode != 0:
            problems.append(f"{where}: a build of one skill failed: {one.stderr}")
        after = mindrian(project, "build", "--all")
        if after.returncode != 0:
            problems.append(f"{where}: the next build failed: {after.stderr}")
        elif output_state(project) != expected:
            problems.append(f"{where}: the next build left {output_state(project)}")
    assert chosen or step > 10, f"the group made only {step - 1} change(s): nothing is counted"
    assert not problems, "\n".join(problems)
    assert project is not None
    checked = mindrian(project, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def pool_workers(build: subprocess.Popen[bytes], wanted: int, timeout: float = 120.0) -> list[int]:
    """The pids of ``build``'s process-pool workers once ``wanted`` of them run (fewer if the
    build ends or ``timeout`` passes first): its children that lead a session of their own
    (a worker's first step) and were spawned by the pool or forked from the build (another
    copy of the build's command line; the warm worker runs another command)."""
    deadline, found = time.monotonic() + timeout, []
    # The build's command line as its argv, not read from /proc: a process just started may
    # show an empty one there (Popen returns once exec closed its descriptors, which is before
    # the kernel sets up the new program's arguments), and on a loaded machine it did.
    command = b"".join(os.fsencode(arg) + b"\0" for arg in build.args)
    while build.poll() is None and time.monotonic() < deadline:
        found = []
        for entry in Path("/proc").iterdir():
            with contextlib.suppress(OSError, ValueError):
                fields = (entry / "stat").read_text().rsplit(") ", 1)[-1].split()
                parent, session = int(fields[1]), int(fields[3])
                line = (entry / "cmdline").read_bytes()
                started = b"spawn_main" in line or line == command
                if parent == build.pid and session == int(entry.name) and started:
                    found.append(int(entry.name))
        if len(found) >= wanted:
            break
        time.sleep(0.05)
    return found


def test_a_killed_batch_takes_its_pool_workers_with_it(tmp_path: Path) -> None:
    """A worker of the batch's process pool ends with the batch, however the batch ends (a
    worker holds both ends of the pool's queue: it saw no end of work when the batch died)."""
    from bench.synth import synthesize

    project = tmp_path / "project"
    synthesize(project, 16, salt="pool")  # the fewest skills a batch starts two workers for
    build = subprocess.Popen(
        [sys.executable, "-m", "builder", "build", "--all", "--jobs", "2", "--quiet"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers = pool_workers(build, wanted=2)
    build.send_signal(signal.SIGKILL)
    build.wait(timeout=60)
    assert len(workers) == 2, "the batch started no pool of two: nothing was tested"
    assert not set(workers) & set(survivors(project))
