"""An installed mindrian has no node_modules beside lint.mjs: it installs the linter into the
user's cache on first use, once, and says so; a failed install is a reason, not a crash."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from builder.graph import cypher_lint

_REAL_HERE = cypher_lint._HERE


def _fake_npm(folder: Path, exit_status: int) -> Path:
    """An ``npm`` that "installs" the package by writing its package.json (or fails)."""
    npm = folder / "npm"
    npm.write_text(
        "#!/bin/sh\n"
        "# npm ci --prefix DIR ...\n"
        f'[ {exit_status} -ne 0 ] && {{ echo "registry unreachable" >&2; exit {exit_status}; }}\n'
        'mkdir -p "$3/node_modules/@neo4j-cypher/language-support"\n'
        'echo "{}" > "$3/node_modules/@neo4j-cypher/language-support/package.json"\n',
        encoding="utf-8",
    )
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    return npm


@pytest.fixture
def installed_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The linter folder as a wheel ships it (no node_modules), with the cache in tmp_path."""
    shipped = tmp_path / "site-packages" / "cypher_lint"
    shipped.mkdir(parents=True)
    for name in ("lint.mjs", "package.json", "package-lock.json"):
        shutil.copyfile(_REAL_HERE / name, shipped / name)
    monkeypatch.setattr(cypher_lint, "_HERE", shipped)
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def _which(npm: Path | None) -> object:
    return lambda name: {"node": "/usr/bin/node", "npm": npm and str(npm)}.get(name)


def test_first_use_installs_into_the_cache_once(
    installed_copy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cypher_lint.shutil, "which", _which(_fake_npm(installed_copy, 0)))
    assert cypher_lint.unavailable_reason() is None
    home = installed_copy / "cache" / "cypher-lint-node" / cypher_lint.PACKAGE.rpartition("@")[2]
    assert cypher_lint._home() == home
    assert (home / "lint.mjs").read_bytes() == (_REAL_HERE / "lint.mjs").read_bytes()
    assert "installing Neo4j's Cypher linter" in capsys.readouterr().err
    # The second call finds it: no message, no scratch folders left behind.
    assert cypher_lint.unavailable_reason() is None
    assert capsys.readouterr().err == ""
    assert sorted(p.name for p in home.parent.iterdir()) == [home.name]


def test_a_failed_install_is_the_reason(
    installed_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cypher_lint.shutil, "which", _which(_fake_npm(installed_copy, 3)))
    reason = cypher_lint.unavailable_reason()
    assert reason is not None and "npm ci" in reason and "registry unreachable" in reason
    assert cypher_lint._home() is None
    with pytest.raises(cypher_lint.LinterUnavailable, match="registry unreachable"):
        cypher_lint.lint({"a": "RETURN 1"})


def test_no_cache_folder_means_no_install(
    installed_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cypher_lint.shutil, "which", _which(_fake_npm(installed_copy, 0)))
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", "")
    assert "MINDRIAN_CACHE_DIR is empty" in (cypher_lint.unavailable_reason() or "")
