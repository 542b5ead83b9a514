"""What a build lends its phases: how their children (generated tests, probes) run.

One object, chosen by whoever runs the phases (copier's ``Worker`` habit): the
batch puts in a warm worker or a shared pytest session, a test puts in its
doubles, and a phase reads it instead of being rebuilt with another runner.
A phase says what it does with it through its :class:`~builder.pipeline.contract.PhaseTraits`.
Nothing here changes a phase's output (only where its children run), except
:attr:`Services.tests`, which phase 6's digest records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the contract imports this module: it stays free of the test machinery
    from builder.pipeline.package_tests import TestRun
    from builder.pipeline.probe_result import ProbeResult
    from builder.pipeline.turns import Turns

__all__ = ["LONE", "ProbeRunner", "Services", "TestRunner"]


#: Runs the probe for package ``identifier`` installed under ``out_dir``.
ProbeRunner = Callable[[Path, str], "ProbeResult"]
#: Runs the tests of a package staged at ``folder / identifier``.
TestRunner = Callable[[Path, str], "TestRun"]


@dataclass(frozen=True)
class Services:
    """How the children of a build's phases run; every field has the default of a lone build."""

    tests: bool = True
    """Phase 6 runs the generated tests; False renders, compiles and installs only (``check``)."""
    package_tests: TestRunner | None = None
    """Runs a staged package's generated tests (a shared session's results, a warm worker's fork,
    a test's double); None: a fresh process for each package."""
    probe: ProbeRunner | None = None
    """Runs phase 7's end-to-end probe (a warm worker's, a test's double); None: a fresh process
    for each probe."""
    turns: Turns | None = None
    """Where a serial phase joins the other skills of its batch to do its shared step together
    (phase 7: one registry handle, one journal and one registry.yaml write for several skills);
    None: alone."""

    def filled(self, **defaults: Any) -> Services:
        """These services with each field that is still None set from ``defaults`` (a batch's
        warm worker or shared session never replaces a runner its caller chose)."""
        unset = {f.name for f in fields(self) if getattr(self, f.name) is None}
        return replace(self, **{k: v for k, v in defaults.items() if k in unset})


#: The services of a build on its own: every child a fresh process, tests run.
LONE = Services()
