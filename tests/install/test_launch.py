"""The ``mindrian`` script without the ``build`` extra: one line naming what to install."""

from __future__ import annotations

import pytest

from builder import launch


def test_missing_compiler_dependencies_are_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = launch.find_spec
    monkeypatch.setattr(
        launch, "find_spec", lambda name: None if name in ("black", "copier") else real(name)
    )
    assert launch.main() == 2
    err = capsys.readouterr().err
    assert err == (
        "error[U040]: the mindrian command line needs the compiler's dependencies (missing: "
        "black, copier); install them with: pip install 'mindrian[build]'\n"
    )


def test_with_the_extra_it_is_the_command_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.argv", ["mindrian", "--version"])
    assert launch.main() == 0
    assert capsys.readouterr().out.startswith("mindrian ")
