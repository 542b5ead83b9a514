"""Factories shared by the runtime tests: agent subclasses as a generator would write them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from mindrian.agents import MindrianAgent

T = TypeVar("T")
A = TypeVar("A", bound=MindrianAgent)


def _run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture
def run() -> Callable[[Coroutine[Any, Any, T]], T]:
    """Run a coroutine to completion (the suite has no asyncio plugin)."""
    return _run


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """A fresh, explicit state directory."""
    return tmp_path / "state"


@pytest.fixture
def agent_class() -> Callable[..., type[MindrianAgent]]:
    """Make a subclass of ``base`` with the class attributes a generated agent sets."""

    def make(base: type[A], agent_id: str = "test-agent", **attributes: Any) -> type[A]:
        namespace = {
            "agent_id": agent_id,
            "name": agent_id.replace("-", " ").title(),
            **attributes,
        }
        return type(f"Generated{base.__name__}", (base,), namespace)

    return make
