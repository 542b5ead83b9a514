"""mindrian.testing.served: a server in a subprocess, ready by the probe the caller names."""

from __future__ import annotations

from pathlib import Path

import pytest

from mindrian.testing.served import answers_health, listening, server_process

#: A server taking ``--port`` that accepts connections and never answers HTTP (as
#: ``mindrian mcp --http`` has no /health): ready when listening, never by /health.
_LISTENER = (
    "-c",
    "import socket, sys, time\n"
    "port = int(sys.argv[sys.argv.index('--port') + 1])\n"
    "server = socket.create_server(('127.0.0.1', port))\n"
    "time.sleep(600)\n",
)


def test_a_server_without_health_is_ready_once_it_listens(tmp_path: Path) -> None:
    with server_process(
        (), cwd=tmp_path, log=tmp_path / "log", program=_LISTENER, ready=listening
    ) as (
        url,
        process,
    ):
        assert listening(url) and process.poll() is None
        assert not answers_health(url)
    assert process.poll() is not None  # stopped at the end of the block


def test_a_program_that_exits_is_named_with_its_log(tmp_path: Path) -> None:
    program = ("-c", "import sys; print('no such thing'); sys.exit(3)")
    with (
        pytest.raises(
            RuntimeError, match=r"(?s)python -c import sys.* exited with 3:\nno such thing"
        ),
        server_process((), cwd=tmp_path, log=tmp_path / "log", program=program, ready=listening),
    ):
        pytest.fail("a server that exited was taken for ready")
