"""A build's threads share two malloc arenas rather than keeping one each."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="malloc arenas are glibc's"
)

#: Sixteen threads alive at once, each allocating from the C heap (ctypes lets go of the GIL
#: around the calls), then glibc's statistics: one "Arena N:" line per arena (on stderr).
_THREADS = """
import ctypes, sys, threading
if sys.argv[1] == "shared":
    from builder.pipeline.arenas import share_arenas
    share_arenas()
libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
together = threading.Barrier(16)
def work():
    together.wait()
    blocks = [libc.malloc(1024) for _ in range(200)]
    together.wait()
    for block in blocks:
        libc.free(block)
threads = [threading.Thread(target=work) for _ in range(16)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
libc.malloc_stats()
"""


def _arenas(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _THREADS, mode], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    if "Arena 0:" not in done.stderr:
        pytest.skip("not glibc: no malloc_stats")
    return sum(line.startswith("Arena ") for line in done.stderr.splitlines())


def test_threads_share_two_arenas() -> None:
    assert _arenas("own") > 2  # glibc's default: an arena per thread, up to eight a core
    assert _arenas("shared") <= 2
