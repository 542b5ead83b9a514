"""Running generated packages' tests: one package, or many in one pytest session.

Phase 6 tests a package alone (:func:`run_package_tests`); a batch tests every
package it builds in one session (:func:`run_session`) and hands each skill
its own :class:`TestRun`. Both runs load :mod:`builder.pipeline.pytest_outcomes`,
which writes every outcome the terminal reporter counted, and both turn that
into a result with the same code (:func:`attribute`): a package's summary line
(``17 passed, 4 skipped``, built the way pytest builds its own), its failing
node ids in collection order, and whether it passed. So a package gets the
same result in a session of its own and in a shared one; where that cannot be
promised, the shared session gives no result for it and the package is tested
alone (see :func:`attribute`).

Each child is offline (the guard plugin, no API keys in its environment), dies
with the builder (:mod:`builder.pipeline.children`), and runs packages staged
side by side in one folder, the rootdir: node ids are ``<package>/tests/...``
in every run, and ``<package>/tests/__init__.py`` keeps each package's test
modules and ``conftest.py`` apart.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.pipeline.pytest_outcomes import OPTION
from builder.pipeline.worker import ModuleRunner, run_module

__all__ = [
    "GUARD_PLUGIN",
    "PACKAGES_PER_WORKER",
    "TEST_TIMEOUT_SECONDS",
    "TestRun",
    "attribute",
    "run_package_tests",
    "run_session",
    "session_timeout",
    "tree_digest",
    "workers_for",
]

#: Upper bound for one package's test run.
TEST_TIMEOUT_SECONDS = 180.0
#: Added to :data:`TEST_TIMEOUT_SECONDS` per package of a shared session (a package's tests take
#: about a second once the runtime is imported).
SESSION_SECONDS_PER_PACKAGE = 15.0
#: The pytest plugin that makes any real model call fail the generated tests.
GUARD_PLUGIN = "mindrian.testing.pytest_plugin"
#: Packages per xdist worker before another worker pays off: a worker costs about 8 s of imports
#: (2-core machine, measured), a package's tests about 1 s.
PACKAGES_PER_WORKER = 16
_OUTCOMES_PLUGIN = "builder.pipeline.pytest_outcomes"
#: pytest's own plugins a generated test run does without (no test asks for their fixtures or
#: options).
_UNUSED_PLUGINS = (
    "logging",
    "junitxml",
    "pastebin",
    "legacypath",
    "stepwise",
    "doctest",
    "unittest",  # the contracts are no unittest.TestCase (the plugin imported unittest each run)
)
_OUTCOMES_FILE = "outcomes.json"
#: The run's ``--basetemp`` inside its folder (a dot folder: pytest does not collect it).
_BASETEMP = ".pytest-tmp"

_TIMING = re.compile(r"\s+in\s+[0-9.]+s(?:\s+\([0-9:]+\))?\s*$")
_FAILED = re.compile(r"^(?:FAILED|ERROR)\s+(\S+)")
#: pytest's summary categories in the order its summary line lists them (``_pytest.terminal``).
_KNOWN = (
    "failed",
    "passed",
    "skipped",
    "deselected",
    "xfailed",
    "xpassed",
    "warnings",
    "error",
    "subtests passed",
    "subtests failed",
    "subtests skipped",
)
#: pytest exit statuses after which every package's outcomes are complete.
_COMPLETE = (0, 1)


@dataclass(frozen=True)
class TestRun:
    """The outcome of running a generated package's tests."""

    __test__ = False  # a result type, not a pytest test class

    passed: bool
    """Every test passed (or was skipped) and at least one ran."""
    summary: str
    """pytest's final summary line for the package, timing removed."""
    failures: tuple[str, ...]
    """Node ids of failed or erroring tests, in collection order (failed ones first)."""
    output: str
    """The tail of pytest's output, for the check reason when nothing more precise is known."""


