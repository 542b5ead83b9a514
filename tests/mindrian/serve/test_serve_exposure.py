"""``mindrian serve`` refuses to serve anonymously beyond loopback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from http_server import ROOT

from mindrian.model_choice import ModelChoice
from mindrian.project import ProjectPaths
from mindrian.serve import (
    AuthMode,
    ExposedWithoutAuthError,
    ServeConfig,
    auth_mode,
    check_exposure,
    is_loopback,
)
from mindrian.testing.served import free_port

_AUTH_VARIABLES = ("OS_SECURITY_KEY", "JWT_VERIFICATION_KEY", "JWT_JWKS_FILE")


def _config(host: str, *, insecure: bool = False) -> ServeConfig:
    return ServeConfig(ProjectPaths.locate(ROOT), ModelChoice(None), host=host, insecure=insecure)


def _serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``mindrian serve ARGS`` with no authentication in the environment, unless ``env`` adds it."""
    clean = {k: v for k, v in os.environ.items() if k not in _AUTH_VARIABLES}
    return subprocess.run(
        [sys.executable, "-m", "builder", "serve", *args],
        cwd=ROOT,
        env={**clean, "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow  # a mindrian process
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "example.org"])
def test_a_public_host_without_authentication_exits_1_before_listening(host: str) -> None:
    done = _serve("--host", host, "--port", "1")

    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"error[X006]: refusing to serve on {host!r} without auth")
    assert "OS_SECURITY_KEY" in done.stderr and "JWT_VERIFICATION_KEY" in done.stderr
    assert "Traceback" not in done.stderr
    assert "serving" not in done.stderr  # it never started


@pytest.mark.slow  # a mindrian process
def test_help_explains_authentication_and_insecure() -> None:
    done = _serve("--help")

    assert done.returncode == 0
    for word in ("--insecure", "OS_SECURITY_KEY", "JWT_VERIFICATION_KEY", "agent_os:admin"):
        assert word in done.stdout


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_needs_no_authentication(host: str) -> None:
    assert is_loopback(host)
    assert check_exposure(_config(host), {}) is None


@pytest.mark.parametrize(
    ("env", "mode"),
    [
        ({"OS_SECURITY_KEY": "k"}, AuthMode.SECURITY_KEY),
        ({"JWT_VERIFICATION_KEY": "pem"}, AuthMode.JWT),
        ({"JWT_JWKS_FILE": "/keys.json"}, AuthMode.JWT),
        ({"OS_SECURITY_KEY": "k", "JWT_JWKS_FILE": "/keys.json"}, AuthMode.JWT),
    ],
)
def test_any_authentication_allows_a_public_host(env: dict[str, str], mode: AuthMode) -> None:
    assert auth_mode(env) is mode
    assert check_exposure(_config("0.0.0.0"), env) is None


def test_empty_variables_are_no_authentication() -> None:
    env = {"OS_SECURITY_KEY": "", "JWT_VERIFICATION_KEY": ""}
    assert auth_mode(env) is AuthMode.NONE
    with pytest.raises(ExposedWithoutAuthError, match=r"refusing to serve on '0\.0\.0\.0'"):
        check_exposure(_config("0.0.0.0"), env)


def test_insecure_serves_anyway_with_a_warning() -> None:
    warning = check_exposure(_config("0.0.0.0", insecure=True), {})
    assert warning is not None
    assert warning.startswith("warning: serving on '0.0.0.0' WITHOUT authentication")


@pytest.mark.slow  # a mindrian process
def test_a_sqlite_database_that_cannot_be_opened_exits_1_before_listening(tmp_path) -> None:
    """Repro: Agno logged "unable to open database file" and its tracebacks, and the server
    answered every request while storing no session or run."""
    url = f"sqlite:///{tmp_path}/no/such/folder/sessions.db"
    done = _serve("--db", url, "--port", str(free_port()))

    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        f"error[X007]: cannot open the sessions database {url}: unable to open database file\n"
    )
