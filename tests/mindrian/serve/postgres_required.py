"""PostgreSQL tests skip on a machine without the server's binaries, but never in CI."""

from __future__ import annotations

import os

import pytest

from mindrian.testing.postgres import PostgresUnavailableError, find_postgres_bin


def require_postgres() -> None:
    """Skip the calling test without PostgreSQL binaries; fail instead when ``CI=true``."""
    try:
        find_postgres_bin()
    except PostgresUnavailableError as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the PostgreSQL test: {error}")
        pytest.skip(f"PostgreSQL test skipped: {error}")
