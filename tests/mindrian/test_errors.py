"""Every public exception class of ``mindrian`` derives from ``MindrianError``.

A caller of ``mindrian.run`` or ``mindrian.serve`` catches one class to catch any
mindrian failure; this walks every module so that a new exception cannot forget it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import mindrian
from mindrian.errors import MindrianError

# Public exception classes that are deliberately not failures, with why.
_NOT_FAILURES = {
    # A handler raises Pause to stop a workflow at its node; the engine catches it and
    # returns a paused state. Under MindrianError, a handler's `except MindrianError`
    # around its own calls would swallow the pause and the run would go on.
    "mindrian.workflow.engine.Pause",
    # A served run's host tool calls wait for the client: the served agent catches it and
    # pauses the run. Under MindrianError, a caller's `except MindrianError` would report a
    # failure for a run that is only waiting.
    "mindrian.agents.base.ConfirmationNeeded",
}


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(mindrian.__path__, "mindrian."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_every_public_exception_derives_from_mindrian_error() -> None:
    classes = _exception_classes()
    strays = sorted(
        name
        for name, cls in classes.items()
        if not issubclass(cls, MindrianError) and name not in _NOT_FAILURES
    )
    assert strays == []
    # The walk found the runtime's exceptions at all (a broken walk would pass vacuously).
    assert "mindrian.packages.PackageError" in classes
    assert "mindrian.graph.errors.RegistryBusy" in classes


def test_exemptions_are_real_and_not_failures() -> None:
    classes = _exception_classes()
    for name in _NOT_FAILURES:
        assert name in classes, f"{name} no longer exists: drop its exemption"
        assert not issubclass(classes[name], MindrianError)


@pytest.mark.parametrize(
    ("name", "builtin"),
    [
        ("mindrian.packages.PackageError", LookupError),
        ("mindrian.project.ProjectNotFoundError", LookupError),
        ("mindrian.testing.prompts.PackageNotFoundError", LookupError),
        ("mindrian.graph.errors.GraphError", RuntimeError),
        ("mindrian.agents.errors.AgentRunError", RuntimeError),
        ("mindrian.workflow.model.WorkflowError", ValueError),
        ("mindrian.frames.FrameError", ValueError),
        ("mindrian.guards.CypherRejected", ValueError),
        ("mindrian.scripted.ScriptExhaustedError", AssertionError),
        ("mindrian.testing.pytest_plugin.BlockedNetworkError", ConnectionRefusedError),
    ],
)
def test_specific_builtin_bases_are_kept(name: str, builtin: type[BaseException]) -> None:
    # Callers catch these by their built-in base (e.g. `except LookupError`); the root is
    # added beside it, not instead of it.
    assert issubclass(_exception_classes()[name], builtin)


def test_root_is_exported_from_the_package() -> None:
    assert mindrian.MindrianError is MindrianError
    assert "MindrianError" in mindrian.__all__
