"""The C heap of a build that runs many threads.

glibc's ``malloc`` gives a thread that finds the arenas in use one of its own, up to eight per
core, and an arena keeps what its threads freed for them to use again. A batch runs its serial
phases in a thread per skill of a registration group (:mod:`builder.orchestration.serial_stage`,
one at a time, holding its baton), beside its pool's, sessions' and probes' threads: with an
arena each, the build's process kept the high-water mark of each, and a cold ``build --all``
of 150 synthesized skills peaked at 528 MiB (2 cores, loaded), 188 MiB with two arenas. The
threads take turns anyway, so sharing two arenas costs them nothing measurable.
"""

from __future__ import annotations

import sys

__all__ = ["SHARED_ARENAS", "share_arenas"]

#: Arenas the threads of a build share.
SHARED_ARENAS = 2
#: ``M_ARENA_MAX`` of glibc's <malloc.h>.
_M_ARENA_MAX = -8


def share_arenas(count: int = SHARED_ARENAS) -> None:
    """Let this process's threads share at most ``count`` malloc arenas (glibc on Linux;
    elsewhere nothing happens).

    It bounds the arenas made from now on (glibc fixes its bound once it has made eight),
    so it is called before a build starts its threads.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # only a build that starts threads pays for it

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # a C library without mallopt
        return
    mallopt(_M_ARENA_MAX, count)