def workers_for(jobs: int, packages: int) -> int:
    """xdist workers for a session: one per :data:`PACKAGES_PER_WORKER` packages, at most ``jobs``;
    0 (no xdist) below two or when xdist is not installed."""
    workers = min(jobs, packages // PACKAGES_PER_WORKER)
    if workers < 2 or importlib.util.find_spec("xdist") is None:
        return 0
    return workers


def session_timeout(packages: int) -> float:
    """The time a session of ``packages`` packages may take before they are tested one by one."""
    return TEST_TIMEOUT_SECONDS + SESSION_SECONDS_PER_PACKAGE * max(0, packages - 1)


def tree_digest(package: Path) -> str:
    """sha256 of every file's relative path and bytes under ``package``, in path order (of
    their parts, as ``Path`` orders them), links to files read through, links to folders not
    entered, as ``sorted(package.rglob("*"))`` lists them."""
    digest = hashlib.sha256()
    for parts, path in sorted(_files(os.fspath(package), ())):
        with open(path, "rb") as handle:
            data = handle.read()
        digest.update("/".join(parts).encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def _files(folder: str, above: tuple[str, ...]) -> Iterable[tuple[tuple[str, ...], str]]:
    """The parts below the package (``above`` the folder's own) and the path of every file in
    ``folder`` and in the folders under it, links to files included, links to folders not
    entered.

    Strings and ``os.scandir``, whose entries know their kind, not ``rglob`` and Paths: a batch
    digests each package it tests twice in its own process (before its session, and before
    phase 7 takes the session's probe for its own), and Paths cost most of it."""
    try:
        with os.scandir(folder) as listing:
            entries = list(listing)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return
    for entry in entries:
        parts = (*above, entry.name)
        try:
            is_file = entry.is_file()
            entered = not is_file and entry.is_dir() and not entry.is_symlink()
        except OSError:
            continue
        if is_file:
            yield parts, entry.path
        elif entered:
            yield from _files(entry.path, parts)


def _arguments(folder: Path, paths: Sequence[Path], extra: Sequence[str]) -> list[str]:
    """pytest's arguments (after ``python -m pytest``)."""
    return [
        "-q",
        "-rfE",
        "-p",
        GUARD_PLUGIN,
        "-p",
        _OUTCOMES_PLUGIN,
        "-p",
        "no:cacheprovider",
        # pytest's plugins generated tests have no use for: each runs hooks for every test
        # (logging captures records at each step of each test; a twentieth of a session).
        *(arg for name in _UNUSED_PLUGINS for arg in ("-p", f"no:{name}")),
        "-c",
        str(folder / "pytest.ini"),
        "--rootdir",
        str(folder),
        # The run's own temporary folder, removed with it: pytest's default one is shared by the
        # user's every run, and pytest prunes its old runs first.
        "--basetemp",
        str(folder / _BASETEMP),
        "--color=no",
        # No assertion rewriting: the contract's asserts live in mindrian.testing, imported before
        # pytest can rewrite it, and the generated modules hold none, while rewriting them and
        # vetting every import of the run for it was a twelfth of a session's instructions.
        "--assert=plain",
        OPTION,
        str(folder / _OUTCOMES_FILE),
        *extra,
        *map(str, paths),
    ]


def _pytest(
    folder: Path,
    paths: Sequence[Path],
    extra: Sequence[str],
    timeout: float,
    runner: ModuleRunner = run_module,
) -> tuple[subprocess.CompletedProcess[str] | None, dict[str, Any] | None]:
    """Run the tests under ``paths`` with ``folder`` as the rootdir; the process (None when it
    timed out) and the outcomes file's data (None when it wrote none)."""
    ini, outcomes = folder / "pytest.ini", folder / _OUTCOMES_FILE
    ini.write_text("[pytest]\n", encoding="utf-8")
    arguments = _arguments(folder, paths, extra)
    try:
        done = runner("pytest", arguments, folder, (folder,), timeout)
        return done, _outcomes(outcomes)
    except subprocess.TimeoutExpired:
        return None, None
    finally:
        ini.unlink(missing_ok=True)
        outcomes.unlink(missing_ok=True)
        shutil.rmtree(folder / _BASETEMP, ignore_errors=True)


def _outcomes(path: Path) -> dict[str, Any] | None:
    """The outcomes file's data; None when pytest wrote none or was cut short writing it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def run_package_tests(
    folder: Path,
    identifier: str,
    timeout: float = TEST_TIMEOUT_SECONDS,
    runner: ModuleRunner = run_module,
) -> TestRun:
    """Run ``folder/identifier/tests`` with pytest in a child (through ``runner``: a fresh
    process, or a :class:`~builder.pipeline.worker.WarmWorker`), offline, with the guard
    plugin."""
    done, data = _pytest(folder, (folder / identifier / "tests",), (), timeout, runner)
    if done is None:
        return TestRun(False, f"timed out after {timeout:g} s", (), "")
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    tail = "\n".join(lines[-15:])
    found = attribute(data, (identifier,)).get(identifier) if data is not None else None
    if found is not None:
        return TestRun(found.passed, found.summary, found.failures, tail)
    # No outcome to attribute (a collection error, a crash, no tests): what pytest printed.
    failures = tuple(m.group(1) for line in lines if (m := _FAILED.match(line)))
    return TestRun(done.returncode == 0, _summary(lines), failures, tail)


def run_session(
    folder: Path,
    jobs: int,
    workers: int | None = None,
    runner: ModuleRunner = run_module,
    more: Sequence[str] = (),
) -> dict[str, tuple[str, TestRun]]:
    """The tests of every package staged in ``folder``, in one pytest session.

    ``workers`` xdist workers (default :func:`workers_for` ``jobs``; 0 runs
    without xdist); the session is a child started by ``runner`` (a fresh
    process, or a :class:`~builder.pipeline.worker.WarmWorker`); ``more``:
    further pytest arguments (a plugin of the caller's and its options). The result
    maps a package to the :func:`tree_digest` of what was tested and its
    :class:`TestRun`; a package missing from it has to be tested alone (the
    session timed out or crashed, or :func:`attribute` left it out).
    """
    identifiers = sorted(p.name for p in folder.iterdir() if p.is_dir())
    if not identifiers:
        return {}
    digests = {identifier: tree_digest(folder / identifier) for identifier in identifiers}
    extra = ["--continue-on-collection-errors", *more]  # one package's import error is its own
    if workers is None:
        workers = workers_for(jobs, len(identifiers))
    if workers:
        # A test file's tests stay in one worker, in order, as in a run of their own; xdist is
        # named because no plugin is loaded through entry points (offline_env).
        extra += ["-p", "xdist.plugin", "-n", str(workers), "--dist", "loadfile"]
    # The folder, not each package's tests: a conftest.py that fails to import is then that
    # package's collection error, not a usage error ending the whole session at start-up.
    _, data = _pytest(folder, (folder,), extra, session_timeout(len(identifiers)), runner)
    runs = attribute(data, identifiers) if data is not None else {}
    return {identifier: (digests[identifier], run) for identifier, run in runs.items()}


def attribute(data: Mapping[str, Any], identifiers: Sequence[str]) -> dict[str, TestRun]:
    """Each package's :class:`TestRun` from an outcomes file, as a run of it alone would give it.

    A report belongs to the package its node id starts with; a warning to the
    package its source line is in (an import-time warning from shared code is
    raised once per process, so in a shared session its package would depend
    on the order), and a warning raised while collecting is counted once,
    however many xdist workers collected. Left out, so that they are tested
    alone: every package when the session did not end normally or a report
    belongs to no package; a package with no test outcome or with a collection
    error (a run of its own stops at collection).
    """
    if data.get("exitstatus") not in _COMPLETE:
        return {}
    owned: dict[str, list[dict[str, Any]]] = {identifier: [] for identifier in identifiers}
    for report in _once(data.get("reports", ()), len(identifiers) > 1):
        owner = owned.get(_owner(report, identifiers))
        if owner is None:
            return {}
        owner.append(report)
    order = {nodeid: index for index, nodeid in enumerate(data.get("order", ()))}
    return {
        identifier: _run_of(own, order)
        for identifier, own in owned.items()
        if any(r["category"] != "warnings" for r in own) and not any(r["collect"] for r in own)
    }


def _owner(report: Mapping[str, Any], identifiers: Sequence[str]) -> str:
    """The package a report belongs to ("" for none); in a run of one package, every warning."""
    by_node = str(report["nodeid"]).split("/", 1)[0]
    if report["category"] != "warnings":
        return by_node
    if len(identifiers) == 1:
        return identifiers[0]
    by_place = str(report.get("path", "")).split("/", 1)[0]
    return by_place if by_node in ("", by_place) else ""


def _once(reports: Iterable[dict[str, Any]], shared: bool) -> list[dict[str, Any]]:
    """``reports`` with each warning raised while collecting (no node id) kept once."""
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for report in reports:
        if shared and report["category"] == "warnings" and not report["nodeid"]:
            key = (report.get("path"), report.get("line"), report.get("message"))
            if key in seen:
                continue
            seen.add(key)
        kept.append(report)
    return kept


def _run_of(reports: list[dict[str, Any]], order: Mapping[str, int]) -> TestRun:
    counts: dict[str, int] = {}
    for report in reports:
        if report["counts"]:
            counts[report["category"]] = counts.get(report["category"], 0) + 1
    categories = [*_KNOWN, *(c for c in counts if c not in _KNOWN)]
    summary = ", ".join(f"{counts[c]} {_noun(counts[c], c)}" for c in categories if c in counts)

    def failing(category: str) -> list[str]:
        nodeids = [str(r["nodeid"]) for r in reports if r["category"] == category]
        return sorted(nodeids, key=lambda nodeid: order.get(nodeid, -1))

    failures = (*failing("failed"), *failing("error"))
    return TestRun(not failures, summary or "no tests ran", failures, "")


def _noun(count: int, category: str) -> str:
    """pytest's ``pluralize``: only errors and warnings take a number."""
    if category not in ("error", "warnings"):
        return category
    singular = category.removesuffix("s")
    return singular if count == 1 else singular + "s"


def _summary(lines: list[str]) -> str:
    for line in reversed(lines):
        text = line.strip().strip("=").strip()
        if _TIMING.search(text):
            return _TIMING.sub("", text)
    return lines[-1].strip() if lines else "pytest printed nothing"
