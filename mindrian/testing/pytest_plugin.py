"""Pytest plugin that makes any real model call or outbound connection fail the test.

Load it with ``pytest_plugins = ["mindrian.testing.pytest_plugin"]`` in the root
``conftest.py`` (or ``-p mindrian.testing.pytest_plugin``). For the whole session it

* wraps the four request methods every Agno model goes through
  (``Model._invoke_with_retry`` and its async/stream variants) and the
  ``invoke*`` methods of the provider classes once their modules are loaded
  (checked again before every test, because importing every provider SDK up
  front would cost about a second per process), so that any
  model other than :class:`~mindrian.testing.ScriptedModel` raises
  :class:`RealModelCallError` before a client is even built;
* refuses ``connect``/``connect_ex`` on internet sockets to non-loopback
  addresses with :class:`BlockedNetworkError`;
* turns off Agno telemetry (``AGNO_TELEMETRY=false``), which would otherwise
  phone home from every run.

Agno catches exceptions raised inside a run and reports them as an errored run,
so raising alone could go unnoticed. Every blocked attempt is therefore also
recorded, and a test during which one happened fails after its body returns.
Tests that check the blocking itself use the ``offline_guard`` fixture's
:meth:`OfflineGuard.expect_blocked` to claim the attempts they caused.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import ipaddress
import os
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from mindrian.errors import MindrianError

__all__ = [
    "BlockedNetworkError",
    "OfflineGuard",
    "RealModelCallError",
    "offline_guard",
]

#: Methods of ``agno.models.base.Model`` that every provider request passes through.
_MODEL_GATEWAYS: tuple[str, ...] = (
    "_invoke_with_retry",
    "_ainvoke_with_retry",
    "_invoke_stream_with_retry",
    "_ainvoke_stream_with_retry",
)

#: Provider-level request methods, patched too so a direct ``invoke`` is caught.
_PROVIDER_METHODS: tuple[str, ...] = (
    "invoke",
    "ainvoke",
    "invoke_stream",
    "ainvoke_stream",
)

#: (module, class) of provider models, patched once their module is loaded.
_PROVIDERS: tuple[tuple[str, str], ...] = (
    ("agno.models.anthropic", "Claude"),
    ("agno.models.openai", "OpenAIChat"),
    ("agno.models.openai", "OpenAIResponses"),
    ("agno.models.google", "Gemini"),
    ("agno.models.groq", "Groq"),
    ("agno.models.mistral", "MistralChat"),
    ("agno.models.ollama", "Ollama"),
    ("agno.models.aws", "AwsBedrock"),
)


class RealModelCallError(MindrianError, RuntimeError):
    """A test tried to call a real model provider."""


class BlockedNetworkError(MindrianError, ConnectionRefusedError):
    """A test tried to open a connection to a non-loopback address."""


def _is_loopback(host: Any) -> bool:
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


@dataclass
class OfflineGuard:
    """Installs the blocks and records every attempt they stopped."""

    violations: list[str] = field(default_factory=list)
    """Descriptions of blocked attempts not yet claimed by a test."""
    _undo: list[Callable[[], None]] = field(default_factory=list)
    _covered: set[type] = field(default_factory=set)

    def install(self) -> None:
        """Put every block in place (idempotent)."""
        if self._undo:
            return
        from agno.models.base import Model

        from mindrian.scripted import ScriptedModel

        for name in _MODEL_GATEWAYS:
            self._wrap_model_method(Model, name, ScriptedModel)
        for name in ("connect", "connect_ex"):
            self._wrap_socket_method(name)
        self.cover_loaded_providers()
        hook = _ProviderImportHook(self)
        sys.meta_path.insert(0, hook)
        self._undo.append(lambda: sys.meta_path.remove(hook))

    def cover_loaded_providers(self) -> None:
        """Wrap the ``invoke*`` methods of provider classes whose modules are loaded by now."""
        from mindrian.scripted import ScriptedModel

        for module_name, class_name in _PROVIDERS:
            provider = _loaded_class(module_name, class_name)
            if provider is None or provider in self._covered:
                continue
            self._covered.add(provider)
            self._undo.append(functools.partial(self._covered.discard, provider))
            for name in _PROVIDER_METHODS:
                if name in vars(provider):
                    self._wrap_model_method(provider, name, ScriptedModel)

    def uninstall(self) -> None:
        """Remove every block."""
        while self._undo:
            self._undo.pop()()

    def take(self) -> list[str]:
        """Return and forget the attempts recorded so far."""
        found, self.violations[:] = list(self.violations), []
        return found

    @contextmanager
    def expect_blocked(self) -> Iterator[list[str]]:
        """Run a block that must trip the guard; yields the attempts it caused."""
        before = len(self.violations)
        caught: list[str] = []
        try:
            yield caught
        finally:
            caught.extend(self.violations[before:])
            del self.violations[before:]
        if not caught:
            raise AssertionError("expected a real model call or network access to be blocked")

    def _record(self, what: str) -> None:
        self.violations.append(what)

    def _wrap_model_method(self, cls: type, name: str, allowed: type) -> None:
        original = vars(cls)[name]
        guard = self

        @functools.wraps(original)
        def blocked(model: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(model, allowed):
                return original(model, *args, **kwargs)
            what = (
                f"real model call: {type(model).__name__}(id={getattr(model, 'id', '?')!r}).{name}"
            )
            guard._record(what)
            raise RealModelCallError(f"{what} is not allowed in tests; inject a ScriptedModel")

        setattr(cls, name, blocked)
        self._undo.append(lambda: setattr(cls, name, original))

    def _wrap_socket_method(self, name: str) -> None:
        original = getattr(socket.socket, name)
        guard = self

        @functools.wraps(original)
        def blocked(sock: socket.socket, address: Any, *args: Any, **kwargs: Any) -> Any:
            internet = sock.family in (socket.AF_INET, socket.AF_INET6)
            if internet and not _is_loopback(address[0]):
                what = f"network connection to {address[0]}:{address[1]}"
                guard._record(what)
                raise BlockedNetworkError(f"{what} is not allowed in tests")
            return original(sock, address, *args, **kwargs)

        setattr(socket.socket, name, blocked)
        self._undo.append(lambda: setattr(socket.socket, name, original))


class _ProviderImportHook(importlib.abc.MetaPathFinder):
    """Covers a provider the moment its module is imported, wherever the import happens."""

    def __init__(self, guard: OfflineGuard) -> None:
        self._guard = guard
        self._modules = frozenset(module for module, _ in _PROVIDERS)

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self._modules:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _CoveringLoader(spec.loader, self._guard)
        return spec


class _CoveringLoader(importlib.abc.Loader):
    """Runs the real loader, then lets the guard wrap the provider classes it defined."""

    def __init__(self, loader: Any, guard: OfflineGuard) -> None:
        self._loader = loader
        self._guard = guard

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        self._guard.cover_loaded_providers()


def _loaded_class(module_name: str, class_name: str) -> type | None:
    module = sys.modules.get(module_name)
    found = getattr(module, class_name, None) if module is not None else None
    return found if isinstance(found, type) else None


_GUARD = OfflineGuard()


def pytest_configure(config: pytest.Config) -> None:
    os.environ["AGNO_TELEMETRY"] = "false"
    _GUARD.install()


def pytest_unconfigure(config: pytest.Config) -> None:
    _GUARD.uninstall()


def _fail_on_blocked_attempts() -> Iterator[None]:
    result = yield
    found = _GUARD.take()
    if found:
        pytest.fail(
            "blocked during the test (tests must stay offline): " + "; ".join(found),
            pytrace=False,
        )
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    _GUARD.take()  # attempts outside any test (e.g. at collection) are not its fault
    _GUARD.cover_loaded_providers()
    return (yield from _fail_on_blocked_attempts())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    _GUARD.cover_loaded_providers()  # fixtures may have imported a provider SDK
    return (yield from _fail_on_blocked_attempts())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    return (yield from _fail_on_blocked_attempts())


@pytest.fixture
def offline_guard() -> OfflineGuard:
    """The session's guard, for tests that check the blocking itself."""
    return _GUARD
